resource "kubernetes_deployment_v1" "billing_api" {
  metadata {
    name      = "billing-api"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "billing-api" }
    }
    template {
      metadata {
        labels = { app = "billing-api" }
      }
      spec {
        container {
          name  = "main"
          image = "registry.example.com/ml/billing-api:1.0"
          env {
            name = "STRIPE_API_KEY"
            value_from {
              secret_key_ref {
                name = "app-secrets"
                key  = "stripe_api_key"
              }
            }
          }
        }
      }
    }
  }
}
