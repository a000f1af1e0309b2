"""A v1 EC2NodeClass without blockDeviceMappings: Karpenter's default volume is encrypted with the account's
default key."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "gpu-class",
    api_version="karpenter.k8s.aws/v1",
    kind="EC2NodeClass",
    metadata={"name": "gpu"},
    spec={
        "role": "KarpenterNodeRole-corpus",
        "tags": {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"},
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "corpus"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "corpus"}}],
    },
)
