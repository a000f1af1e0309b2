"""Drain timing: prod's training pools with a checkpoint model written too slowly for spot's two-minute notice or
EKS's 15-minute managed-node-group drain."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.conformance import Finding, registered_checks, run_conformance
from gpucloud.plan import run_program

ROOT = Path(__file__).resolve().parents[2]
PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpucloud:platform"]
H100 = "gpucloud:platform.nodePools[0].rollout.checkpoint"


def findings(write_seconds: int | None = None) -> list[Finding]:
    spec: dict[str, Any] = copy.deepcopy(PROD)
    pool = spec["nodePools"][0]
    assert pool["name"] == "train-h100"
    if write_seconds is not None:
        pool["rollout"]["checkpoint"]["writeSeconds"] = write_seconds
    plan = run_program(ROOT, "prod", config_overrides={"gpucloud:platform": spec})
    return [f for f in run_conformance(plan, only=["rollout"]).findings if f.check.startswith("rollout.")]


def groups(found: list[Finding], check: str) -> list[str]:
    return sorted(f.urn.rsplit("::", 1)[1] for f in found if f.check == check)


def test_the_check_is_registered_and_runs_after_the_upgrade_checks() -> None:
    from gpucloud.conformance.builtin import RUN_ORDER

    assert "rollout" in registered_checks()
    assert RUN_ORDER.index("drain_timing") > RUN_ORDER.index("upgrades")


def test_prods_120_second_drain_fits_the_spot_notice() -> None:
    # writeSeconds 90 + 30 s margin = 120 s: exactly the notice, not over it.
    assert findings() == []


def test_a_spot_pool_draining_longer_than_the_notice_warns_with_its_checkpoint_model() -> None:
    found = findings(write_seconds=240)  # drain grace 270 s
    assert groups(found, "rollout.spot-notice") == ["gpucloud-prod-train-h100-spot"]
    assert groups(found, "rollout.managed-drain-limit") == []
    (f,) = found
    assert (f.severity, f.field) == ("warning", H100)
    assert f.message == (
        "pool train-h100 may run on spot, and its checkpoint model (intervalMinutes 30, writeSeconds 240) gives a "
        "drain grace of 270 s: the emergency checkpoint cannot be written in the 120 s between the interruption "
        "notice and the reclaim"
    )
    assert f.expected.startswith("a drain grace of at most 120 s (writeSeconds at most 90): checkpoint more often")
    assert "two minutes before EC2 stops or terminates" in f.source


@pytest.mark.parametrize(("write_seconds", "warned"), [(870, False), (871, True)])
def test_a_managed_pool_draining_longer_than_15_minutes_warns(write_seconds: int, warned: bool) -> None:
    found = findings(write_seconds=write_seconds)  # drain grace 900 s / 901 s
    expected = ["gpucloud-prod-train-h100-on-demand", "gpucloud-prod-train-h100-spot"] if warned else []
    assert groups(found, "rollout.managed-drain-limit") == expected
    # The spot group is over the notice either way.
    assert groups(found, "rollout.spot-notice") == ["gpucloud-prod-train-h100-spot"]
    limit = [f for f in found if f.check == "rollout.managed-drain-limit"]
    for f in limit:
        assert f.severity == "warning" and "fails the node group update (PodEvictionFailure)" in f.message
    assert all("within 15 minutes" in f.source for f in limit)
