"""Only EventBridge rule of this account may invoke the function."""

import pulumi_aws as aws

aws.lambda_.Permission(
    "invoke-anyone",
    action="lambda:InvokeFunction",
    function="batch-submitter",
    principal="events.amazonaws.com",
    source_arn="arn:aws:events:us-east-1:123456789012:rule/nightly",
)
