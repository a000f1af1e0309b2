"""Principal and condition analysis for every principal-bearing document: trust policies, bucket policies and
the resource policies of queues, topics, keys, registries, functions and secrets.

A statement is *public* when it allows a principal that is everyone (``"*"``, ``{"AWS": "*"}``, any list holding
``*``, or a ``NotPrincipal`` Allow) and no condition of it really restricts who may use it. What restricts is
what Amazon S3 itself counts ("Amazon S3 considers a bucket policy public unless ... it grants permissions to a
fixed aws:SourceArn, aws:SourceVpc, aws:SourceVpce, aws:SourceOwner, aws:SourceAccount, s3:x-amz-server-side-
encryption-aws-kms-key-id, aws:userid outside the pattern AROLEID:*, or limits access to a set of CIDRs using
aws:SourceIp": the S3 API reference, PublicAccessBlockConfiguration) plus the organisation and principal keys of
the IAM global condition context keys (aws:PrincipalOrgID, aws:PrincipalOrgPaths, aws:PrincipalAccount,
aws:PrincipalArn, aws:SourceOrgID, aws:SourceOrgPaths), KMS's kms:CallerAccount, and sts:ExternalId (kept from
GC-SEC-026: it names the one party told the id). Keys such as aws:SecureTransport, aws:CurrentTime,
aws:RequestedRegion, aws:MultiFactorAuthPresent or aws:UserAgent restrict nothing about *who*.

A restricting key restricts only with a positive operator (StringEquals, StringLike, ArnEquals, ArnLike,
IpAddress, their ``ForAnyValue:`` forms) and fixed values: no ``...IfExists`` (it holds when the key is absent),
no ``Not...`` operator, no value that is only a wildcard or a policy variable; an aws:SourceIp that reaches the
internet (readers/reach.py: 0.0.0.0/1 + 128.0.0.0/1) restricts nothing either.

A federated web-identity trust (``sts:AssumeRoleWithWebIdentity`` from an OIDC provider) is open to every
identity the provider issues tokens for (every service account of the cluster, every repository on GitHub)
unless it conditions the provider's ``sub`` claim on a value that is not a bare wildcard
(IAM user guide, "Create a role for OpenID Connect federation"; EKS user guide, IRSA trust policies: "Add the
sub condition"); ``aud`` alone names the audience, not who holds the token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import plain
from . import reach

# Condition keys (lower case: keys are case-insensitive) that restrict who may use a statement.
RESTRICTING_KEYS = frozenset(
    {
        "aws:sourcearn",
        "aws:sourceaccount",
        "aws:sourceowner",
        "aws:sourcevpc",
        "aws:sourcevpce",
        "aws:sourceorgid",
        "aws:sourceorgpaths",
        "aws:sourceip",
        "aws:principalorgid",
        "aws:principalorgpaths",
        "aws:principalaccount",
        "aws:principalarn",
        "aws:userid",
        "s3:x-amz-server-side-encryption-aws-kms-key-id",
        "s3:dataaccesspointaccount",
        "s3:dataaccesspointarn",
        "kms:calleraccount",
        "sts:externalid",
    }
)
# Keys that are named in policies to look like restrictions and are not (listed for messages and tests).
NON_RESTRICTING_EXAMPLES = (
    "aws:SecureTransport",
    "aws:CurrentTime",
    "aws:EpochTime",
    "aws:RequestedRegion",
    "aws:MultiFactorAuthPresent",
    "aws:UserAgent",
    "aws:TokenIssueTime",
)
_POSITIVE_OPERATORS = frozenset(
    {"stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike", "ipaddress"}
)
_VARIABLE = re.compile(r"\$\{[^}]*\}")
_ACCOUNT_ARN = re.compile(r"^arn:aws[a-z-]*:[^:]*:[^:]*:\d{12}:")
WEB_IDENTITY = "sts:assumerolewithwebidentity"


def document(value: Any) -> dict[str, Any] | None:
    """A policy document from a JSON string or a mapping; anything else (or invalid JSON) is None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    doc = plain(value) if isinstance(value, Mapping) else None
    return doc if isinstance(doc, dict) else None


def as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def statements(doc: dict[str, Any] | None) -> list[tuple[int, dict[str, Any]]]:
    if doc is None:
        return []
    return [(i, st) for i, st in enumerate(as_list(doc.get("Statement"))) if isinstance(st, dict)]


def principal_is_public(principal: Any) -> bool:
    """``"*"``, ``{"AWS": "*"}`` or an AWS principal list holding ``*``: everyone, in every account (the IAM user
    guide, "AWS JSON policy elements: Principal": the two forms are equivalent). ``{"Service": "*"}`` names no
    principal anyone can be, so it is not read as everyone."""
    if isinstance(principal, str):
        return principal.strip() == "*"
    if isinstance(principal, dict):
        return any(isinstance(v, str) and v.strip() == "*" for v in as_list(principal.get("AWS")))
    return False


def _operator(op: str) -> tuple[str, bool]:
    """(base operator, restricting form?) for a condition operator such as ``ForAnyValue:StringLike``."""
    o = op.strip().lower()
    qualifier, _, base = o.rpartition(":")
    if base.endswith("ifexists"):
        return base[: -len("ifexists")], False
    # ForAllValues holds for a request without the key (an empty set): it restricts nothing on its own.
    if qualifier == "forallvalues":
        return base, False
    return base, base in _POSITIVE_OPERATORS


