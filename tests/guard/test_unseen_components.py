"""A multi-language component the offline plan cannot expand is undecided for reviewed-types-only (prod blocks,
dev warns), end to end through `gpucloud plan`'s evaluation; a local component with children passes."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest

from gpucloud.plan import run_callable
from gpucloud.report.pipeline import build_report

CONFIGS = Path(__file__).resolve().parents[2] / "policies" / "configs"
POLICY = "reviewed-types-only"


def _program() -> None:
    import pulumi_aws as aws

    # Remote: registered by its provider, which the offline plan does not run, and of a type no expansion model
    # covers (eks:index:Cluster now has one, gpucloud.plan.remote).
    pulumi.ComponentResource("acmecorp:index:Cluster", "cluster", {"desiredCapacity": 2}, None, remote=True)
    local = pulumi.ComponentResource("mycorp:index:Data", "data", None, None)
    aws.s3.BucketV2("bucket", opts=pulumi.ResourceOptions(parent=local))


def _section(config: str) -> dict:
    plan = run_callable(_program, project="t", stack=config)
    cfg = json.loads((CONFIGS / f"{config}.json").read_text())
    return build_report(plan, policy_config=cfg, conformance=False)["policies"]


@pytest.mark.parametrize(("config", "action", "blocked"), [("prod", "block", 1), ("dev", "warn", 0)])
def test_childless_remote_component_is_undecided(config: str, action: str, blocked: int) -> None:
    section = _section(config)
    mine = [u for u in section["undecided"] if u["policy"] == POLICY]
    assert [(u["urn"].rsplit("::", 1)[-1], u["field"], u["action"]) for u in mine] == [("cluster", "children", action)]
    assert mine[0]["reason"].startswith("component acmecorp:index:Cluster registered no children the plan can see")
    violations = [v for v in section["violations"] if v["policy"] == POLICY]
    assert len(violations) == blocked
    assert not [v for v in violations if "data" in v["urn"] or "bucket" in v["urn"]]
