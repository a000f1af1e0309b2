"""The conformance framework: check registry, ordering, the report section in every format, exit code 5."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pulumi_aws as aws
import pytest

import gpucloud.conformance as conformance
from gpucloud.cli import main
from gpucloud.cli.plan import exit_code
from gpucloud.conformance import ConformanceContext, DerivedObject, Finding, register_check, run_conformance
from gpucloud.plan import run_callable
from gpucloud.report import validate_report
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown, render_text
from gpucloud.report.sarif import load_schema, to_sarif

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "fixtures" / "raw_program"

BAD = Finding(
    check="test.fake",
    severity="error",
    urn="urn:pulumi:test::p::aws:s3/bucketV2:BucketV2::data",
    field="values.node-feature-discovery",
    message="key not read by the chart",
    expected="nfd (the alias)",
    source="chart nvidia-device-plugin@0.18.2",
)
SOFT = Finding(
    check="test.fake",
    severity="warning",
    urn="urn:pulumi:test::p::aws:s3/bucketV2:BucketV2::logs",
    field="",
    message="placeholder rendered",
    expected="",
    source="chart x@1",
    object="apps/v1/DaemonSet kube-system/x",
)


@pytest.fixture
def fake_check(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ConformanceContext]]:
    """Only the fake check runs: the built-in ones are tested in their own modules."""
    seen: list[ConformanceContext] = []
    monkeypatch.setattr(conformance, "_CHECKS", [])
    monkeypatch.setattr(conformance, "_load_builtin_checks", lambda: None)

    @register_check("test.fake")
    def _fake(ctx: ConformanceContext) -> list[Finding]:
        seen.append(ctx)
        ctx.derived.append(
            DerivedObject(
                "urn:x",
                "chart x@1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}},
            )
        )
        # Reported twice and out of order: the result is de-duplicated and sorted errors first.
        return [SOFT, BAD, BAD]

    yield seen


def _bucket_plan():
    return run_callable(lambda: aws.s3.BucketV2("data"), project="p", stack="test")


def test_registry_refuses_a_second_check_of_the_same_name(fake_check) -> None:
    with pytest.raises(ValueError, match=r"'test\.fake' registered twice"):
        register_check("test.fake")(lambda ctx: [])


def test_findings_are_deduplicated_sorted_and_derived_objects_kept(fake_check) -> None:
    result = run_conformance(_bucket_plan())
    assert result.findings == [BAD, SOFT]
    assert [f.severity for f in result.errors] == ["error"]
    assert [f.severity for f in result.warnings] == ["warning"]
    assert result.checks == ["test.fake"]
    assert [d.ref for d in result.derived] == ["v1/ConfigMap ns/c"]
    assert result.to_json()["derived_objects"] == [
        {"owner": "urn:x", "source": "chart x@1", "object": "v1/ConfigMap ns/c"}
    ]


def test_only_and_skip_select_checks(fake_check) -> None:
    assert run_conformance(_bucket_plan(), skip=["test.fake"]).checks == []
    assert run_conformance(_bucket_plan(), only=["other"]).findings == []


def test_kubernetes_version_comes_from_the_cluster() -> None:
    def program() -> None:
        aws.eks.Cluster(
            "c", role_arn="arn:aws:iam::123456789012:role/r", version="1.33.2", vpc_config={"subnet_ids": ["subnet-1"]}
        )

    assert conformance.kubernetes_version(run_callable(program)) == "1.33"
    assert conformance.kubernetes_version(_bucket_plan()) == conformance.DEFAULT_KUBERNETES_VERSION


def test_section_in_every_format_and_exit_code_5(fake_check) -> None:
    plan = _bucket_plan()
    report = build_report(plan)
    validate_report(report)
    # The derived objects stay on the plan for the policy pack and later readers.
    assert [d.ref for d in plan.derived] == ["v1/ConfigMap ns/c"]
    section = report["conformance"]
    assert (section["errors"], section["warnings"]) == (1, 1)
    assert section["findings"][0] == BAD.to_json()
    assert exit_code(report) == 5
    text = render_text(report, width=200)
    assert "error test.fake: data values.node-feature-discovery" in text
    assert "expected: nfd (the alias)" in text
    assert "Conformance (Kubernetes 1.35): FAIL  1 errors, 1 warnings" in text
    md = render_markdown(report)
    assert "❌ Kubernetes 1.35: **1** errors, **1** warnings" in md
    assert "| error | `test.fake` | `data` | `values.node-feature-discovery` | key not read by the chart |" in md
    sarif = to_sarif(report)
    jsonschema.validate(sarif, load_schema())
    run = sarif["runs"][1]
    assert run["tool"]["driver"]["name"] == "gpucloud-conformance"
    assert [r["level"] for r in run["results"]] == ["error", "warning"]
    assert run["results"][0]["message"]["text"] == (
        "data: values.node-feature-discovery: key not read by the chart "
        "(expected: nfd (the alias); source: chart nvidia-device-plugin@0.18.2)"
    )


def test_a_clean_plan_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conformance, "_CHECKS", [])
    monkeypatch.setattr(conformance, "_load_builtin_checks", lambda: None)
    report = build_report(_bucket_plan())
    assert report["conformance"]["errors"] == 0
    # The bare bucket breaks mandatory guardrails: exit 1, the guardrail code, not 5.
    assert report["policies"]["mandatory_violations"] > 0
    assert exit_code(report) == 1
    assert "Conformance (Kubernetes 1.35): PASS" in render_text(report, width=200)


def test_schema_rejects_a_finding_without_source(fake_check) -> None:
    report = build_report(_bucket_plan())
    del report["conformance"]["findings"][0]["source"]
    with pytest.raises(jsonschema.ValidationError, match="'source' is a required property"):
        validate_report(report)


def test_cli_exits_5_on_conformance_errors(fake_check, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--program", str(RAW), "--stack", "test", "--format", "json"])
    out, _err = capsys.readouterr()
    assert code == 5
    assert json.loads(out)["conformance"]["errors"] == 1


def _finding(severity: str, check: str, urn: str, obj: str | None = None, field: str = "f") -> Finding:
    return Finding(check, severity, urn, field, "m", "e", "s", object=obj)  # type: ignore[arg-type]


def test_order_is_errors_first_then_check_resource_object_field(monkeypatch: pytest.MonkeyPatch) -> None:
    given = [
        _finding("warning", "a", "u1"),
        _finding("error", "b", "u2", field="z"),
        _finding("error", "b", "u2", field="a"),
        _finding("error", "b", "u1", obj="o2"),
        _finding("error", "b", "u1", obj="o1"),
        _finding("error", "a", "u9"),
    ]
    monkeypatch.setattr(conformance, "_CHECKS", [])
    monkeypatch.setattr(conformance, "_load_builtin_checks", lambda: None)
    register_check("order")(lambda ctx: list(given))
    result = run_conformance(_bucket_plan())
    assert [(f.severity, f.check, f.urn, f.object, f.field) for f in result.findings] == [
        ("error", "a", "u9", None, "f"),
        ("error", "b", "u1", "o1", "f"),
        ("error", "b", "u1", "o2", "f"),
        ("error", "b", "u2", None, "a"),
        ("error", "b", "u2", None, "z"),
        ("warning", "a", "u1", None, "f"),
    ]
    assert set(result.timings) == {"order"}
    assert result.timings["order"] >= 0


def test_placements_and_pools_from_the_scheduling_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conformance, "_CHECKS", [])
    monkeypatch.setattr(conformance, "_load_builtin_checks", lambda: None)

    def facts(ctx: ConformanceContext) -> list[Finding]:
        ctx.facts["placements"] = [
            {"workload": "Job ml/train", "object": None, "urn": "u", "pods": 2, "requests": {"cpu": "1"},
             "pools": [{"pool": "gpu", "kind": "self-managed ASG", "urn": "p", "verified": True}]},
            {"workload": "Job ml/x", "object": "o", "urn": "v", "pods": 1, "pools": [], "note": "no pools"},
        ]  # fmt: skip
        ctx.facts["scheduling_pools"] = [
            {"pool": "gpu", "kind": "self-managed ASG", "urn": "p", "instance_types": ["g6.12xlarge"], "min": 0,
             "max": 2, "advertises": ["nvidia.com/gpu"], "taints": ["t"], "notes": []},
        ]  # fmt: skip
        return []

    register_check("facts")(facts)
    section = run_conformance(_bucket_plan()).to_json()
    assert section["placements"] == [
        {"workload": "Job ml/train", "object": None, "urn": "u", "pods": 2, "pools": ["gpu"]},
        {"workload": "Job ml/x", "object": "o", "urn": "v", "pods": 1, "pools": [], "note": "no pools"},
    ]
    assert section["pools"] == [
        {"pool": "gpu", "kind": "self-managed ASG", "urn": "p", "instance_types": ["g6.12xlarge"], "min": 0,
         "max": 2, "advertises": ["nvidia.com/gpu"]},
    ]  # fmt: skip
    assert (section["errors"], section["warnings"], section["checks"]) == (0, 0, ["facts"])


@pytest.mark.parametrize(("version", "expected"), [("1.33", "1.33"), ("1.32.4", "1.32"), ("latest", "1.35")])
def test_kubernetes_version_forms(version: str, expected: str) -> None:
    def program() -> None:
        aws.eks.Cluster("c", role_arn="arn:aws:iam::123456789012:role/r", version=version,
                        vpc_config={"subnet_ids": ["subnet-1"]})  # fmt: skip

    assert conformance.kubernetes_version(run_callable(program)) == expected
