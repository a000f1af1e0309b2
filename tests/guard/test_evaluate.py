"""Offline evaluation of the pack on recorded plans: the bad program, the shipped stacks, levels, remediation,
unknown values, config errors, SARIF and markdown."""

import json
from pathlib import Path

import jsonschema
import pytest

from gpucloud.cli import main
from gpucloud.guard import PolicyConfigError, evaluate, evaluate_plan
from gpucloud.plan import run_callable, run_program
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown
from gpucloud.report.sarif import load_schema, to_sarif

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "fixtures" / "bad_program"
CONFIGS = ROOT / "policies" / "configs"

# (policy, enforcement, resource) the bad program must produce under policies/configs/dev.json, exactly.
EXPECTED_BAD = {
    ("data-retain-on-delete", "advisory", "checkpoints"),
    ("iam-no-admin-star", "mandatory", "admin"),
    ("sg-no-world-ingress", "mandatory", "open-sg"),
    ("gpu-family-allowlist", "mandatory", "gpu-lt"),
    ("cost-tags", "mandatory", "gpu-lt"),
    ("lt-imdsv2", "mandatory", "gpu-lt"),
    ("lt-imds-hop-limit", "advisory", "gpu-lt"),
    ("lt-ebs-encrypted", "mandatory", "gpu-lt"),
    ("lt-no-public-ip", "mandatory", "gpu-lt"),
    ("lt-no-secrets-in-userdata", "mandatory", "gpu-lt"),
    ("eks-endpoint-private", "mandatory", "open-cluster"),
    ("eks-secrets-cmk", "mandatory", "open-cluster"),
    ("eks-control-plane-logging", "mandatory", "open-cluster"),
    ("gpu-family-allowlist", "mandatory", "train-p5"),
    ("cost-tags", "mandatory", "train-p5"),
    ("scale-to-zero", "advisory", "train-p5"),
    ("gpu-count-cap", "mandatory", "train-p5"),
    ("efa-shape", "advisory", "train-p5"),
    ("nonprod-spot-share", "advisory", "train-p5"),
    ("budget-and-anomaly", "advisory", "bad-program-dev"),
    ("s3-public-access-block-explicit", "advisory", "checkpoints"),
    ("s3-sse-kms", "mandatory", "checkpoints"),
    ("s3-tls-only", "mandatory", "checkpoints"),
    ("checkpoint-bucket-versioning", "mandatory", "checkpoints"),
    ("vpc-flow-logs", "mandatory", "vpc"),
}


def _name(urn):
    return urn.rsplit("::", 1)[-1]


@pytest.fixture(scope="module")
def bad_outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("bad")
    codes = {}
    for fmt in ("json", "sarif", "markdown"):
        codes[fmt] = main(
            [
                "plan",
                "--program",
                str(BAD),
                "--stack",
                "dev",
                "--policy-config",
                str(CONFIGS / "dev.json"),
                "--format",
                fmt,
                "--out",
                str(out / fmt),
            ]
        )
    return codes, {fmt: (out / fmt).read_text() for fmt in codes}


def test_bad_program_fails_with_the_exact_violations(bad_outputs):
    codes, texts = bad_outputs
    # Exit 1 (violations): the P5 node group of a cluster with no NVIDIA device plugin would never advertise a
    # GPU, but the program runs nothing on Kubernetes, so the plugin may come from elsewhere: a warning, not exit 5.
    assert codes == {"json": 1, "sarif": 1, "markdown": 1}
    conformance = json.loads(texts["json"])["conformance"]["findings"]
    assert ("scheduling.advertise", "warning", "train-p5") in {
        (f["check"], f["severity"], _name(f["urn"])) for f in conformance
    }
    policies = json.loads(texts["json"])["policies"]
    assert set(policies) == {"pack", "violations", "not_evaluated", "mandatory_violations", "undecided", "remediations"}
    found = {(v["policy"], v["enforcement"], _name(v["urn"])) for v in policies["violations"]}
    # The spend cap needs the cost engine (another branch): priced it may fire, unpriced it is not evaluated.
    spend = {f for f in found if f[0] == "monthly-spend-cap"}
    assert found - spend == EXPECTED_BAD
    not_evaluated = {(n["policy"], _name(n["urn"])) for n in policies["not_evaluated"]}
    assert not_evaluated <= {("monthly-spend-cap", "bad-program-dev")}
    # The cluster without a version is priced at the EKS default version (the cost engine), so nothing is left
    # undecided for the cap.
    assert {(u["policy"], _name(u["urn"]), u["field"]) for u in policies["undecided"]} == set()
    assert policies["mandatory_violations"] == sum(1 for v in policies["violations"] if v["enforcement"] == "mandatory")
    counts = [(v["policy"], _name(v["urn"])) for v in policies["violations"]]
    assert counts.count(("cost-tags", "gpu-lt")) == 2  # instance and volume tag specifications
    assert counts.count(("eks-endpoint-private", "open-cluster")) == 2  # no private access, and open to the world


