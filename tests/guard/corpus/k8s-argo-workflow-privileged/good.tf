resource "kubernetes_manifest" "nightly_etl" {
  manifest = {
    apiVersion = "argoproj.io/v1alpha1"
    kind       = "Workflow"
    metadata   = { name = "nightly-etl", namespace = "ml" }
    spec       = { "entrypoint" = "etl", "templates" = [{ "name" = "etl", "container" = { "image" = "registry.example.com/ml/etl:2.1", "command" = ["etl"]}}]}
  }
}
