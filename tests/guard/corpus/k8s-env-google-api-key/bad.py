"""Deployment container env holding a Google API key."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "geo-enrich",
    metadata={"name": "geo-enrich", "namespace": "ml"},
    spec={
        "selector": {"matchLabels": {"app": "geo-enrich"}},
        "template": {
            "metadata": {"labels": {"app": "geo-enrich"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example.com/ml/geo-enrich:1.0",
                        "env": [{"name": "MAPS_KEY", "value": "AIzaSyD3x9KqL2mN4pR7sT1vW3yB5dF6hJ9kL0c"}],
                    }
                ]
            },
        },
    },
)
