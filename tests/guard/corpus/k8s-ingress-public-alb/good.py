"""The good twin of k8s-ingress-public-alb."""

import pulumi_kubernetes as k8s

k8s.networking.v1.Ingress(
    "notebooks",
    metadata={
        "name": "notebooks",
        "namespace": "ml",
        "annotations": {
            "alb.ingress.kubernetes.io/scheme": "internet-facing",
            "alb.ingress.kubernetes.io/inbound-cidrs": "203.0.113.0/24",
        },
    },
    spec={
        "ingress_class_name": "alb",
        "rules": [
            {
                "host": "notebooks.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "path_type": "Prefix",
                            "backend": {"service": {"name": "jupyter", "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    },
)
