"""The same list without host access."""

import pulumi_kubernetes as k8s

k8s.apps.v1.DaemonSetList(
    "node-agents",
    items=[
        {
            "metadata": {"name": "node-probe", "namespace": "ops"},
            "spec": {
                "selector": {"matchLabels": {"app": "node-probe"}},
                "template": {
                    "metadata": {"labels": {"app": "node-probe"}},
                    "spec": {"containers": [{"name": "probe", "image": "registry.example.com/ops/probe:1.0"}]},
                },
            },
        }
    ],
)
