"""The good twin: restricted by a condition that names who, or by the principal."""

import json

import pulumi_aws as aws

aws.ecr.RepositoryPolicy(
    "trainer-policy",
    repository="trainer",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
                    "Resource": "*",
                    "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}},
                }
            ],
        }
    ),
)
