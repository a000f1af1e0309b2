"""GC-SEC-170 public-data-endpoint: no data service is made reachable from the internet, and no block on public
access is turned off, on every type the surface inventory lists as carrying network exposure.

Inventory-driven (surface_paths.py): the paths the inventory lists for a type are read and judged by what the
property name says, the same for every type:

- ``publiclyAccessible`` / ``publicConnectivity`` true: the database, broker, replication instance, graph or
  warehouse gets a public DNS name resolving to a public address (RDS, Neptune, Redshift, DMS, Amazon MQ,
  Timestream for InfluxDB, Lightsail databases, Neptune Analytics). Only an explicit true is a finding, as AWS
  Config's managed rules judge it (rds-instance-public-access-check, dms-replication-not-public,
  redshift-cluster-public-access-check: NON_COMPLIANT when PubliclyAccessible is true): certain, and a data store
  is never a front end. Unset is not judged here (the pulumi-aws inputs of RDS, Redshift, MQ, Neptune and DMS
  default to private; a service whose API default is public would need its own rule).
- an MSK ``connectivityInfo.publicAccess.type`` of ``SERVICE_PROVIDED_EIPS``: brokers on public addresses.
- a network access document with a rule set whose ``AllowFromPublic`` is true (OpenSearch Serverless network
  policies): the collections and dashboards it names are reachable from the internet.
- a public-access block flag set false (S3 access points, the account-level and Multi-Region Access Point
  blocks, Secrets Manager ``blockPublicPolicy``, the EMR block on public security-group rules): the explicit
  off-switch of a protection, judged like a bucket's own block (s3-public-access-block, GC-SEC-019).

Types some guardrail already names for this surface are left to it (registry.py narrows the declaration).
"""

from __future__ import annotations

from typing import Any

from .. import surface_paths as sp
from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, text

JUDGED = frozenset({sp.TEMPLATE, sp.PUBLIC_FLAG, sp.BLOCK_FLAG, sp.PUBLIC_ACCESS, sp.PUBLIC_DOC})
# A public-address flag on compute or a web front end is the advisory guardrail's (public_exposure.py).


def kind(token: str, path: str) -> str | None:
    """This guardrail's kind of a network path (None where another guardrail or nobody judges it)."""
    k = sp.network_kind(token, path)
    if k == sp.PUBLIC_FLAG and not sp.is_data_endpoint(path):
        return None
    return k if k in JUDGED else None


def _claims(token: str, path: str) -> str | None:
    # A type is read whole when every path has a kind for some network guardrail; this one claims those with one
    # of its own kinds among them.
    k = sp.network_kind(token, path)
    if k == sp.PUBLIC_FLAG and not sp.is_data_endpoint(path):
        return "other"
    return k


TYPES = sp.claimed("network", _claims, JUDGED)


def message(k: str, where: str, value: Any) -> str | None:
    if k == sp.PUBLIC_FLAG and sp.public_flag(value):
        return (
            f"{where} is {value!r}: the data service gets a public endpoint on the internet. Fix: set it to false "
            "and reach it from inside the VPC (VPN, peering, PrivateLink)."
        )
    if k == sp.BLOCK_FLAG and sp.block_off(value):
        return f"{where} is {value!r}: a block on public access is turned off. Fix: set it to true (or remove it)."
    if k == sp.PUBLIC_DOC and sp.allows_public(value):
        return (
            f"{where} has a rule set with AllowFromPublic true: the collections and dashboards it names take "
            "connections from the internet. Fix: set AllowFromPublic false and list the VPC endpoints "
            "(SourceVPCEs) or services (SourceServices) that may connect."
        )
    if k == sp.PUBLIC_ACCESS:
        mode = text(get(value, "type"))
        if mode and mode.upper() not in ("DISABLED", ""):
            return (
                f"{where}.type is {mode!r}: the brokers get public addresses. Fix: set it to 'DISABLED' and reach "
                "the cluster from inside the VPC."
            )
    return None


def _template(args: Any, report: Report) -> None:
    """A template's resources, judged by the same property names (CloudFormation's PascalCase, camelCased)."""
    for where, inner, value in sp.template_properties(args.resource_type, args.props):
        if inner.endswith("publicAccess.type"):
            found = message(sp.PUBLIC_ACCESS, where.rsplit(".", 1)[0], {"type": value})
        else:
            k = kind("", inner)
            found = message(k, where, value) if k is not None and k != sp.TEMPLATE else None
        if found:
            report(found)


def validate(args: Any, report: Report, cfg: Config) -> None:
    for path in sp.paths_of(args.resource_type, "network"):
        k = kind(args.resource_type, path)
        if k == sp.TEMPLATE:
            _template(args, report)
            continue
        if k is None:
            continue
        for where, value in sp.values(args.props, path):
            found = message(k, where, value)
            if found:
                report(found)


GUARDRAIL = Guardrail(
    id="GC-SEC-170",
    name="public-data-endpoint",
    description="Data services must not be publicly accessible, and blocks on public access must not be turned "
    "off (every type the surface inventory lists as carrying network exposure).",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set publiclyAccessible / publicConnectivity false (MSK publicAccess type DISABLED) and "
    "reach data services from inside the VPC; leave public-access blocks on.",
    references=("CKV_AWS_17", "CKV_AWS_87", "CKV_AWS_69", "SH RDS.2", "SH Redshift.1", "SH DMS.1", "SH S3.1"),
    kind="resource",
    surfaces=frozenset({"network"}),
    resource_types=TYPES,
    validate=validate,
)
