"""An npm token in the container definition's environment."""

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
                "environment": [{"name": "NPM_TOKEN", "value": "npm_x7Kq2NmP9rT4vW1yZ3bC5dF6hJ9kL0cA2eG4"}],
            }
        ]
    ),
)
