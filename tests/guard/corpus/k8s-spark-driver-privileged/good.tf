resource "kubernetes_manifest" "feature_backfill" {
  manifest = {
    apiVersion = "sparkoperator.k8s.io/v1beta2"
    kind       = "SparkApplication"
    metadata   = { name = "feature-backfill", namespace = "ml" }
    spec       = { "type" = "Python", "mode" = "cluster", "image" = "registry.example.com/ml/spark:3.5", "mainApplicationFile" = "local:///app/job.py", "driver" = { "cores" = 1}, "executor" = { "cores" = 4, "instances" = 8}}
  }
}
