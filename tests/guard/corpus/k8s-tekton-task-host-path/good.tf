resource "kubernetes_manifest" "image_build" {
  manifest = {
    apiVersion = "tekton.dev/v1"
    kind       = "Task"
    metadata   = { name = "image-build", namespace = "ml" }
    spec       = { "steps" = [{ "name" = "build", "image" = "registry.example.com/ci/kaniko:1.23", "volumeMounts" = [{ "name" = "ws", "mountPath" = "/workspace" }]}], "volumes" = [{ "name" = "ws", "emptyDir" = {}}]}
  }
}
