"""A NodePool chooses GPUs by name (t4) and count (Gt 0) instead of family, and sets no GPU limit."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "infer",
    api_version="karpenter.sh/v1",
    kind="NodePool",
    metadata={"name": "infer"},
    spec={
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["t4"]},
                    {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]},
                ],
            }
        },
    },
)
