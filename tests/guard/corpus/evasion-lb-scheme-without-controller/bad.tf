provider "kubernetes" {}

resource "kubernetes_service_v1" "triton_internal" {
  metadata {
    name      = "triton-internal"
    namespace = "ml"
    annotations = {
      "service.beta.kubernetes.io/aws-load-balancer-scheme" = "internal"
    }
  }
  spec {
    type     = "LoadBalancer"
    selector = { app = "triton" }
    port {
      port        = 443
      target_port = 8000
    }
  }
}
