resource "kubernetes_config_map_v1" "npmrc" {
  metadata {
    name      = "npmrc"
    namespace = "ml"
  }
  data = {
    "npmrc" = "registry=https://registry.npmjs.org/\n"
  }
}
