"""The good twin: the value comes from a Secret."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "billing-api",
    metadata={"name": "billing-api", "namespace": "ml"},
    spec={
        "selector": {"matchLabels": {"app": "billing-api"}},
        "template": {
            "metadata": {"labels": {"app": "billing-api"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example.com/ml/billing-api:1.0",
                        "env": [
                            {
                                "name": "STRIPE_API_KEY",
                                "valueFrom": {"secretKeyRef": {"name": "app-secrets", "key": "stripe_api_key"}},
                            }
                        ],
                    }
                ]
            },
        },
    },
)
