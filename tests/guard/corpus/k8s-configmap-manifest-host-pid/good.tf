resource "kubernetes_config_map_v1" "debug_manifests" {
  metadata {
    name      = "debug-manifests"
    namespace = "ops"
  }
  data = {
    "pod.yaml" = file("${path.module}/pod.yaml")
  }
}
