"""ECR repository policy letting everyone pull (ecr:BatchGetImage to Principal *)."""

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
                }
            ],
        }
    ),
)
