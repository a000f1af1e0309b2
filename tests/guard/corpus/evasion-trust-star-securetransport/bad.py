"""Anyone, as long as they use TLS."""

import json

import pulumi_aws as aws

aws.iam.Role(
    "partner-access",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": "sts:AssumeRole",
                    "Condition": {"Bool": {"aws:SecureTransport": "true"}},
                }
            ],
        }
    ),
)