@pytest.mark.parametrize(
    ("policy", "resource", "fix"),
    [
        ("gpu-family-allowlist", "train-p5", "pick a type from an allowed family"),
        ("eks-endpoint-private", "open-cluster", "endpoint_public_access=False"),
        ("lt-imdsv2", "gpu-lt", "'http_tokens': 'required'"),
    ],
)
def test_done_when_messages_name_the_resource_and_the_fix(bad_outputs, policy, resource, fix):
    violations = json.loads(bad_outputs[1]["json"])["policies"]["violations"]
    messages = [v["message"] for v in violations if v["policy"] == policy and _name(v["urn"]) == resource]
    assert messages and all(m.startswith(f"{resource}: ") and "Fix:" in m for m in messages)
    assert any(fix in m for m in messages)


def test_bad_program_sarif_validates(bad_outputs):
    sarif = json.loads(bad_outputs[1]["sarif"])
    jsonschema.Draft7Validator(load_schema(), format_checker=jsonschema.FormatChecker()).validate(sarif)
    run = sarif["runs"][0]
    violations = json.loads(bad_outputs[1]["json"])["policies"]["violations"]
    # One result per violation, plus a note per resource left undecided under 'warn' (none in this program).
    notes = [r for r in run["results"] if r["level"] == "note" and "undecided" in r["properties"]]
    assert len(run["results"]) == len(violations) + len(notes)
    assert notes == []
    rules = run["tool"]["driver"]["rules"]
    by_id = {r["id"]: r for r in rules}
    imds = next(r for r in run["results"] if r["properties"]["policy"] == "lt-imdsv2")
    assert imds["ruleId"] == "GC-SEC-008" and imds["level"] == "error"
    assert rules[imds["ruleIndex"]]["name"] == "lt-imdsv2"
    assert "CKV_AWS_79" in by_id["GC-SEC-008"]["properties"]["tags"]
    logical = imds["locations"][0]["logicalLocations"][0]
    assert logical["fullyQualifiedName"] == (
        "urn:pulumi:dev::bad-program::aws:ec2/launchTemplate:LaunchTemplate::gpu-lt"
    )
    advisory = next(r for r in run["results"] if r["properties"]["policy"] == "scale-to-zero")
    assert advisory["level"] == "warning"


def test_sarif_schema_rejects_what_it_must():
    validator = jsonschema.Draft7Validator(load_schema())
    assert not validator.is_valid({"version": "2.0.0", "runs": []})
    assert not validator.is_valid({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})
    assert not validator.is_valid(
        {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "a"}]}]}
    )
    assert validator.is_valid({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]})


def test_bad_program_markdown_has_the_violation_rows(bad_outputs):
    md = bad_outputs[1]["markdown"]
    violations = json.loads(bad_outputs[1]["json"])["policies"]["violations"]
    # Mandatory violations: the section is collapsible but open.
    assert f"<details open><summary>Guardrail violations ({len(violations)})</summary>" in md
    rows = [line for line in md.splitlines() if line.startswith("| mandatory |") or line.startswith("| advisory |")]
    assert len(rows) == len(violations)
    assert any("`lt-imdsv2`" in r and "`gpu-lt`" in r for r in rows)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_stacks_pass_with_their_config(stack):
    plan = run_program(ROOT, stack)
    config = json.loads((CONFIGS / f"{stack}.json").read_text())
    section = evaluate_plan(plan, policy_config=config)
    mandatory = [v for v in section["violations"] if v["enforcement"] == "mandatory"]
    assert mandatory == [] and section["mandatory_violations"] == 0


def _plan(build, preview=False):
    return run_callable(build, preview=preview)


