"""A PLAINTEXT CodeBuild variable: shown by codebuild:BatchGetProjects and in the console."""

import pulumi_aws as aws

aws.codebuild.Project(
    "image-build",
    service_role="arn:aws:iam::123456789012:role/codebuild",
    artifacts={"type": "NO_ARTIFACTS"},
    source={"type": "NO_SOURCE", "buildspec": "version: 0.2\nphases:\n  build:\n    commands: [make image]\n"},
    environment={
        "compute_type": "BUILD_GENERAL1_SMALL",
        "image": "aws/codebuild/standard:7.0",
        "type": "LINUX_CONTAINER",
        "environment_variables": [
            {"name": "GITHUB_TOKEN", "value": "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", "type": "PLAINTEXT"}
        ],
    },
)
