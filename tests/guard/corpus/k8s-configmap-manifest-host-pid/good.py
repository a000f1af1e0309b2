"""The manifest without host access."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "debug-manifests",
    metadata={"name": "debug-manifests", "namespace": "ops"},
    data={
        "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug\n  namespace: ml\nspec:\n  containers:\n  - name: shell\n    image: registry.example.com/ops/toolbox:1.0\n"  # noqa: E501
    },
)
