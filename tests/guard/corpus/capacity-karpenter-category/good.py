"""Category p and generation above 4 admits only p5, p5e, p5en and p6 families."""

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
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["p"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["4"]},
                ],
            }
        },
        "limits": {"nvidia.com/gpu": "64"},
    },
)
