"""An internet-facing NLB whose loadBalancerSourceRanges look restrictive but union to the whole IPv4 internet."""

import pulumi_kubernetes as k8s

k8s.core.v1.Service(
    "triton-edge",
    metadata={
        "name": "triton-edge",
        "namespace": "ml",
        "annotations": {
            "service.beta.kubernetes.io/aws-load-balancer-type": "external",
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        },
    },
    spec={
        "type": "LoadBalancer",
        "selector": {"app": "triton"},
        "ports": [{"port": 443, "target_port": 8000}],
        "load_balancer_source_ranges": ["0.0.0.0/1", "128.0.0.0/1"],
    },
)
