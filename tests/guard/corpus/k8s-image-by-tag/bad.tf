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
          image = "public.ecr.aws/docker/library/busybox"
        }
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3"
        }
      }
    }
  }
}
