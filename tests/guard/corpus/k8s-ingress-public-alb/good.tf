provider "kubernetes" {}

resource "kubernetes_ingress_v1" "notebooks" {
  metadata {
    name      = "notebooks"
    namespace = "ml"
    annotations = {
      "alb.ingress.kubernetes.io/scheme" = "internet-facing"
      "alb.ingress.kubernetes.io/inbound-cidrs" = "203.0.113.0/24"
    }
  }
  spec {
    ingress_class_name = "alb"
    rule {
      host = "notebooks.example.com"
      http {
        path {
          path      = "/"
          path_type = "Prefix"
          backend {
            service {
              name = "jupyter"
              port {
                number = 80
              }
            }
          }
        }
      }
    }
  }
}
