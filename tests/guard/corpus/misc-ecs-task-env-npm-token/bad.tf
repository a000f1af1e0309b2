resource "aws_ecs_task_definition" "trainer_task" {
  family                   = "trainer"
  requires_compatibilities = ["EC2"]
  container_definitions = jsonencode([{
    name   = "trainer"
    image  = "registry.example.com/ml/trainer:1.0"
    memory = 4096
    environment = [{ name = "NPM_TOKEN", value = var.npm_token }]
  }])
}
