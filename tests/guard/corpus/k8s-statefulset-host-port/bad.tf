provider "kubernetes" {}

resource "kubernetes_stateful_set_v1" "triton" {
  metadata {
    name      = "triton"
    namespace = "ml"
  }
  spec {
    service_name = "triton"
    selector {
      match_labels = { app = "triton" }
    }
    template {
      metadata {
        labels = { app = "triton" }
      }
      spec {
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3"
          port {
            container_port = 8000
            host_port      = 8000
          }
        }
      }
    }
  }
}
