"""Pulumi ComponentResources for GPU platforms on AWS, built on pulumi_aws / pulumi_kubernetes primitives."""
