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
        labels      = { app = "tokenizer" }
        annotations = { "container.apparmor.security.beta.kubernetes.io/main" = "unconfined" }
      }
      spec {
        container {
          name  = "main"
          image = "registry.example.com/ml/tokenizer:1.0"
        }
      }
    }
  }
}
