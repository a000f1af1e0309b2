"""An inference Service exposed through an internet-facing NLB open to the world."""

import pulumi_kubernetes as k8s

k8s.core.v1.Service(
    "triton-public",
    metadata={
        "name": "triton-public",
        "namespace": "ml",
        "annotations": {
            "service.beta.kubernetes.io/aws-load-balancer-type": "external",
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        },
    },
    spec={"type": "LoadBalancer", "selector": {"app": "triton"}, "ports": [{"port": 443, "target_port": 8000}]},
)
