"""Anyone with an AWS account may invoke the function."""

import pulumi_aws as aws

aws.lambda_.Permission(
    "invoke-anyone",
    action="lambda:InvokeFunction",
    function="batch-submitter",
    principal="*",
)
