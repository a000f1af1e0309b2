provider "kubernetes" {}

resource "kubernetes_daemon_set_v1" "gpu_probe" {
  metadata {
    name      = "gpu-probe"
    namespace = "ml"
  }
  spec {
    selector {
      match_labels = { app = "gpu-probe" }
    }
    template {
      metadata {
        labels = { app = "gpu-probe" }
      }
      spec {
      host_network = true
      host_pid     = true
        container {
          name  = "main"
          image = "nvcr.io/nvidia/pytorch:25.01-py3"
        }
      }
    }
  }
}
