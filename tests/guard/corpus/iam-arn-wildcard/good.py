"""The deploy policy names the actions and the repository it deploys to."""

import json

import pulumi_aws as aws

role = aws.iam.Role(
    "ci",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "codebuild.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
)
aws.iam.RolePolicy(
    "ci-deploy",
    role=role.id,
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["ecr:PutImage", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload"],
                    "Resource": "arn:aws:ecr:us-east-1:123456789012:repository/trainer",
                }
            ],
        }
    ),
)
