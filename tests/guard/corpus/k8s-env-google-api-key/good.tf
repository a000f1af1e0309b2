resource "kubernetes_deployment_v1" "geo_enrich" {
  metadata {
    name      = "geo-enrich"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "geo-enrich" }
    }
    template {
      metadata {
        labels = { app = "geo-enrich" }
      }
      spec {
        container {
          name  = "main"
          image = "registry.example.com/ml/geo-enrich:1.0"
          env {
            name = "MAPS_KEY"
            value_from {
              secret_key_ref {
                name = "app-secrets"
                key  = "maps_key"
              }
            }
          }
        }
      }
    }
  }
}
