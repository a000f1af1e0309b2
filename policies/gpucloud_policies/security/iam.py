"""An IAM policy statement evaluator for guardrails, and the documents of the AWS managed policies they name.

It follows AWS's documented policy evaluation logic for one identity-based policy: a request is allowed when an
``Allow`` statement matches its action and resource and no unconditional ``Deny`` does. ``Action`` /
``NotAction`` and ``Resource`` / ``NotResource`` match with IAM wildcards (``*`` any run of characters, ``?``
one; actions case-insensitively, resources case-sensitively); ``NotAction`` matches every action *except* the
ones listed ("IAM JSON policy elements: NotAction"). A ``Deny`` with a ``Condition`` may not apply, so it never
cancels an allow (fail closed); an ``Allow`` with a condition still grants when the condition holds, so it counts.

Guardrails ask questions with *probes*: an action no policy names (``<service>:GpucloudProbe``) on resources no
policy names. Only wildcards reach a probe, so "is the probe allowed?" is "does this document grant every
action of the service on every resource?", however the wildcards, NotAction or NotResource are written.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import plain
from ..readers import principals

# AWS managed policies by name: the statements of their default versions (AWS Managed Policy reference,
# docs.aws.amazon.com/aws-managed-policy/latest/reference/<name>.html), trimmed to what decides admin-ness.
MANAGED_POLICIES: Mapping[str, list[dict[str, Any]]] = {
    "AdministratorAccess": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
    "PowerUserAccess": [
        {"Effect": "Allow", "NotAction": ["iam:*", "organizations:*", "account:*"], "Resource": "*"},
        {
            "Effect": "Allow",
            "Action": ["account:GetAccountInformation", "account:ListRegions", "iam:CreateServiceLinkedRole"],
            "Resource": "*",
        },
    ],
    "IAMFullAccess": [{"Effect": "Allow", "Action": ["iam:*", "organizations:DescribeOrganization"], "Resource": "*"}],
    "AmazonEC2FullAccess": [
        {
            "Effect": "Allow",
            "Action": ["ec2:*", "elasticloadbalancing:*", "cloudwatch:*", "autoscaling:*"],
            "Resource": "*",
        }
    ],
    "AmazonS3FullAccess": [{"Effect": "Allow", "Action": ["s3:*", "s3-object-lambda:*"], "Resource": "*"}],
    "AWSOrganizationsFullAccess": [{"Effect": "Allow", "Action": "organizations:*", "Resource": "*"}],
}
_MANAGED_ARN = re.compile(r"^arn:aws[a-z-]*:iam::aws:policy/(?:.*/)?([^/]+)$")

PROBE = "GpucloudProbe"
ANY_SERVICE = "gpucloudprobe"


def document(value: Any) -> dict[str, Any] | None:
    """A policy document from a JSON string or a mapping; anything else (or invalid JSON) is None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    doc = plain(value) if isinstance(value, Mapping) else None
    return doc if isinstance(doc, dict) else None


def managed_document(arn: str) -> dict[str, Any] | None:
    """The document of an AWS managed policy named by ARN, when the pack knows it."""
    m = _MANAGED_ARN.match(arn)
    if not m or m.group(1) not in MANAGED_POLICIES:
        return None
    return {"Version": "2012-10-17", "Statement": MANAGED_POLICIES[m.group(1)]}


def managed_name(arn: str) -> str:
    m = _MANAGED_ARN.match(arn)
    return m.group(1) if m else ""


def as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


@functools.cache
def _pattern(wildcard: str, fold: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in wildcard)
    return re.compile(f"^{body}$", re.IGNORECASE | re.DOTALL if fold else re.DOTALL)


def matches(patterns: list[Any], value: str, *, fold: bool) -> bool:
    return any(isinstance(p, str) and _pattern(p, fold).match(value) for p in patterns)


@dataclass(frozen=True)
class Statement:
    index: int
    effect: str
    actions: list[Any] | None
    not_actions: list[Any] | None
    resources: list[Any] | None
    not_resources: list[Any] | None
    conditional: bool

    def applies(self, action: str, resource: str) -> bool:
        if self.actions is not None:
            hit = matches(self.actions, action, fold=True)
        elif self.not_actions is not None:
            hit = not matches(self.not_actions, action, fold=True)
        else:
            hit = False
        if not hit:
            return False
        if self.resources is not None:
            return matches(self.resources, resource, fold=False)
        if self.not_resources is not None:
            return not matches(self.not_resources, resource, fold=False)
        return False


def statements(doc: dict[str, Any] | None) -> list[Statement]:
    if doc is None:
        return []
    out = []
    for i, st in enumerate(as_list(doc.get("Statement"))):
        if not isinstance(st, dict):
            continue
        out.append(
            Statement(
                index=i,
                effect=str(st.get("Effect", "")),
                actions=as_list(st["Action"]) if "Action" in st else None,
                not_actions=as_list(st["NotAction"]) if "NotAction" in st else None,
                resources=as_list(st["Resource"]) if "Resource" in st else None,
                not_resources=as_list(st["NotResource"]) if "NotResource" in st else None,
                conditional=bool(st.get("Condition")),
            )
        )
    return out


def allowing(doc: dict[str, Any] | None, action: str, resource: str) -> list[int]:
    """Indexes of the Allow statements that grant ``action`` on ``resource``; [] when an unconditional Deny
    matches (explicit deny wins) or nothing allows it (implicit deny)."""
    sts = statements(doc)
    if any(s.effect == "Deny" and not s.conditional and s.applies(action, resource) for s in sts):
        return []
    return [s.index for s in sts if s.effect == "Allow" and s.applies(action, resource)]


def probe_resources(service: str) -> tuple[str, ...]:
    """Resources of a service no policy names, in the ARN shapes services use (regional, global, S3-like)."""
    return (
        f"arn:aws:{service}:us-east-1:000000000000:{PROBE}/{PROBE}",
        f"arn:aws:{service}::000000000000:{PROBE}/{PROBE}",
        f"arn:aws:{service}:::{PROBE}",
    )


def grants_service(doc: dict[str, Any] | None, service: str) -> list[int]:
    """Statements through which the document grants every action of ``service`` on every resource of it
    (``ANY_SERVICE``: every action of every service); [] when it does not."""
    action = f"{service}:{PROBE}"
    for resource in probe_resources(service):
        found = allowing(doc, action, resource)
        if found:
            return found
    return []


def principal_is_public(principal: Any) -> bool:
    """Everyone, in every account (the principal reader's verdict, readers/principals.py)."""
    return principals.principal_is_public(principal)


def public_trust(doc: dict[str, Any] | None) -> list[int]:
    """Allow statements of a trust policy that let anyone assume the role: a public principal (or a
    ``NotPrincipal`` Allow) under no condition that restricts who, or a web-identity trust without ``sub``."""
    return [f.index for f in principals.public_statements(doc)]
