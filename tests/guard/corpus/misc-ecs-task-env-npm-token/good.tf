resource "aws_ecs_task_definition" "trainer_task" {
  family                   = "trainer"
  requires_compatibilities = ["EC2"]
  container_definitions = jsonencode([{
    name   = "trainer"
    image  = "registry.example.com/ml/trainer:1.0"
    memory = 4096
    secrets = [{ name = "NPM_TOKEN", valueFrom = "arn:aws:secretsmanager:us-east-1:123456789012:secret:npm-AbCdEf" }]
  }])
}
