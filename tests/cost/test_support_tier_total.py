"""Issue 27: the EKS extended-support control plane rate is in the total after the end of standard support, not a
warning only (`--as-of 2026-12-15` on a 1.34 cluster: $438 a month)."""

from __future__ import annotations

import pulumi_aws as aws
import pytest

from gpucloud.cost import price_plan
from gpucloud.plan import run_callable


def _cluster_134() -> None:
    aws.eks.Cluster("c", name="c", role_arn="arn:aws:iam::123456789012:role/eks", version="1.34",
                    vpc_config={"subnet_ids": ["subnet-1"]})  # fmt: skip


def _priced(as_of: str) -> dict:
    plan = run_callable(_cluster_134, region="us-east-1")
    plan.config["gpucloud:pricing"] = {"asOf": as_of}
    return price_plan(plan)


# EKS pricing page: $0.10 per cluster-hour in standard support, $0.60 in extended support (730 h a month).
# EKS release calendar (as recorded in eks.json): 1.34 leaves standard support on 2026-12-02.
@pytest.mark.parametrize(
    ("as_of", "rate", "monthly"),
    [("2026-12-01", 0.1, 73.0), ("2026-12-02", 0.1, 73.0), ("2026-12-03", 0.6, 438.0), ("2026-12-15", 0.6, 438.0)],
)
def test_the_control_plane_rate_in_the_total_follows_the_support_tier(as_of: str, rate: float, monthly: float) -> None:
    cost = _priced(as_of)
    (item,) = cost["items"]
    assert (item["unit_price"], item["monthly"], cost["monthly"]) == (rate, monthly, monthly)
    assert "kubernetes-versions" in item["rate_source"]
