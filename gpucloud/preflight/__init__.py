"""Preflight checks of a stack spec against the target AWS account and region (boto3)."""

from gpucloud.aws import AwsAccessError, aws_errors, check_region, default_clients
from gpucloud.preflight.checks import SCHEMA, Check, Preflight, parse_quotas, pool_markets, quota_for, run_preflight

__all__ = [
    "SCHEMA",
    "AwsAccessError",
    "Check",
    "Preflight",
    "aws_errors",
    "check_region",
    "default_clients",
    "parse_quotas",
    "pool_markets",
    "quota_for",
    "run_preflight",
]
