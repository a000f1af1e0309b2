"""A domain outside any VPC whose access policy lets anyone call es:* on it."""

import json

import pulumi_aws as aws

aws.opensearch.Domain(
    "search",
    domain_name="embeddings",
    engine_version="OpenSearch_2.13",
    cluster_config={"instance_type": "r6g.large.search", "instance_count": 2},
    ebs_options={"ebs_enabled": True, "volume_size": 100},
    encrypt_at_rest={"enabled": True},
    node_to_node_encryption={"enabled": True},
    domain_endpoint_options={"enforce_https": True, "tls_security_policy": "Policy-Min-TLS-1-2-2019-07"},
    access_policies=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "*"},
                    "Action": "es:*",
                    "Resource": "arn:aws:es:us-east-1:123456789012:domain/embeddings/*",
                }
            ],
        }
    ),
)
