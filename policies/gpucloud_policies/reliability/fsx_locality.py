"""GC-REL-053 fsx-same-az: an FSx for Lustre file system sits in one subnet, in the AZ of the GPU pools it feeds.

Cross-AZ Lustre traffic adds latency and inter-AZ data charges on every read of the training set.
"""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import types as T

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, count, deciding, get
from ..pools import SUBNET, pools
from ..stack import linked, of_type, subnet_azs

LUSTRE = T.LUSTRE


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    file_systems = of_type(args.resources, LUSTRE)
    if not file_systems:
        return
    gpu_pools = []
    for p in pools(args.resources):
        with deciding(p.resource):
            if p.known().is_gpu:
                gpu_pools.append((p, subnet_azs(p.subnets)))
    for fs in file_systems:
        with deciding(fs):
            _check(fs, gpu_pools, report)


def _check(fs: Any, gpu_pools: list[Any], report: StackReport) -> None:
    n_subnets = count(get(fs.props, "subnetIds"))
    if n_subnets > 1:
        report(
            fs.urn,
            f"lists {n_subnets} subnets; Lustre file systems live in one. Fix: pass the "
            "single subnet in the GPU pools' availability zone.",
        )
        return
    fs_azs = subnet_azs(linked(fs, "subnetIds", SUBNET))
    if not fs_azs:
        return
    for pool, pool_azs in gpu_pools:
        if pool_azs and not (fs_azs & pool_azs):
            report(
                fs.urn,
                f"is in {sorted(fs_azs)} but GPU pool {pool.resource.name} runs in "
                f"{sorted(pool_azs)}: every read crosses zones. Fix: put the file system in the pool's zone.",
            )


GUARDRAIL = Guardrail(
    id="GC-REL-053",
    name="fsx-same-az",
    description="FSx for Lustre must sit in the availability zone of the GPU pools it feeds.",
    category="reliability",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Create the file system in a subnet of the GPU pool's availability zone (EFA training "
    "pools are single-AZ).",
    references=("FSx for Lustre performance guide",),
    kind="stack",
    validate=validate,
)
