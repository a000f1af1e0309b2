"""The good twin: no credential in the environment (the container reads it from Secrets Manager at start)."""

import pulumi_aws as aws

TGI = "huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"

aws.sagemaker.Model(
    "llm",
    execution_role_arn="arn:aws:iam::123456789012:role/sagemaker",
    primary_container={
        "image": f"763104351884.dkr.ecr.us-east-1.amazonaws.com/{TGI}",
        "environment": {
            "HF_MODEL_ID": "meta-llama/Llama-3.1-8B",
            "HF_TOKEN_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-AbCdEf",
        },
    },
)
