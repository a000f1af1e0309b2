"""A Service annotated aws-load-balancer-scheme: internal but not handed to the AWS Load Balancer Controller: the
in-tree provider answers it (gpucloud's platform turns the controller's Service webhook off) and ignores the
scheme annotation, so the load balancer is internet-facing and open to the world."""

import pulumi_kubernetes as k8s

k8s.core.v1.Service(
    "triton-internal",
    metadata={
        "name": "triton-internal",
        "namespace": "ml",
        "annotations": {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"},
    },
    spec={"type": "LoadBalancer", "selector": {"app": "triton"}, "ports": [{"port": 443, "target_port": 8000}]},
)
