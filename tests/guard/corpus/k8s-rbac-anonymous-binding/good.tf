resource "kubernetes_cluster_role_binding_v1" "metrics_readers" {
  metadata {
    name = "metrics-readers"
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = "view"
  }
  subject {
    kind      = "ServiceAccount"
    name      = "scraper"
    namespace = "monitoring"
  }
}
