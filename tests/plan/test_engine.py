"""The offline plan engine: any Pulumi Python program, recorded as the engine shows it to a policy pack."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest

from gpucloud.plan import UNKNOWN, PlanInputError, run_callable, run_program

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
RAW = FIXTURES / "raw_program"


def test_raw_program_records_every_resource_in_engine_view() -> None:
    plan = run_program(RAW, "test")
    assert plan.project == "raw-gpu-fleet"
    assert sorted((r.type, r.name) for r in plan.resources) == [
        ("aws:ec2/launchTemplate:LaunchTemplate", "train-lt"),
        ("aws:ec2/placementGroup:PlacementGroup", "train-pg"),
        ("aws:eks/nodeGroup:NodeGroup", "train"),
        ("aws:iam/role:Role", "node-role"),
    ]
    ng = plan.find("aws:eks/nodeGroup:NodeGroup", "train")
    assert ng.urn == "urn:pulumi:test::raw-gpu-fleet::aws:eks/nodeGroup:NodeGroup::train"
    assert ng.parent == "urn:pulumi:test::raw-gpu-fleet::pulumi:pulumi:Stack::raw-gpu-fleet-test"
    assert [r.urn for r in plan.resources] == sorted(r.urn for r in plan.resources)
    assert ng.custom is True
    # Numbers arrive as floats, keys camelCase, config read from the stack file.
    assert ng.inputs["scalingConfig"] == {"minSize": 0.0, "desiredSize": 3.0, "maxSize": 4.0}
    assert ng.inputs["instanceTypes"] == ["p4d.24xlarge"]
    # Computed values are the analyzer's unknown sentinel at preview.
    assert ng.inputs["nodeRoleArn"] == UNKNOWN
    assert ng.inputs["launchTemplate"]["id"] == UNKNOWN
    lt_urn = plan.find("aws:ec2/launchTemplate:LaunchTemplate", "train-lt").urn
    assert lt_urn in ng.dependencies
    assert lt_urn in ng.property_dependencies["launchTemplate"]
    lt = plan.find("aws:ec2/launchTemplate:LaunchTemplate", "train-lt")
    assert lt.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    assert lt.inputs["metadataOptions"] == {"httpTokens": "required", "httpPutResponseHopLimit": 1.0}
    assert plan.outputs == {"firstZone": "us-west-2a"}


def test_policy_documents_render_real_json() -> None:
    role = run_program(RAW, "test").find("aws:iam/role:Role", "node-role")
    assert json.loads(role.inputs["assumeRolePolicy"]) == {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}],
    }


def test_same_program_twice_in_one_process() -> None:
    first = run_program(RAW, "test")
    second = run_program(RAW, "test")
    assert [r.urn for r in first] == [r.urn for r in second]
    assert len(second) == 4
    assert (
        second.find("aws:eks/nodeGroup:NodeGroup", "train").inputs
        == first.find("aws:eks/nodeGroup:NodeGroup", "train").inputs
    )


def test_program_helper_modules_do_not_leak_between_programs() -> None:
    import sys

    run_program(RAW, "test")
    assert "helpers" not in sys.modules


def test_unknown_stack_lists_available() -> None:
    with pytest.raises(PlanInputError) as info:
        run_program(RAW, "prod")
    assert "unknown stack 'prod' for project 'raw-gpu-fleet'" in str(info.value)
    assert "(available stacks: test)" in str(info.value)


def test_program_that_raises_names_file_and_line() -> None:
    with pytest.raises(PlanInputError) as info:
        run_program(FIXTURES / "raising_program", "dev")
    assert str(info.value) == "program error in __main__.py:7: KeyError: 'xl'"


def test_not_a_project() -> None:
    with pytest.raises(PlanInputError) as info:
        run_program(FIXTURES, "dev")
    assert "is not a Pulumi project: no Pulumi.yaml found there" in str(info.value)


def test_run_callable_update_semantics_and_options() -> None:
    def program() -> None:
        key = aws.kms.Key("key", enable_key_rotation=True)
        aws.s3.Bucket(
            "data",
            bucket="gpucloud-data",
            opts=pulumi.ResourceOptions(retain_on_delete=True, protect=True, ignore_changes=["tags"], depends_on=[key]),
        )

    plan = run_callable(program, preview=False)
    bucket = plan.find("aws:s3/bucket:Bucket", "data")
    assert bucket.retain_on_delete is True
    assert bucket.protect is True
    assert bucket.ignore_changes == ["tags"]
    assert bucket.dependencies == [plan.find("aws:kms/key:Key", "key").urn]
    assert bucket.get("bucket") == "gpucloud-data"


def test_secrets_are_masked() -> None:
    def program() -> None:
        aws.ssm.Parameter("token", type="SecureString", value=pulumi.Output.secret("s3cr3t"))

    param = run_callable(program, preview=False).find("aws:ssm/parameter:Parameter", "token")
    assert param.inputs["value"] == "[secret]"


def test_data_source_without_a_specific_answer_is_answered_from_its_result_type() -> None:
    names: list[str] = []

    def program() -> None:
        aws.ec2.get_key_pair_output(key_name="ops").key_name.apply(names.append)

    plan = run_callable(program, preview=False)
    assert names == ["ops"]
    assert plan.warnings == [
        "offline plan answered aws:ec2/getKeyPair:getKeyPair from its SDK result type: values echo the query or are "
        "placeholders"
    ]


def test_data_source_no_sdk_defines_is_a_warning() -> None:
    def program() -> None:
        pulumi.runtime.invoke("acme:index/getThing:getThing", {"name": "x"})

    plan = run_callable(program, preview=False)
    assert plan.warnings == ["offline plan has no answer for acme:index/getThing:getThing; its results are empty"]


def test_stack_reference_answered_from_offline_source() -> None:
    seen: list[str] = []

    def named(cluster: str) -> str:
        seen.append(cluster)
        return f"{cluster}-data"

    def program() -> None:
        ref = pulumi.StackReference("acme/gpucloud/dev")
        aws.s3.Bucket("b", bucket=ref.get_output("clusterName").apply(named))

    plan = run_callable(program, preview=False, stack_references={"acme/gpucloud/dev": {"clusterName": "gpucloud-dev"}})
    assert plan.find("aws:s3/bucket:Bucket", "b").inputs["bucket"] == "gpucloud-dev-data"
    assert seen == ["gpucloud-dev"]


def test_failed_program_does_not_break_the_next_plan() -> None:
    def broken() -> None:
        ref = pulumi.StackReference("acme/gpucloud/dev")
        aws.s3.Bucket("b", bucket=ref.require_output("missing"))
        aws.s3.Bucket("c", bucket="independent")

    with pytest.raises(PlanInputError) as info:
        run_callable(broken, preview=True)
    assert "KeyError: 'missing'" in str(info.value)
    assert "the offline plan has no outputs for StackReference acme/gpucloud/dev" in str(info.value)
    assert len(run_program(RAW, "test")) == 4


def test_stack_files_parse_the_same_with_libyaml_as_with_pyyaml() -> None:
    import yaml

    from gpucloud.plan.project import _YAML_LOADER, _load_yaml

    root = Path(__file__).resolve().parents[2]
    files = [*sorted(root.glob("stacks/**/Pulumi*.yaml")), root / "Pulumi.yaml"]
    assert len(files) == 6  # three platform stacks, the vision team project and its stack, the root project
    for path in files:
        text = path.read_text()
        assert _load_yaml(text) == yaml.safe_load(text), path
    # libyaml's parser underneath, with the duplicate-key check on top.
    assert issubclass(_YAML_LOADER, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
