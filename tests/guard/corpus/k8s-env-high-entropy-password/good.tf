resource "kubernetes_deployment_v1" "feature_api" {
  metadata {
    name      = "feature-api"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "feature-api" }
    }
    template {
      metadata {
        labels = { app = "feature-api" }
      }
      spec {
        container {
          name  = "main"
          image = "registry.example.com/ml/feature-api:1.0"
          env {
            name = "DB_PASSWORD"
            value_from {
              secret_key_ref {
                name = "app-secrets"
                key  = "db_password"
              }
            }
          }
        }
      }
    }
  }
}
