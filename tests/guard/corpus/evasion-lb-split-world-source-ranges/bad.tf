provider "kubernetes" {}

resource "kubernetes_service_v1" "triton_edge" {
  metadata {
    name      = "triton-edge"
    namespace = "ml"
    annotations = {
      "service.beta.kubernetes.io/aws-load-balancer-type"   = "external"
      "service.beta.kubernetes.io/aws-load-balancer-scheme" = "internet-facing"
    }
  }
  spec {
    type     = "LoadBalancer"
    selector = { app = "triton" }
    load_balancer_source_ranges = ["0.0.0.0/1", "128.0.0.0/1"]
    port {
      port        = 443
      target_port = 8000
    }
  }
}
