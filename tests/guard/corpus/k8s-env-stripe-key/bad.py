"""Deployment container env holding a live Stripe secret key in plain text."""

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
                        "env": [{"name": "STRIPE_API_KEY", "value": "sk_live_51Hx9KqL2mN4pR7sT1vW3yB5"}],
                    }
                ]
            },
        },
    },
)
