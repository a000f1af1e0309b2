"""The good twin: the value comes from a Secret."""

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
                        "env": [
                            {
                                "name": "MAPS_KEY",
                                "valueFrom": {"secretKeyRef": {"name": "app-secrets", "key": "maps_key"}},
                            }
                        ],
                    }
                ]
            },
        },
    },
)
