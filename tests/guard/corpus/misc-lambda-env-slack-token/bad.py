"""The bot token in the function's environment (readable by lambda:GetFunctionConfiguration)."""

import pulumi_aws as aws

aws.lambda_.Function(
    "notifier",
    role="arn:aws:iam::123456789012:role/notifier",
    runtime="python3.12",
    handler="app.handler",
    s3_bucket="corpus-artifacts",
    s3_key="notifier.zip",
    environment={"variables": {"SLACK_TOKEN": "xoxb-204811024731-1024550938127-x7Kq2NmP9rT4vW1yZ3bC5dF6"}},
)
