"""Role trust to Principal * under an aws:CurrentTime condition, which restricts nobody."""

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
                    "Condition": {"DateLessThan": {"aws:CurrentTime": "2027-01-01T00:00:00Z"}},
                }
            ],
        }
    ),
)
