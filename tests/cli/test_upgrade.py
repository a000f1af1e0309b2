"""`gpucloud upgrade`: the ordered steps of prod's move to 1.36, every step's spec planned clean, bad input exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpucloud.cli import main
from gpucloud.upgrade import upgrade_path

ROOT = Path(__file__).resolve().parents[2]


def prod_spec() -> dict:
    return yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpucloud:platform"]


def test_prod_to_1_36_steps_in_order_and_every_step_plans_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["upgrade", "--stack", "prod", "--program", str(ROOT), "--to", "1.36", "--verify", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (report["schema"], report["from"], report["to"]) == ("gpucloud.upgrade/v1", "1.35", "1.36")
    assert [s["title"] for s in report["steps"]] == [
        "control plane 1.35 -> 1.36",
        "EKS add-ons to the 1.36 builds",
        "system node group to 1.36",
        "GPU pool infer-l40s (inference) to 1.36",
        "GPU pool train-h100 (training) to 1.36",
        "GPU pool train-h200 (training) to 1.36",  # the Capacity Block pool last: it cannot surge
    ]
    assert [s["plan"]["conformance_errors"] for s in report["steps"]] == [0, 0, 0, 0, 0, 0]
    first = report["steps"][0]
    assert {"path": "cluster.kubernetesVersion", "before": "1.35", "after": "1.36"} in first["changes"]
    # The control plane moves alone: nodes and add-ons are held at 1.35 in that step's spec.
    assert first["spec"]["cluster"]["systemNodeGroup"]["kubernetesVersion"] == "1.35"
    assert first["spec"]["cluster"]["addonVersions"]["kube-proxy"] == "v1.35.3-eksbuild.13"
    # The last step's spec is the plain 1.36 spec: every hold released.
    last = report["steps"][-1]["spec"]
    assert last["cluster"]["kubernetesVersion"] == "1.36"
    assert "addonVersions" not in last["cluster"] or last["cluster"]["addonVersions"] == {}
    assert all("kubernetesVersion" not in p for p in last["nodePools"])
    assert "no surge on capacity-block capacity" in report["steps"][-1]["disrupts"][0]


def test_two_minors_are_two_rounds_of_steps() -> None:
    doc = prod_spec()
    doc["cluster"]["kubernetesVersion"] = "1.34"
    steps = upgrade_path(doc, "1.36")
    assert [(s.kind, s.minor) for s in steps if s.kind == "control-plane"] == [
        ("control-plane", "1.35"),
        ("control-plane", "1.36"),
    ]
    assert len(steps) == 12
    assert steps[6].base_minor == "1.35"


def test_nothing_to_do_on_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upgrade", "--stack", "prod", "--program", str(ROOT), "--to", "1.35"]) == 0
    assert capsys.readouterr().out == "Stack prod already runs Kubernetes 1.35: nothing to upgrade.\n"


@pytest.mark.parametrize(
    ("to", "message"),
    [
        ("1.40", "--to 1.40: the versions table carries Kubernetes 1.32, 1.33, 1.34, 1.35, 1.36; pick one of them"),
        ("1.34", "--to 1.34: the stack runs 1.35; EKS cannot downgrade a cluster"),
    ],
)
def test_bad_targets_exit_2(to: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upgrade", "--stack", "prod", "--program", str(ROOT), "--to", to]) == 2
    assert message in capsys.readouterr().err
