"""A secret encrypted with the AWS-managed key: its key policy is AWS's, not the account's."""

import pulumi_aws as aws

aws.secretsmanager.Secret("hf-token", kms_key_id="alias/aws/secretsmanager")
