"""Fail closed end to end: what the pack could not decide, and what remediation would change, reach the
verdict, the exit code and every output format (JSON + schema, text, markdown, SARIF)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gpucloud.cli.plan import exit_code
from gpucloud.plan import run_callable
from gpucloud.report import validate_report
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown, render_text
from gpucloud.report.sarif import load_schema, to_sarif

CONFIGS = Path(__file__).resolve().parents[2] / "policies" / "configs"
TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "p", "Env": "prod"}


def program() -> None:
    import pulumi_aws as aws

    # The node group's instance type comes from another resource's output: unknown at preview.
    source = aws.ssm.Parameter("type-source", type="String", value="p5.48xlarge")
    aws.eks.NodeGroup(
        "computed-type",
        cluster_name="c",
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["subnet-0a"],
        instance_types=[source.arn],
        scaling_config={"desired_size": 0, "min_size": 0, "max_size": 200},
        tags=TAGS,
    )
    aws.ec2.LaunchTemplate(
        "open-lt",
        instance_type="g6e.xlarge",
        block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": "k"}}],
        tags=TAGS,
        tag_specifications=[{"resource_type": k, "tags": TAGS} for k in ("instance", "volume")],
    )


def _config() -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / "prod.json").read_text())
    config["lt-imdsv2"] = {"enforcementLevel": "remediate", "unknowns": "block"}
    return config


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    plan = run_callable(program, project="failclosed", stack="prod")
    return build_report(plan, policy_config=_config(), conformance=False)


def test_undecided_resources_block_the_prod_verdict(report: dict[str, Any]) -> None:
    policies = report["policies"]
    undecided = {(u["policy"], u["urn"].rsplit("::", 1)[-1], u["field"], u["action"]) for u in policies["undecided"]}
    assert ("gpu-count-cap", "computed-type", "instanceTypes.0", "block") in undecided
    assert ("gpu-family-allowlist", "computed-type", "instanceTypes.0", "block") in undecided
    blocked = [v for v in policies["violations"] if v.get("undecided")]
    assert {v["enforcement"] for v in blocked} == {"mandatory"}
    assert exit_code(report) == 1
    validate_report(report)


def test_remediation_changes_are_in_the_json_report(report: dict[str, Any]) -> None:
    [fix] = [r for r in report["policies"]["remediations"] if r["policy"] == "lt-imdsv2"]
    assert fix["urn"].endswith("::open-lt")
    assert fix["changes"] == {"metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled"}}
    # The remediated template passes lt-imdsv2 itself.
    assert ("lt-imdsv2", "open-lt") not in {
        (v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in report["policies"]["violations"]
    }


def test_text_and_markdown_name_the_undecided_field_and_the_remediation(report: dict[str, Any]) -> None:
    text = render_text(report, width=400)
    assert "undecided (block): gpu-count-cap on computed-type: instanceTypes.0 is unknown at preview" in text
    assert (
        'remediate: lt-imdsv2 on open-lt sets metadataOptions={"httpEndpoint": "enabled", "httpTokens": "required"}'
        in text
    )
    md = render_markdown(report)
    # The PR comment: collapsible sections, open when an undecided resource blocks.
    assert "<details open><summary>Undecided at preview (" in md
    assert "| `gpu-count-cap` | `computed-type` | `instanceTypes.0` | violation (block) |" in md
    assert "<details><summary>Remediations (" in md
    assert (
        '| `lt-imdsv2` | `open-lt` | {"metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required"}} |' in md
    )


def test_sarif_carries_undecided_and_remediation(report: dict[str, Any]) -> None:
    sarif = to_sarif(report)
    jsonschema.validate(sarif, load_schema())
    results = sarif["runs"][0]["results"]
    blocked = [r for r in results if r["properties"].get("undecided")]
    assert {"field": "instanceTypes.0"}.items() <= blocked[0]["properties"]["undecided"].items()
    assert all(r["level"] == "error" for r in blocked)
    [note] = [r for r in results if "remediation" in r["properties"]]
    assert (
        note["level"] == "note"
        and note["properties"]["remediation"]["changes"]["metadataOptions"]["httpTokens"] == "required"
    )
    assert sarif["runs"][0]["properties"]["undecided"] == len(report["policies"]["undecided"])


def test_warn_lists_undecided_as_notes_without_blocking() -> None:
    plan = run_callable(program, project="failclosed", stack="prod")
    report = build_report(
        plan, policy_config={"all": "mandatory", "gpu-count-cap": {"unknowns": "warn"}}, conformance=False
    )
    warned = [u for u in report["policies"]["undecided"] if u["policy"] == "gpu-count-cap"]
    assert [(u["field"], u["action"], u["enforcement"]) for u in warned] == [("instanceTypes.0", "warn", "advisory")]
    assert "gpu-count-cap" not in {v["policy"] for v in report["policies"]["violations"]}
    notes = [
        r
        for r in to_sarif(report)["runs"][0]["results"]
        if r["properties"].get("undecided", {}).get("action") == "warn"
    ]
    assert {r["properties"]["policy"] for r in notes} >= {"gpu-count-cap"} and {r["level"] for r in notes} == {"note"}


def test_unknowns_must_be_block_or_warn() -> None:
    from gpucloud.guard import PolicyConfigError, evaluate

    plan = run_callable(lambda: None, project="failclosed", stack="prod")
    with pytest.raises(PolicyConfigError, match=r"gpu-count-cap\.unknowns: 'fail' is not one of"):
        evaluate(plan, {"gpu-count-cap": {"unknowns": "fail"}})


def _node_group(tags: dict[str, str] | None = None) -> None:
    import pulumi_aws as aws

    aws.eks.NodeGroup(
        "infer",
        cluster_name="c",
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["subnet-0a"],
        instance_types=["g6e.xlarge"],
        scaling_config={"desired_size": 0, "min_size": 0, "max_size": 1},
        tags=tags,
    )


@pytest.mark.parametrize(
    ("default_tags", "own", "flagged"),
    [
        ({"tags": TAGS}, None, False),
        # The default provider's inputs arrive as config strings; the engine sends aws:defaultTags as JSON.
        (json.dumps({"tags": TAGS}), None, False),
        ({"tags": {**TAGS, "Env": ""}}, None, True),
        ({"tags": TAGS}, {"Env": ""}, True),  # a resource tag overrides the default, even an empty one
        (None, None, True),
    ],
)
def test_default_provider_tags_from_stack_config(default_tags: Any, own: dict[str, str] | None, flagged: bool) -> None:
    config = {"aws:defaultTags": default_tags} if default_tags is not None else {}
    plan = run_callable(lambda: _node_group(own), project="tags", stack="prod", config=config)
    report = build_report(plan, policy_config={"all": "disabled", "cost-tags": "mandatory"}, conformance=False)
    assert [v["urn"].rsplit("::", 1)[-1] for v in report["policies"]["violations"]] == (["infer"] if flagged else [])
