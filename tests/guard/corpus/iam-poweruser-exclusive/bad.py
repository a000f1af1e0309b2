"""PowerUserAccess attached through RolePolicyAttachmentsExclusive (not a RolePolicyAttachment)."""

import pulumi_aws as aws

aws.iam.RolePolicyAttachmentsExclusive(
    "dev-role-policies",
    role_name="dev-role",
    policy_arns=[
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/PowerUserAccess",
    ],
)
