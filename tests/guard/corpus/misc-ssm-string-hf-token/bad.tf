resource "aws_ssm_parameter" "hub_token" {
  name  = "/ml/hub-token"
  type  = "String"
  value = var.hub_token
}
