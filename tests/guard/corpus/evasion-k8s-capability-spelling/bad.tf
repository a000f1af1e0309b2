provider "kubernetes" {}

resource "kubernetes_deployment_v1" "tokenizer" {
  metadata {
    name      = "tokenizer"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "tokenizer" }
    }
    template {
      metadata {
        labels = { app = "tokenizer" }
      }
      spec {
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3"
          security_context {
            capabilities {
              add = ["cap_sys_admin"]
            }
          }
        }
      }
    }
  }
}
