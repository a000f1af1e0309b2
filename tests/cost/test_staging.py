"""The shipped staging stack: its Karpenter inference pool is in the cost with expected and ceiling figures, the
EKS support calendar warns by date, and the text and markdown views say so. One plan for the module."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from gpucloud.catalog import get_catalog

ROOT = Path(__file__).resolve().parents[2]
SNAP: dict[str, Any] = json.loads(resources.files("gpucloud.prices").joinpath("snapshot.json").read_text())


@pytest.fixture(scope="module")
def staging() -> Any:
    from gpucloud.plan import run_program

    return run_program(ROOT, "staging")


def test_staging_karpenter_pool_is_priced_with_its_ceiling(staging: Any) -> None:
    from gpucloud.cost import price_plan

    staging.config["gpucloud:pricing"] = {"asOf": "2027-03-25"}
    cost = price_plan(staging)
    items = [i for i in cost["items"] if i["type"] == "kubernetes:karpenter.sh/v1:NodePool"]
    pool = [i for i in items if i["pricing"] != "storage"]
    # The EC2NodeClass's 200Gi gp3 root at 250 MB/s, x 2 expected nodes and x 6 (the GPU limit's node count).
    assert [(i["name"], i["quantity"], i["max_quantity"], i["unit"]) for i in items if i["pricing"] == "storage"] == [
        ("gpucloud-staging-infer-l40s-nodepool node volumes (gp3)", 400, 1200, "GiB-month"),
        ("gpucloud-staging-infer-l40s-nodepool node volumes gp3 throughput above 125 MB/s", 250, 750, "MBps-month"),
    ]
    east = SNAP["regions"]["us-east-1"]
    spot = round(east["g6e.xlarge"]["on_demand"]["usd"] * (1 - get_catalog().family_pricing("g6e").spot_discount), 6)
    dear = east["g6e.4xlarge"]["on_demand"]["usd"]
    # desiredSize 2 on spot at the cheapest admitted type; nvidia.com/gpu limit 6 = 6 x the dearest 1-GPU type.
    assert [(i["instance_type"], i["pricing"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"])
            for i in pool] == [
        ("g6e.xlarge", "spot", 2, 0, round(2 * spot * 730, 2), 0.0),
        ("g6e.4xlarge", "on-demand", 0, 6, 0.0, round(6 * dear * 730, 2)),
    ]  # fmt: skip
    assert round(6 * dear * 730, 2) == 13158.57
    assert cost["region"] == "us-east-1" and cost["ceiling_unbounded"] is False
    # Staging pins upgradePolicy.supportType STANDARD: the warning says EKS upgrades it instead of billing more.
    assert any("Kubernetes 1.35 leaves EKS standard support on 2027-03-27 (2 days after 2027-03-25)" in w
               for w in cost["warnings"])  # fmt: skip


def test_views_show_region_and_warnings(staging: Any) -> None:
    from gpucloud.report.pipeline import build_report
    from gpucloud.report.render import render_markdown, render_text

    staging.config["gpucloud:pricing"] = {"asOf": "2027-03-25"}
    report = build_report(staging)
    text = render_text(report, color=False)
    assert "us-east-1 rates as of 2027-03-25" in " ".join(text.split())
    assert "cost warning:" in text
    assert "> ⚠️ gpucloud-staging-eks-cluster: Kubernetes 1.35 leaves EKS standard support" in render_markdown(report)
