provider "kubernetes" {}

resource "kubernetes_service_v1" "triton_public" {
  metadata {
    name      = "triton-public"
    namespace = "ml"
    annotations = {
      "service.beta.kubernetes.io/aws-load-balancer-type"   = "external"
      "service.beta.kubernetes.io/aws-load-balancer-scheme" = "internet-facing"
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
