"""The good twin: the role goes to the scraper's service account."""

import pulumi_kubernetes as k8s

k8s.rbac.v1.ClusterRoleBinding(
    "metrics-readers",
    metadata={"name": "metrics-readers"},
    role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    subjects=[{"kind": "ServiceAccount", "name": "scraper", "namespace": "monitoring"}],
)
