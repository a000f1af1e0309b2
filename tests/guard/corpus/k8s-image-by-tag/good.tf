provider "kubernetes" {}

resource "kubernetes_deployment_v1" "trainer" {
  metadata {
    name      = "trainer"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "trainer" }
    }
    template {
      metadata {
        labels = { app = "trainer" }
      }
      spec {
        init_container {
          name  = "fetch"
          image = "public.ecr.aws/docker/library/busybox@sha256:caf6a21ff6fa1df23795612f6d8129044c6f65a2c9678ed15016513b832549f8"
        }
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3@sha256:caf6a21ff6fa1df23795612f6d8129044c6f65a2c9678ed15016513b832549f8"
        }
      }
    }
  }
}
