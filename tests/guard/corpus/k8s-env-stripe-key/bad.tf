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
            name  = "STRIPE_API_KEY"
            value = "sk_live_51Hx9KqL2mN4pR7sT1vW3yB5"
          }
        }
      }
    }
  }
}
