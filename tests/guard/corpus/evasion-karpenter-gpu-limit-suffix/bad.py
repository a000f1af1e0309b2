"""A p5 NodePool whose GPU limit is a quantity with a suffix ("1k" = 1,000 GPUs), hoping it reads as 0 or no limit."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "train",
    api_version="karpenter.sh/v1",
    kind="NodePool",
    metadata={"name": "train"},
    spec={
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                ],
            }
        },
        "limits": {"nvidia.com/gpu": "1k"},
    },
)
