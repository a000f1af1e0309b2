"""The good twin: the variable names a SecureString parameter, resolved by CodeBuild at build time."""

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
        "environment_variables": [{"name": "GITHUB_TOKEN", "value": "/ci/github-token", "type": "PARAMETER_STORE"}],
    },
)
