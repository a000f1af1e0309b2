"""The good twin of k8s-service-public-lb."""

import pulumi_kubernetes as k8s

k8s.core.v1.Service(
    "triton-public",
    metadata={
        "name": "triton-public",
        "namespace": "ml",
        "annotations": {
            "service.beta.kubernetes.io/aws-load-balancer-type": "external",
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        },
    },
    spec={"type": "LoadBalancer", "selector": {"app": "triton"}, "ports": [{"port": 443, "target_port": 8000}]},
)
