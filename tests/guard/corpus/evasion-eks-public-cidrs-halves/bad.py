"""Public endpoint, CIDRs in two halves."""

import pulumi_aws as aws

TAGS = {"CostCenter": "ml-platform", "Team": "platform", "Project": "corpus", "Env": "prod"}
aws.eks.Cluster(
    "ml-cluster",
    role_arn="arn:aws:iam::123456789012:role/eks-cluster",
    vpc_config={
        "subnet_ids": ["subnet-0a1b2c3d4e5f60718", "subnet-0a1b2c3d4e5f60719"],
        "endpoint_private_access": True,
        "endpoint_public_access": True,
        "public_access_cidrs": ["0.0.0.0/1", "128.0.0.0/1"],
    },
    encryption_config={
        "provider": {"key_arn": "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"},
        "resources": ["secrets"],
    },
    enabled_cluster_log_types=["api", "audit", "authenticator", "controllerManager", "scheduler"],
    tags=TAGS,
)
