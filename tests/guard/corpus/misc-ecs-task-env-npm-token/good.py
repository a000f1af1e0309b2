"""The token comes from Secrets Manager through the task's secrets."""

import json

import pulumi_aws as aws

aws.ecs.TaskDefinition(
    "trainer-task",
    family="trainer",
    requires_compatibilities=["EC2"],
    container_definitions=json.dumps(
        [
            {
                "name": "trainer",
                "image": "registry.example.com/ml/trainer:1.0",
                "memory": 4096,
                "secrets": [
                    {
                        "name": "NPM_TOKEN",
                        "valueFrom": "arn:aws:secretsmanager:us-east-1:123456789012:secret:npm-AbCdEf",
                    }
                ],
            }
        ]
    ),
)
