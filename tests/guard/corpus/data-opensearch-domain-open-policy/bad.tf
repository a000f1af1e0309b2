resource "aws_opensearch_domain" "search" {
  domain_name    = "embeddings"
  engine_version = "OpenSearch_2.13"
  cluster_config {
    instance_type  = "r6g.large.search"
    instance_count = 2
  }
  ebs_options {
    ebs_enabled = true
    volume_size = 100
  }
  encrypt_at_rest {
    enabled = true
  }
  node_to_node_encryption {
    enabled = true
  }
  domain_endpoint_options {
    enforce_https       = true
    tls_security_policy = "Policy-Min-TLS-1-2-2019-07"
  }
  access_policies = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "es:*", "Resource": "arn:aws:es:us-east-1:123456789012:domain/embeddings/*"}]})
}
