"""GC-GPU-045 efa-shape: multi-node training pools use EFA-capable types with every EFA interface configured,
in one availability zone; EFA templates never put an efa-only interface at card 0 / device 0."""

from __future__ import annotations

from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    deciding,
    get,
    integer,
    mark_undecided,
    text,
)
from ..capacity import is_training, workload
from ..pools import efa_capable, efa_max, pools
from ..stack import subnet_azs
from .common import WORKLOAD_LABEL_KEYS


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    label_keys = list(cfg["workloadLabelKeys"])
    for pool in pools(args.resources):
        with deciding(pool.resource):
            _check(pool.known(), report, cfg, label_keys)


def _check(pool: Any, report: StackReport, cfg: Config, label_keys: list[str]) -> None:
    r = pool.resource
    efa = pool.efa_interfaces()
    for ni in efa:
        if text(get(ni, "interfaceType")) == "efa-only" and (
            (integer(get(ni, "networkCardIndex"), 0) or 0) == 0 and (integer(get(ni, "deviceIndex"), 0) or 0) == 0
        ):
            report(
                r.urn,
                "an efa-only interface sits at network card 0 / device 0, which needs an IP "
                "interface. Fix: make the primary interface interfaceType 'efa'.",
            )
    training = is_training(workload(r.resource_type, r.props, label_keys), set(cfg["workloads"]))
    multi_node = (pool.max_size or 0) >= int(cfg["minNodes"])
    if not (efa or (training and multi_node and pool.is_gpu)):
        return
    bad = [t for t in pool.instance_types if not efa_capable(t)]
    if bad:
        report(
            r.urn,
            f"instance types {bad} do not support EFA, which multi-node training needs. "
            "Fix: use EFA-capable types (p4d, p5, g6e.12xlarge+, trn1) or keep the pool single-node.",
        )
        return
    want = min((efa_max(t) for t in pool.instance_types), default=0)
    if len(efa) < want:
        report(
            r.urn,
            f"{len(efa)} of {want} EFA interfaces configured in the launch template. Fix: add one "
            "networkInterfaces entry with interfaceType 'efa' per network card (catalog efa_interfaces).",
        )
    if not pool.subnets and pool.subnet_count > 1:
        # Literal subnet IDs: their zones are not in the plan, so the one-AZ rule cannot be decided for this
        # pool alone (the others are still judged).
        mark_undecided(r.urn, "subnetIds", "the availability zones of literal subnet IDs are not visible to policies")
        return
    azs = subnet_azs(pool.subnets)
    if len(azs) > 1 or (not azs and len(pool.subnets) > 1):
        report(
            r.urn,
            f"spans availability zones {sorted(azs) or len(pool.subnets)}; EFA traffic cannot cross "
            "zones. Fix: give the pool subnets in exactly one availability zone.",
        )


GUARDRAIL = Guardrail(
    id="GC-GPU-045",
    name="efa-shape",
    description="Multi-node training pools need EFA-capable types, all EFA interfaces configured, and one AZ.",
    category="gpu",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Use EFA-capable instance types, add one EFA network interface per network card to the "
    "launch template, and place the pool in a single availability zone (and a cluster placement group unless it "
    "runs on a Capacity Block bought outside one).",
    references=("AWS EFA user guide", "terraform-aws-eks #3044", "SH EC2.17 (suppress on EFA pools)"),
    kind="stack",
    validate=validate,
    config={
        "minNodes": {
            "type": "integer",
            "minimum": 1,
            "default": 2,
            "description": "A training pool whose max size reaches this many nodes counts as multi-node.",
        },
        "workloads": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["training"],
            "description": "Workload label values that mean multi-node training.",
        },
        "workloadLabelKeys": WORKLOAD_LABEL_KEYS,
    },
)
