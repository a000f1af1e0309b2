resource "aws_api_gateway_rest_api_policy" "inference_api_policy" {
  rest_api_id = "a1b2c3d4e5"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/*", "Condition": {"Bool": {"aws:SecureTransport": "true"}}}]})
}
