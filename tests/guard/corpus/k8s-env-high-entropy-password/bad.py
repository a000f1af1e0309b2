"""Deployment env DB_PASSWORD with a high-entropy literal (no known token format: a warning)."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "feature-api",
    metadata={"name": "feature-api", "namespace": "ml"},
    spec={
        "selector": {"matchLabels": {"app": "feature-api"}},
        "template": {
            "metadata": {"labels": {"app": "feature-api"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example.com/ml/feature-api:1.0",
                        "env": [{"name": "DB_PASSWORD", "value": "Zx9kQ2mP7vL4nR8sT1wY"}],
                    }
                ]
            },
        },
    },
)