def _fixed(key: str, value: Any) -> bool:
    if not isinstance(value, str) or not value.strip():
        return False
    v = value.strip()
    if _VARIABLE.search(v):
        return False
    # A wildcard is no fixed value; that covers S3's "aws:userid outside the pattern AROLEID:*" too.
    if "*" in v or "?" in v:
        # A wildcard ARN still restricts when its account is written out (arn:aws:sns:us-east-1:123456789012:*).
        return bool(_ACCOUNT_ARN.match(v)) and key in ("aws:sourcearn", "aws:principalarn")
    return True


@dataclass(frozen=True)
class ConditionVerdict:
    restricting: tuple[str, ...]  # the keys that restrict (as written)
    ignored: tuple[str, ...]  # the keys present that do not

    @property
    def restricts(self) -> bool:
        return bool(self.restricting)


def analyse(condition: Any) -> ConditionVerdict:
    """Which keys of a statement's Condition block restrict who may use it."""
    good: list[str] = []
    bad: list[str] = []
    if not isinstance(condition, dict):
        return ConditionVerdict((), ())
    for op, block in condition.items():
        if not isinstance(block, dict):
            continue
        base, positive = _operator(str(op))
        for key, values in block.items():
            k = str(key).strip().lower()
            vals = as_list(values)
            ok = positive and k in RESTRICTING_KEYS and bool(vals)
            if ok and k == "aws:sourceip":
                ok = base == "ipaddress" and not reach.Reach.of([str(v) for v in vals]).is_world(
                    unparsable_is_world=True
                )
            elif ok:
                ok = all(_fixed(k, v) for v in vals)
            (good if ok else bad).append(str(key))
    return ConditionVerdict(tuple(good), tuple(bad))


def _actions(st: dict[str, Any]) -> list[str]:
    return [str(a).lower() for a in as_list(st.get("Action")) if isinstance(a, str)]


def _oidc_providers(principal: Any) -> list[str]:
    """The OIDC providers (host/path, as condition keys name them) a Federated principal names."""
    if not isinstance(principal, dict):
        return []
    out = []
    for p in as_list(principal.get("Federated")):
        if isinstance(p, str) and ":oidc-provider/" in p:
            out.append(p.split(":oidc-provider/", 1)[1])
        elif isinstance(p, str) and "saml-provider/" not in p and "." in p and not p.startswith("arn:"):
            out.append(p)  # cognito-identity.amazonaws.com, accounts.google.com, graph.facebook.com
    return out


def _sub_restricted(condition: Any, provider: str) -> bool:
    """The statement conditions the provider's ``sub`` (Cognito: ``amr`` / ``aud``, which identify the pool)."""
    if not isinstance(condition, dict):
        return False
    wanted = {f"{provider.lower()}:sub"}
    if provider.lower() == "cognito-identity.amazonaws.com":
        wanted = {"cognito-identity.amazonaws.com:aud"}
    for op, block in condition.items():
        _, positive = _operator(str(op))
        if not positive or not isinstance(block, dict):
            continue
        for key, values in block.items():
            if str(key).strip().lower() not in wanted:
                continue
            vals = [v for v in as_list(values) if isinstance(v, str)]
            if vals and all(v.strip() not in ("*", "system:serviceaccount:*", "repo:*") for v in vals):
                return True
    return False


@dataclass(frozen=True)
class Finding:
    index: int  # the statement's index
    why: str


def public_statements(doc: dict[str, Any] | None) -> list[Finding]:
    """Allow statements that let everyone use the resource (or, for a web-identity trust, every identity of
    the provider): the verdict every principal-bearing guardrail uses."""
    out: list[Finding] = []
    for i, st in statements(doc):
        if str(st.get("Effect", "")).strip() != "Allow":
            continue
        cond = st.get("Condition")
        verdict = analyse(cond)
        if "NotPrincipal" in st or principal_is_public(st.get("Principal")):
            if verdict.restricts:
                continue
            shown = "NotPrincipal (everyone but those named)" if "NotPrincipal" in st else "Principal '*'"
            if verdict.ignored:
                why = f"{shown} under conditions that restrict nobody ({', '.join(verdict.ignored)})"
            else:
                why = f"{shown} without a condition"
            out.append(Finding(i, why))
            continue
        providers = _oidc_providers(st.get("Principal"))
        if providers and (WEB_IDENTITY in _actions(st) or "sts:*" in _actions(st) or "*" in _actions(st)):
            open_to = [p for p in providers if not _sub_restricted(cond, p)]
            if open_to:
                out.append(
                    Finding(
                        i,
                        f"a web-identity trust of {', '.join(open_to)} without a '{open_to[0]}:sub' condition: "
                        "every identity the provider issues tokens for (every service account of the cluster) "
                        "can assume it",
                    )
                )
    return out


def public_principal_value(principal: Any, restricted_by: list[str]) -> bool:
    """A bare principal input (lambda.Permission's ``principal``): ``*`` with none of the inputs that scope it."""
    return isinstance(principal, str) and principal.strip() == "*" and not restricted_by
