resource "aws_sagemaker_model" "llm" {
  name               = "llm"
  execution_role_arn = "arn:aws:iam::123456789012:role/sagemaker"
  primary_container {
    image = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"
    environment = {
      HF_MODEL_ID = "meta-llama/Llama-3.1-8B"
      HF_TOKEN    = "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"
    }
  }
}