def _lt_program(**extra):
    def build():
        import pulumi_aws as aws

        aws.ec2.LaunchTemplate("lt", instance_type="g6e.xlarge", **extra)

    return build


def test_levels_all_per_policy_and_disabled():
    plan = _plan(_lt_program())
    base = {(v["policy"], v["enforcement"]) for v in evaluate_plan(plan)["violations"]}
    assert ("lt-imdsv2", "mandatory") in base and ("lt-imds-hop-limit", "advisory") in base
    everything_advisory = evaluate_plan(plan, {"all": "advisory"})
    assert everything_advisory["mandatory_violations"] == 0 and everything_advisory["violations"]
    mixed = evaluate_plan(plan, {"all": "disabled", "lt-imdsv2": {"enforcementLevel": "mandatory"}})
    assert {v["policy"] for v in mixed["violations"]} == {"lt-imdsv2"}
    assert evaluate_plan(plan, {"all": "disabled"})["violations"] == []


def test_remediate_level_fixes_imdsv2_and_unfixable_tags_stay_mandatory():
    plan = _plan(_lt_program())
    result = evaluate(plan, {"lt-imdsv2": "remediate", "cost-tags": "remediate"})
    policies = {(v["policy"], v["enforcement"]) for v in result.violations}
    assert not any(p == "lt-imdsv2" for p, _ in policies)
    assert ("cost-tags", "mandatory") in policies  # no tagDefaults: still fires, so mandatory
    [fix] = [r for r in result.remediations if r["policy"] == "lt-imdsv2"]
    assert fix["properties"]["metadataOptions"] == {"httpTokens": "required", "httpEndpoint": "enabled"}
    defaults = {"CostCenter": "cc", "Team": "t", "Project": "p", "Env": "dev"}
    fixed = evaluate(plan, {"cost-tags": {"enforcementLevel": "remediate", "tagDefaults": defaults}})
    assert not [v for v in fixed.violations if v["policy"] == "cost-tags"]
    assert [r["policy"] for r in fixed.remediations] == ["cost-tags"]


def test_unknown_values_are_not_evaluated_never_passed():
    def build():
        import pulumi_aws as aws

        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        aws.ec2.LaunchTemplate(
            "lt", instance_type="g6e.xlarge", metadata_options={"http_tokens": vpc.id}, tags={"CostCenter": vpc.arn}
        )

    section = evaluate_plan(_plan(build, preview=True))
    skipped = {(n["policy"], _name(n["urn"])) for n in section["not_evaluated"]}
    assert {("lt-imdsv2", "lt"), ("cost-tags", "lt")} <= skipped
    assert not [v for v in section["violations"] if v["policy"] in ("lt-imdsv2",)]
    reason = next(n["reason"] for n in section["not_evaluated"] if n["policy"] == "lt-imdsv2")
    assert reason.startswith("can't run policy 'lt-imdsv2' from policy pack 'gpucloud-guardrails' during preview")


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"no-such-policy": "mandatory"}, "no-such-policy: no such policy"),
        ({"lt-imdsv2": "sometimes"}, "lt-imdsv2: enforcement level 'sometimes'"),
        ({"gpu-count-cap": {"maxGpusPerPool": "many"}}, "gpu-count-cap.maxGpusPerPool: 'many' is not of type"),
        ({"gpu-count-cap": {"maxGpuPerPool": 8}}, "Additional properties are not allowed ('maxGpuPerPool'"),
        ({"all": {"allowedFamilies": []}}, "all: must be one of"),
    ],
)
def test_bad_config_is_invalid_input(tmp_path, capsys, config, fragment):
    plan = _plan(_lt_program())
    with pytest.raises(PolicyConfigError, match=None) as info:
        evaluate_plan(plan, config)
    assert fragment in str(info.value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    assert main(["plan", "--program", str(BAD), "--policy-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpucloud: error: invalid policy config:") and "Traceback" not in err


def test_report_to_sarif_and_markdown_from_a_report_dict():
    plan = _plan(_lt_program())
    report = build_report(plan, policy_config={"all": "mandatory"})
    sarif = to_sarif(report)
    jsonschema.validate(sarif, load_schema())
    assert {r["properties"]["policy"] for r in sarif["runs"][0]["results"]} == {
        v["policy"] for v in report["policies"]["violations"]
    }
    md = render_markdown(report)
    assert "| mandatory | `lt-imdsv2` | high | `lt` |" in md
