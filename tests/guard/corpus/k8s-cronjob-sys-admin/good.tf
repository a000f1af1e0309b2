provider "kubernetes" {}

resource "kubernetes_cron_job_v1" "nightly_eval" {
  metadata {
    name      = "nightly-eval"
    namespace = "ml"
  }
  spec {
    schedule = "0 3 * * *"
    job_template {
      metadata {}
      spec {
        template {
          metadata {}
          spec {
            restart_policy = "Never"
              container {
                name  = "main"
                image = "nvcr.io/nvidia/pytorch:25.01-py3"
                security_context {
                  capabilities {
                    add = ["NET_BIND_SERVICE"]
                  }
                }
              }
          }
        }
      }
    }
  }
}
