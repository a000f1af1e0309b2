"""The Amazon EKS image registry of each Region, where AWS replicates the images of its EKS add-ons (the EFA device
plugin among them), from eks_registries.json (the EKS user guide's table, with its source).

A node pulls from its own Region's registry: the in-Region copy needs no cross-Region transfer, and reaches the
node through the VPC's ECR endpoints instead of the NAT gateway.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

SCHEMA = "gpucloud.eks-registries/v1"


@functools.cache
def _accounts() -> dict[str, str]:
    data = json.loads(resources.files(__package__).joinpath("eks_registries.json").read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"eks_registries.json schema {data.get('schema')!r} is not {SCHEMA!r}")
    return dict(data["accounts"])


def _dns_suffix(region: str) -> str:
    if region.startswith("cn-"):
        return "amazonaws.com.cn"
    if region.startswith("eusc-"):
        return "amazonaws.eu"
    return "amazonaws.com"


def eks_registry(region: str) -> str | None:
    """``<account>.dkr.ecr.<region>.<suffix>`` for a Region EKS serves, else None (no in-Region copy to name)."""
    account = _accounts().get(region)
    return f"{account}.dkr.ecr.{region}.{_dns_suffix(region)}" if account else None


__all__ = ["eks_registry"]
