resource "kubernetes_config_map_v1" "git_sync" {
  metadata {
    name      = "git-sync"
    namespace = "ml"
  }
  data = {
    "known_hosts" = file("${path.module}/known_hosts")
  }
}
