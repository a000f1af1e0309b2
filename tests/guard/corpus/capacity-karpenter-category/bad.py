"""A v1 NodePool bounded only by instance category "p": that admits V100 (p3, p3dn) next to H100."""

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
                "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["p"]}],
            }
        },
        "limits": {"nvidia.com/gpu": "64"},
    },
)
