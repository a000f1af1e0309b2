resource "aws_msk_cluster" "events" {
  cluster_name           = "events"
  kafka_version          = "3.6.0"
  number_of_broker_nodes = 3
  broker_node_group_info {
    instance_type   = "kafka.m7g.large"
    client_subnets  = ["subnet-0a", "subnet-0b", "subnet-0c"]
    security_groups = ["sg-0123456789abcdef0"]
    connectivity_info {
      public_access {
        type = "DISABLED"
      }
    }
  }
}
