"""Shared literals for the storage component tests: a ClusterHandle made of strings, tags, and a runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi_kubernetes as k8s

from gpucloud.components.interfaces import ClusterHandle
from gpucloud.plan import Plan, ResourceRecord, run_callable

ACCOUNT = "123456789012"
REGION = "us-east-1"
TAGS = {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud", "Env": "prod"}
KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/11111111-2222-3333-4444-555555555555"
OIDC_URL = "https://oidc.eks.us-east-1.amazonaws.com/id/ABCDEF0123456789"
OIDC_ARN = f"arn:aws:iam::{ACCOUNT}:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABCDEF0123456789"

BUCKET = "aws:s3/bucket:Bucket"
KEY = "aws:kms/key:Key"
FS = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
DATA_HOLDING = (BUCKET, KEY, FS, DRA)


def handle(k8s_provider: k8s.Provider | None = None, efa_sg: str = "sg-efa") -> ClusterHandle:
    return ClusterHandle(
        name="gpucloud-test",
        kubernetes_version="1.34",
        endpoint="https://example.eks.amazonaws.com",
        certificate_authority="Y2E=",
        vpc_id="vpc-0123456789abcdef0",
        vpc_cidr="10.0.0.0/16",
        subnet_ids_by_az={"us-east-1a": "subnet-aaaa", "us-east-1b": "subnet-bbbb"},
        node_security_group_id="sg-nodes",
        cluster_security_group_id="sg-cluster",
        efa_security_group_id=efa_sg,
        node_role_arn=f"arn:aws:iam::{ACCOUNT}:role/nodes",
        node_role_name="nodes",
        oidc_provider_arn=OIDC_ARN,
        oidc_provider_url=OIDC_URL,
        kms_key_arn=f"arn:aws:kms:{REGION}:{ACCOUNT}:key/cluster",
        k8s_provider=k8s_provider,
    )


def provider() -> k8s.Provider:
    return k8s.Provider("k8s", kubeconfig="{}")


def run(fn: Callable[[], Any], preview: bool = False) -> Plan:
    return run_callable(fn, preview=preview, region=REGION)


def names(plan: Plan, type_: str) -> set[str]:
    return {r.name for r in plan.of_type(type_)}


def doc(record: ResourceRecord, key: str = "policy") -> dict[str, Any]:
    value = record.inputs[key]
    assert isinstance(value, str)
    parsed = json.loads(value)
    assert isinstance(parsed, dict)
    return parsed
