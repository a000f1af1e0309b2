"""The CUDA layer shared with every AWS account."""

import pulumi_aws as aws

aws.lambda_.LayerVersionPermission(
    "cuda-layer-share",
    layer_name="cuda-runtime",
    version_number=3,
    action="lambda:GetLayerVersion",
    principal="*",
    statement_id="share",
)
