"""The v1beta1 NodePool pins an allowed family and bounds its GPUs."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "gpu",
    api_version="karpenter.sh/v1beta1",
    kind="NodePool",
    metadata={"name": "gpu"},
    spec={
        "template": {
            "spec": {
                "nodeClassRef": {"name": "default"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
            }
        },
        "limits": {"nvidia.com/gpu": "32"},
    },
)
