resource "kubernetes_manifest" "profile_run" {
  manifest = {
    apiVersion = "argoproj.io/v1alpha1"
    kind       = "Workflow"
    metadata   = { name = "profile-run", namespace = "ml" }
    spec       = { "entrypoint" = "prof", "templates" = [{ "name" = "prof", "script" = { "image" = "registry.example.com/ml/etl:2.1", "source" = "python profile.py" }}]}
  }
}
