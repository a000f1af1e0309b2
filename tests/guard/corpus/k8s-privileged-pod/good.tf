provider "kubernetes" {}

resource "kubernetes_pod_v1" "gpu_debug" {
  metadata {
    name      = "gpu-debug"
    namespace = "ml"
  }
  spec {
    container {
      name  = "main"
      image = "nvcr.io/nvidia/pytorch:25.01-py3"
    }
  }
}
