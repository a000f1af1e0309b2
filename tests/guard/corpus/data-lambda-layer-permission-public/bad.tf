resource "aws_lambda_layer_version_permission" "cuda_layer_share" {
  layer_name     = "cuda-runtime"
  version_number = 3
  action         = "lambda:GetLayerVersion"
  principal      = "*"
  statement_id   = "share"
}
