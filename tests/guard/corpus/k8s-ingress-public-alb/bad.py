"""Jupyter notebooks behind an internet-facing ALB with no inbound CIDR restriction."""

import pulumi_kubernetes as k8s

k8s.networking.v1.Ingress(
    "notebooks",
    metadata={
        "name": "notebooks",
        "namespace": "ml",
        "annotations": {"alb.ingress.kubernetes.io/scheme": "internet-facing"},
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
