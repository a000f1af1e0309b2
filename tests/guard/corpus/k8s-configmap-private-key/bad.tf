resource "kubernetes_config_map_v1" "git_sync" {
  metadata {
    name      = "git-sync"
    namespace = "ml"
  }
  data = {
    "id_ed25519" = file("${path.module}/id_ed25519")
  }
}
