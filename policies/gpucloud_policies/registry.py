"""The one registry of gpucloud guardrails, in evaluation order (remediations run in this order too)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from . import coverage, surface_paths
from .base import Guardrail
from .cost import budget, reserved_capacity, scale_to_zero, spend_cap, spot_share, tags
from .gpu import capacity_block_placement, count_cap, deprecated, efa_shape, family_allowlist, market, min_memory
from .reliability import checkpoint_versioning, fsx_locality, interruption, non_interruptible, retain, retained_key
from .security import (
    cloudtrail,
    ebs_default,
    ebs_encrypted,
    efs_cmk,
    eks_endpoint,
    eks_logging,
    eks_secrets,
    encryption_off,
    fsx_cmk,
    hop_limit,
    iam_admin,
    iam_trust,
    imdsv2,
    k8s_exemptions_used,
    k8s_image_digest,
    k8s_pod_security,
    k8s_public_lb,
    k8s_rbac_admin,
    k8s_rbac_anonymous,
    kms_rotation,
    nacl_world_ingress,
    plaintext_secrets,
    public_data_endpoint,
    public_exposure,
    public_ip,
    rds_cmk,
    resource_policy_public,
    reviewed_types,
    s3_explicit_pab,
    s3_public_access,
    s3_sse_kms,
    s3_tls,
    secrets_entropy,
    userdata_secrets,
    vpc_flow_logs,
    world_ingress,
)

GUARDRAILS: tuple[Guardrail, ...] = tuple(
    m.GUARDRAIL
    for m in (
        # GPU type and shape
        family_allowlist,
        min_memory,
        deprecated,
        market,
        count_cap,
        efa_shape,
        capacity_block_placement,
        # cost
        spend_cap,
        spot_share,
        tags,
        budget,
        scale_to_zero,
        reserved_capacity,
        # security
        eks_endpoint,
        eks_secrets,
        eks_logging,
        imdsv2,
        hop_limit,
        ebs_encrypted,
        public_ip,
        userdata_secrets,
        plaintext_secrets,
        secrets_entropy,
        world_ingress,
        nacl_world_ingress,
        fsx_cmk,
        s3_public_access,
        s3_explicit_pab,
        s3_sse_kms,
        s3_tls,
        iam_admin,
        iam_trust,
        resource_policy_public,
        reviewed_types,
        # data at rest, logs, Kubernetes workloads
        ebs_default,
        efs_cmk,
        rds_cmk,
        kms_rotation,
        cloudtrail,
        vpc_flow_logs,
        # inventory-driven: every other type of the surface inventory's network and data paths
        public_data_endpoint,
        public_exposure,
        encryption_off,
        k8s_pod_security,
        # reads what k8s-pod-security matched on the same plan, so it runs right after it
        k8s_exemptions_used,
        k8s_public_lb,
        k8s_image_digest,
        k8s_rbac_anonymous,
        k8s_rbac_admin,
        # reliability
        checkpoint_versioning,
        interruption,
        non_interruptible,
        retain,
        retained_key,
        fsx_locality,
    )
)
# The inventory-driven guardrails leave the types another guardrail names for the same surface to it.
GUARDRAILS = surface_paths.narrowed(GUARDRAILS)

# Names of policies folded into others. Not aliases: an old entry's keys may not mean the same under the new
# policy, so a config naming one is refused with where to move it.
RETIRED: dict[str, str] = {
    "lb-internal-only": "retired: folded into k8s-no-public-load-balancer (GC-SEC-147), which judges LoadBalancer "
    'Services and Ingresses. Fix: move this entry under "k8s-no-public-load-balancer" (allowInternetFacing keeps '
    "its meaning for load balancers restricted to known source ranges; one open to the world also needs an "
    "allowedPublic entry).",
}


def _check_unique() -> None:
    for attr in ("id", "name"):
        seen = [getattr(g, attr) for g in GUARDRAILS]
        dupes = sorted({x for x in seen if seen.count(x) > 1})
        if dupes:
            raise ValueError(f"duplicate guardrail {attr}s: {dupes}")


_check_unique()
# The coverage model reads the guardrails' declared surfaces and types; registered here, so that it imports no
# registry (reviewed-types-only, one of the guardrails above, imports it).
coverage.use(GUARDRAILS)


def by_name() -> dict[str, Guardrail]:
    return {g.name: g for g in GUARDRAILS}


@functools.cache
def _policies() -> tuple[Policy, ...]:
    return tuple(g.policy() for g in GUARDRAILS)


def policies() -> list[Policy]:
    """CrossGuard policy objects, built once (they are stateless)."""
    return list(_policies())


def initial_config() -> dict[str, Any]:
    """The pack's initial config (library-style defaults, as AwsGuard does): each policy's schema defaults.

    The Pulumi CLI applies schema defaults itself; shipping them as initial config too makes the effective
    config visible in `pulumi policy ls` / Pulumi Cloud, and the offline evaluator applies the same layering.
    """
    out: dict[str, Any] = {}
    for g in GUARDRAILS:
        defaults = g.defaults()
        if defaults:
            out[g.name] = defaults
    return out


def schema_for(name: str) -> Mapping[str, Any]:
    g = by_name()[name]
    return {"type": "object", "properties": {k: dict(v) for k, v in g.config.items()}}
