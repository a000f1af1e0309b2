"""A SecureString parameter, encrypted with KMS."""

import pulumi_aws as aws

aws.ssm.Parameter("hub-token", name="/ml/hub-token", type="SecureString", value="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")
