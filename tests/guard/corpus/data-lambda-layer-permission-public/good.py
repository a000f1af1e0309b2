"""Shared with the accounts of the organisation only."""

import pulumi_aws as aws

aws.lambda_.LayerVersionPermission(
    "cuda-layer-share",
    layer_name="cuda-runtime",
    version_number=3,
    action="lambda:GetLayerVersion",
    principal="*",
    organization_id="o-a1b2c3d4e5",
    statement_id="share",
)
