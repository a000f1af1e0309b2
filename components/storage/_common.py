"""Helpers the storage components share: keep-data resource options, IAM documents, generated bucket names."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import pulumi

POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"


def dns_suffix(region: str) -> str:
    return "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"


def data_options(
    parent: pulumi.Resource,
    *,
    keep: bool,
    protect: bool,
    depends_on: Sequence[pulumi.Resource] | None = None,
    **kwargs: Any,
) -> pulumi.ResourceOptions:
    """Options of a resource that holds (or guards) data: retained on destroy unless deletion is allowed.

    `protect` goes further (prod): the engine refuses to delete or replace the resource at all.
    """
    return pulumi.ResourceOptions(
        parent=parent,
        retain_on_delete=keep,
        protect=keep and protect,
        depends_on=list(depends_on or []),
        **kwargs,
    )


def policy_json(statements: list[dict[str, Any]]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, indent=2)


def pod_identity_trust(account_id: str) -> str:
    # sts:TagSession is required: Pod Identity tags every session with cluster/namespace/service account.
    return policy_json(
        [
            {
                "Sid": "EksPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_SERVICE},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
            }
        ]
    )


def irsa_trust(oidc_provider_arn: str, oidc_provider_url: str, subjects: list[str]) -> str:
    issuer = oidc_provider_url.removeprefix("https://")
    return policy_json(
        [
            {
                "Sid": "IrsaServiceAccounts",
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": subjects if len(subjects) > 1 else subjects[0],
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ]
    )


def trust_policy(
    *,
    use_pod_identity: bool,
    account_id: pulumi.Input[str],
    oidc_provider_arn: pulumi.Input[str],
    oidc_provider_url: pulumi.Input[str],
    namespace: str,
    service_accounts: list[str],
) -> pulumi.Output[str]:
    if use_pod_identity:
        return pulumi.Output.from_input(account_id).apply(pod_identity_trust)
    subjects = [f"system:serviceaccount:{namespace}:{sa}" for sa in service_accounts]
    return pulumi.Output.all(oidc_provider_arn, oidc_provider_url).apply(
        lambda v: irsa_trust(str(v[0]), str(v[1]), subjects)
    )


def generated_bucket_name(prefix: str, role: str, account_id: str, region: str) -> str:
    """'<prefix>-<role>-<account>-<region>', the prefix shortened (with a hash) to fit S3's 63 characters.

    The account and region make the name globally unique without a random suffix, so plans are repeatable.
    """
    tail = f"-{role}-{account_id}-{region}"
    room = 63 - len(tail)
    if len(prefix) > room:
        digest = hashlib.sha256(prefix.encode()).hexdigest()[:6]
        prefix = f"{prefix[: room - 7].rstrip('-')}-{digest}"
    return f"{prefix}{tail}"


def slug(path: str) -> str:
    """Resource-name-safe form of a file-system path: '/' -> 'root', '/a/b' -> 'a-b'."""
    cleaned = "-".join(p for p in path.strip("/").replace("_", "-").replace(".", "-").split("/") if p)
    return cleaned.lower() or "root"
