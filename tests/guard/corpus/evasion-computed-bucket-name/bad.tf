resource "aws_ssm_parameter" "seed" {
  name  = "seed"
  type  = "String"
  value = "x"
  tags  = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}

resource "aws_s3_bucket" "hidden" {
  bucket = "corpus-hidden-${aws_ssm_parameter.seed.version}"
  tags   = { CostCenter = "ml", Team = "vision", Project = "corpus", Env = "prod" }
}
