"""The good twin: the value comes from a Secret."""

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
                        "env": [
                            {
                                "name": "DB_PASSWORD",
                                "valueFrom": {"secretKeyRef": {"name": "app-secrets", "key": "db_password"}},
                            }
                        ],
                    }
                ]
            },
        },
    },
)
