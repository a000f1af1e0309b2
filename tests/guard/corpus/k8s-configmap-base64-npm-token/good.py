"""The registry URL only; the token is mounted from a Secret."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "npmrc",
    metadata={"name": "npmrc", "namespace": "ml"},
    data={"npmrc": "registry=https://registry.npmjs.org/\n"},
)
