"""GC-SEC-152 resource-policy-no-public-principal: no resource policy lets everyone use the resource.

Which types carry a principal and where is the surface inventory's (gpucloud.surface, generated from the
provider SDKs): every type whose principal surface the scope table does not put out of scope is read at the
inventory's own property paths (readers/paths.py walks nested blocks and lists), so a provider upgrade that adds
a type with a resource policy is read, or fails the coverage test until it is triaged. Two kinds of path:

- a policy *document* (``policy``, ``accessPolicy``, ``accessPolicies``, ``resourcePolicy``, ``keyPolicy``):
  a statement that allows Principal ``*`` (or a NotPrincipal Allow) under no condition that restricts *who* is
  public: anyone with an AWS account (for some actions, anyone at all) may read, write, decrypt or invoke. The
  verdict is the principal reader's (readers/principals.py), the same one the trust-policy guardrail uses:
  ``aws:SourceArn``/``aws:SourceAccount``/``aws:PrincipalOrgID``/``aws:SourceVpce``/... with fixed values
  restrict; ``aws:SecureTransport`` or ``aws:CurrentTime`` do not. An OpenSearch Serverless data access policy
  (a list of ``{Rules, Principal}``) is read as one Allow per rule.
- a bare *principal* input (``principal``, ``principals``, ``permissions.principal``): ``*`` is everyone.
  ``lambda.Permission`` and ``lambda.LayerVersionPermission`` ``*`` is public unless ``sourceArn``,
  ``sourceAccount`` or ``principalOrgId`` (a layer: ``organizationId``) scopes it; ``cloudwatch.EventPermission``
  ``*`` unless its ``condition`` names an organisation.

An OpenSearch / Elasticsearch domain placed in a VPC (``vpcOptions.subnetIds``) is not judged on its access
policy: AWS recommends an open access policy there, reachability being the VPC's and the security groups'
("Launching your Amazon OpenSearch Service domains within a VPC": "we recommend using an open access policy").
A role's trust policy is judged by iam-no-public-trust.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from gpucloud import surface

from .. import coverage
from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, present, strings, text, unknown
from ..readers import paths, principals

# Leaf names of the principal surface (gpucloud/surface/classify.py ``_PRINCIPAL``) read as a policy document,
# and those read as a bare principal; a trust policy (``assumeRolePolicy``) is iam-no-public-trust's.
DOCUMENT_LEAVES = frozenset({"policy", "accessPolicy", "accessPolicies", "resourcePolicy", "keyPolicy"})
PRINCIPAL_LEAVES = frozenset({"principal", "principals"})
VPC_DOMAINS = frozenset({"aws:opensearch/domain:Domain", "aws:elasticsearch/domain:Domain"})


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


@functools.cache
def documents() -> dict[str, tuple[str, ...]]:
    """Type token -> its principal paths, for every inventory type this guardrail reads: each path a document or
    a bare principal, and the scope table not putting the type's principal surface out of scope."""
    table = coverage.scope()
    out: dict[str, tuple[str, ...]] = {}
    for token, surfaces in surface.types().items():
        found = surfaces.get("principal", [])
        if not found or table.get(token, {}).get("principal", "").startswith("out of scope"):
            continue
        if all(_leaf(p) in DOCUMENT_LEAVES | PRINCIPAL_LEAVES for p in found):
            out[token] = tuple(found)
    return out


LAMBDA_PERMISSION = "aws:lambda/permission:Permission"
LAYER_PERMISSION = "aws:lambda/layerVersionPermission:LayerVersionPermission"
EVENT_PERMISSION = "aws:cloudwatch/eventPermission:EventPermission"
# Inputs that scope a bare principal "*" (pulumi-aws Permission / LayerVersionPermission / EventPermission).
_SCOPES = {
    LAMBDA_PERMISSION: ("sourceArn", "sourceAccount", "principalOrgId"),
    LAYER_PERMISSION: ("organizationId",),
    EVENT_PERMISSION: ("condition",),
}
FIX = (
    "Fix: name the accounts, roles or service principals that need access, or add a Condition that restricts "
    "who (aws:SourceArn / aws:SourceAccount for a service, aws:PrincipalOrgID for your organisation, "
    "aws:SourceVpce for an endpoint)."
)


def _read(props: Any, path: str) -> Iterator[tuple[str, Any]]:
    for where, value in paths.values(props, path):
        if value is paths.UNKNOWN:
            raise unknown(where, f"{where} is computed, so who it lets in is unknown at preview")
        yield where, value


def _document(value: Any) -> dict[str, Any] | None:
    """A policy document; an OpenSearch Serverless data access policy (``[{Rules, Principal}]``) as one Allow
    statement per rule, its principals as AWS principals."""
    raw = json.loads(value) if isinstance(value, str) and value.lstrip().startswith("[") else value
    if isinstance(raw, list):
        rules = [r for r in raw if isinstance(r, dict) and "Principal" in r]
        return {"Statement": [{"Effect": "Allow", "Principal": {"AWS": r["Principal"]}} for r in rules]}
    return principals.document(value)


def _in_vpc(props: Any) -> bool:
    return bool(strings(get(props, "vpcOptions", "subnetIds")))


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type in _SCOPES:
        principal = text(get(args.props, "principal"))
        scoped = [k for k in _SCOPES[args.resource_type] if present(args.props, k)]
        if principals.public_principal_value(principal, scoped):
            # These types take the scope as inputs, not as a policy Condition: the fix names the inputs.
            scopes = _SCOPES[args.resource_type]
            report(
                f"principal '*' with none of {', '.join(scopes)} set: every AWS account can use it. Fix: name the "
                f"accounts or service principals that need access, or set {' / '.join(scopes)} to scope it."
            )
        return
    if args.resource_type in VPC_DOMAINS and _in_vpc(args.props):
        return
    for path in documents()[args.resource_type]:
        for where, value in _read(args.props, path):
            if _leaf(path) in PRINCIPAL_LEAVES:
                if any(principals.principal_is_public(p) for p in [value, *strings(value)]):
                    report(f"{where} is '*': everyone is granted access. {FIX}")
                continue
            try:
                doc = _document(value)
            except ValueError:
                continue
            for f in principals.public_statements(doc):
                report(f"{where} Statement[{f.index}] allows {f.why}: the resource is public. {FIX}")


GUARDRAIL = Guardrail(
    id="GC-SEC-152",
    name="resource-policy-no-public-principal",
    description="Resource policies and principal inputs of every type the surface inventory lists (queues, topics, "
    "KMS keys, registries, functions, secrets, buckets, APIs, domains and other stores) must not allow Principal "
    "'*' unless a condition restricts who.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Replace Principal '*' with the principals that need access, or add aws:SourceArn, "
    "aws:SourceAccount, aws:PrincipalOrgID or aws:SourceVpce conditions with fixed values.",
    references=(
        "CKV_AWS_168",
        "CKV_AWS_169",
        "CKV_AWS_32",
        "CKV_AWS_33",
        "CKV_AWS_301",
        "CKV_AWS_70",
        "SH SQS.3",
        "SH Lambda.1",
        "SH KMS.5",
        "SH SNS.4",
        "IAM Access Analyzer",
    ),
    kind="resource",
    surfaces=frozenset({"principal"}),
    resource_types=frozenset({*documents(), *_SCOPES}),
    validate=validate,
)
