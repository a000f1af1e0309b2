"""Every request without credentials may read the cluster's objects (the built-in view ClusterRole)."""

import pulumi_kubernetes as k8s

k8s.rbac.v1.ClusterRoleBinding(
    "metrics-readers",
    metadata={"name": "metrics-readers"},
    role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    subjects=[{"kind": "Group", "name": "system:unauthenticated", "api_group": "rbac.authorization.k8s.io"}],
)
