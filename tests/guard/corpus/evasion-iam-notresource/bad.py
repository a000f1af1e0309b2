"""Admin without the words: Allow NotAction [iam:PassRole] on NotResource [a decoy bucket], and a Deny that
only applies without MFA (a conditional Deny never cancels the grant)."""

import json

import pulumi_aws as aws

aws.iam.Policy(
    "break-glass",
    policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "NotAction": ["iam:PassRole"], "NotResource": ["arn:aws:s3:::decoy-bucket"]},
                {
                    "Effect": "Deny",
                    "Action": "*",
                    "Resource": "*",
                    "Condition": {"BoolIfExists": {"aws:MultiFactorAuthPresent": "false"}},
                },
            ],
        }
    ),
)
