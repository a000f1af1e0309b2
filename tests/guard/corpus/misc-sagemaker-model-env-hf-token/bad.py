"""The token in the model's container environment: returned by sagemaker:DescribeModel."""

import pulumi_aws as aws

TGI = "huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"

aws.sagemaker.Model(
    "llm",
    execution_role_arn="arn:aws:iam::123456789012:role/sagemaker",
    primary_container={
        "image": f"763104351884.dkr.ecr.us-east-1.amazonaws.com/{TGI}",
        "environment": {
            "HF_MODEL_ID": "meta-llama/Llama-3.1-8B",
            "HF_TOKEN": "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmPlOkIjUh",
        },
    },
)
