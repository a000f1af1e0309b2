"""A plain String parameter: readable by ssm:GetParameter without kms:Decrypt."""

import pulumi_aws as aws

aws.ssm.Parameter("hub-token", name="/ml/hub-token", type="String", value="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")
