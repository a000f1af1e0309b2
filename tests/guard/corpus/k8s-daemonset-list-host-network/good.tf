resource "kubernetes_manifest" "node_agents" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "DaemonSetList"
    items = [{
      metadata = { name = "node-probe", namespace = "ops" }
      spec = {
        selector = { matchLabels = { app = "node-probe" } }
        template = {
          metadata = { labels = { app = "node-probe" } }
          spec = { containers = [{ name = "probe", image = "registry.example.com/ops/probe:1.0" }] }
        }
      }
    }]
  }
}
