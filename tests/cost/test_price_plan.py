"""price_plan on recorded plans: launch templates matched through URNs at preview, the diff, the renderings,
and `gpucloud plan --compare` end to end."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gpucloud.cli import main
from gpucloud.cost import price_plan
from gpucloud.plan import run_callable
from gpucloud.plan.engine import PlanInputError
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown, render_text


def _program(desired: int = 2) -> None:
    import pulumi
    import pulumi_aws as aws

    class Pool(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("gpucloud:pools:GpuNodePool", name)
            lt = aws.ec2.LaunchTemplate(
                f"{name}-lt", instance_type="g6e.12xlarge", opts=pulumi.ResourceOptions(parent=self)
            )
            aws.eks.NodeGroup(
                f"{name}-ng",
                cluster_name="c",
                node_role_arn="arn:aws:iam::123456789012:role/n",
                subnet_ids=["subnet-1"],
                scaling_config={"desired_size": desired, "max_size": 4, "min_size": 0},
                launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.register_outputs({})

    Pool("infer")
    aws.ec2.NatGateway("nat", subnet_id="subnet-1", allocation_id="eipalloc-1")


def _report(desired: int, compare: dict[str, Any] | None = None) -> dict[str, Any]:
    plan = run_callable(lambda: _program(desired), preview=True)
    return build_report(plan, compare=compare)


def test_price_plan_matches_launch_template_by_urn_at_preview() -> None:
    plan = run_callable(_program, preview=True)
    cost = price_plan(plan)
    # Registration order: the node group waits for its launch template's id, so it registers last.
    assert [(i["name"], i["instance_type"], i["quantity"], i["max_quantity"]) for i in cost["items"]] == [
        ("nat", None, 1, 1),
        ("infer-ng", "g6e.12xlarge", 2, 4),
    ]
    assert cost["monthly"] == round(2 * 10.49264 * 730, 2) + 32.85
    assert "diff" not in cost


def test_compare_gives_per_resource_and_total_diff() -> None:
    base = _report(2)
    report = _report(3, compare=base)
    diff = report["cost"]["diff"]
    one_node = round(10.49264 * 730, 2)
    assert diff["monthly_delta"] == one_node
    assert diff["monthly_ceiling_delta"] == 0.0
    assert [(c["name"], c["change"], c["monthly_delta"], c["monthly_ceiling_delta"]) for c in diff["items"]] == [
        ("infer-ng", "changed", one_node, 0.0)
    ]
    removed = build_report(run_callable(lambda: None, preview=True), compare=base)["cost"]["diff"]
    assert {(c["name"], c["change"]) for c in removed["items"]} == {("infer-ng", "removed"), ("nat", "removed")}
    assert removed["monthly_delta"] == -base["cost"]["monthly"]


def test_renderings_show_component_table_and_diff() -> None:
    report = _report(3, compare=_report(2))
    text = render_text(report, width=160)
    assert "Cost per pool / component" in text and "infer" in text
    assert "Cost change against the base plan" in text and "+$7,659.63" in text
    md = render_markdown(report)
    assert "| `infer` | `gpucloud:pools:GpuNodePool` | $22,978.88 | $30,638.51 |" in md
    assert "| `infer-ng` | changed | $7,659.63 | $0.00 |" in md


def test_bad_pricing_config_is_plan_input_error() -> None:
    plan = run_callable(
        _program, preview=True, config={"gpucloud:pricing": {"commitments": [{"match": "p5", "term": "2y"}]}}
    )
    with pytest.raises(PlanInputError, match=r"gpucloud:pricing.commitments\[0\].term: '2y'"):
        price_plan(plan)


def test_cli_plan_compare_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: raw\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  raw:size: 1\n")
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi, pulumi_aws as aws
            size = int(pulumi.Config().get("size") or 1)
            aws.eks.NodeGroup("gpu", cluster_name="c", node_role_arn="arn:aws:iam::1:role/n", subnet_ids=["s"],
                              instance_types=["p5.48xlarge"], capacity_type="SPOT",
                              scaling_config={"desired_size": size, "max_size": 4, "min_size": 0})
            """
        )
    )
    base = tmp_path / "base.json"
    # This bare node group breaks tagging and launch-template guardrails; only the cost diff matters here.
    advisory = tmp_path / "policy.json"
    advisory.write_text('{"all": "advisory"}')
    assert (
        main(
            [
                "plan",
                "--program",
                str(tmp_path),
                "--stack",
                "dev",
                "--format",
                "json",
                "--out",
                str(base),
                "--policy-config",
                str(advisory),
            ]
        )
        == 0
    )
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  raw:size: 3\n")
    capsys.readouterr()
    assert (
        main(
            [
                "plan",
                "--program",
                str(tmp_path),
                "--format",
                "json",
                "--compare",
                str(base),
                "--policy-config",
                str(advisory),
            ]
        )
        == 0
    )
    cost = json.loads(capsys.readouterr().out)["cost"]
    spot = 55.04 * (1 - 0.535)
    assert cost["items"][0]["pricing"] == "spot" and cost["items"][0]["quantity"] == 3
    assert cost["diff"]["monthly_delta"] == round(round(3 * spot * 730, 2) - round(spot * 730, 2), 2)
