provider "kubernetes" {}

resource "kubernetes_deployment_v1" "dataset_sync" {
  metadata {
    name      = "dataset-sync"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "dataset-sync" }
    }
    template {
      metadata {
        labels = { app = "dataset-sync" }
      }
      spec {
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3"
        }
        volume {
          name = "host"
          empty_dir {}
        }
      }
    }
  }
}
