"""Every service account of the cluster (no sub condition)."""

import json

import pulumi_aws as aws

aws.iam.Role(
    "trainer-irsa",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {
                        "Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D4E5F60789ABCDEF012345678"  # noqa: E501
                    },
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            "oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D4E5F60789ABCDEF012345678:aud": "sts.amazonaws.com"  # noqa: E501
                        }
                    },
                }
            ],
        }
    ),
)
