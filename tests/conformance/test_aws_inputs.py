"""aws.inputs / kubernetes.inputs / aws.api: recorded inputs against the provider SDKs' input types and botocore's
service models, on raw pulumi_aws programs, on copies of the shipped stacks, and on the shipped stacks as they are."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gpucloud.conformance import Finding, aws_api, aws_inputs, botocore_models, provider_types, run_conformance
from gpucloud.plan import UNKNOWN, Plan, run_callable, run_program
from gpucloud.plan.model import SECRET

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ["aws.inputs", "kubernetes.inputs", "aws.api"]
PULUMI_AWS = "pulumi-aws 7.51"
ASSUME = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}],
    }
)


@pytest.fixture(autouse=True)
def _private_model_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # The extracted botocore constraints go to a scratch directory, never the developer's ~/.cache.
    monkeypatch.setenv(botocore_models.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "botocore-cache"))


def findings(plan: Plan) -> list[Finding]:
    return run_conformance(plan, only=CHECKS).findings


def of(found: list[Finding], name: str) -> dict[tuple[str, str], Finding]:
    """Findings on the resource named `name`, by (check, field)."""
    return {(f.check, f.field): f for f in found if f.urn.endswith(f"::{name}")}


def _node_group(name: str, **overrides: Any) -> aws.eks.NodeGroup:
    args: dict[str, Any] = {
        "cluster_name": "gpu",
        "node_role_arn": "arn:aws:iam::123456789012:role/node",
        "subnet_ids": ["subnet-1"],
        "scaling_config": {"min_size": 0, "max_size": 2, "desired_size": 1},
        "instance_types": ["p5.48xlarge"],
        "capacity_type": "ON_DEMAND",
    }
    args.update(overrides)
    return aws.eks.NodeGroup(name, **args)


def _defects() -> None:
    # Provider input types.
    aws.ec2.LaunchTemplate("lt-unknown-key", metadata_options={"http_tokenz": "required"})
    _node_group("ng-wrong-type", scaling_config={"min_size": 0, "max_size": "lots", "desired_size": 1})
    _node_group("ng-not-a-list", instance_types="p5.48xlarge")
    _node_group("ng-missing-required", scaling_config={"min_size": 0, "max_size": 2})
    _node_group("ng-fraction", scaling_config={"min_size": 0, "max_size": 2.5, "desired_size": 1})
    # A raw CustomResource sends its props untranslated: a top-level key the type lacks, a required one missing.
    pulumi.CustomResource(
        "aws:ec2/placementGroup:PlacementGroup", "pg-raw", {"strategy": "cluster", "partitionCount": 2, "spred": 1}
    )
    pulumi.CustomResource("aws:iam/rolePolicy:RolePolicy", "rp-missing", {"role": "node"})
    pulumi.CustomResource("aws:ec2/launchTemplat:LaunchTemplate", "lt-bad-token", {})
    k8s.helm.v3.Release("release-bad", chart="karpenter", values={"a": 1}, timeout="soon")  # type: ignore[arg-type]
    # botocore enums, ranges, lengths, patterns.
    aws.ec2.LaunchTemplate(
        "lt-bad-enum",
        instance_type="p5.48xlage",
        metadata_options={"http_tokens": "require", "http_endpoint": "enabled"},
        block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"volume_type": "gp4", "volume_size": 100}}],
    )
    _node_group("ng-spott", capacity_type="SPOTT", instance_types=["p5.48xlarge", "p5.48xlage"])
    _node_group("ng-range", scaling_config={"min_size": -1, "max_size": 0, "desired_size": 0})
    aws.fsx.LustreFileSystem(
        "fsx-bad",
        subnet_ids="subnet-1",
        storage_capacity=1200,
        deployment_type="PERSISTENT_2",
        per_unit_storage_throughput=2000,
        weekly_maintenance_start_time="9:03:00",
    )
    aws.iam.Role("role-bad-name", name="gpu node role", assume_role_policy=ASSUME, tags={"Team": "ml, platform"})
    aws.ec2.PlacementGroup("pg-bad", strategy="clustr")
    aws.s3.BucketVersioning("ver-bad", bucket="b", versioning_configuration={"status": "Paused"})
    aws.autoscaling.Group(
        "asg-bad",
        min_size=0,
        max_size=2,
        launch_template={"name": "lt", "version": "$Latest"},
        mixed_instances_policy={"launch_template": {"overrides": [{"instance_type": "g6.12xlage"}]}},
    )
    aws.kms.Key("key-bad", deletion_window_in_days=400)
    # What pulumi-aws autonames for the interruption component's targets (AutoName("targetId", 255)).
    aws.cloudwatch.EventTarget(
        "tgt-long",
        rule="spot",
        arn="arn:aws:sqs:us-east-1:123456789012:q",
        target_id="gpucloud-prod-interruption-spot-interruption-node-termination-handler-1a2b3c4",
    )
    aws.lambda_.Function("fn-bad", role="r", runtime="python2.9", memory_size=64, handler="a b", package_type="Image")
    aws.eks.Cluster("cluster-bad", role_arn="arn:aws:iam::1:role/c", vpc_config={"subnet_ids": ["s"]}, name="-gpu")


@pytest.fixture(scope="module")
def defects() -> list[Finding]:
    return findings(run_callable(_defects))


def test_unknown_nested_key_is_reported_with_the_closest_declared_input(defects: list[Finding]) -> None:
    f = of(defects, "lt-unknown-key")[("aws.inputs", "metadataOptions.http_tokenz")]
    assert f.severity == "error"
    assert f.message == "unknown input 'http_tokenz'; did you mean 'httpTokens'?"
    assert f.expected.startswith("an input of LaunchTemplateMetadataOptionsArgs: httpEndpoint, httpProtocolIpv6,")
    assert f.source.startswith(f"{PULUMI_AWS}") and f.source.endswith("input type LaunchTemplateMetadataOptionsArgs")


def test_unknown_top_level_key_and_missing_required_input(defects: list[Finding]) -> None:
    pg = of(defects, "pg-raw")
    assert pg[("aws.inputs", "spred")].message == "unknown input 'spred'; did you mean 'spreadLevel'?"
    assert pg[("aws.inputs", "spred")].source.endswith("input type PlacementGroupArgs")
    rp = of(defects, "rp-missing")
    assert rp[("aws.inputs", "policy")].message == "required input 'policy' is missing"
    assert rp[("aws.inputs", "policy")].expected == "policy set (string or object PolicyDocumentArgs)"


def test_wrong_json_types(defects: list[Finding]) -> None:
    f = of(defects, "ng-wrong-type")[("aws.inputs", "scalingConfig.maxSize")]
    assert f.message == "'lots' is a string, not an integer"
    assert f.expected == "integer"
    assert f.source.endswith("input type NodeGroupScalingConfigArgs")
    g = of(defects, "ng-not-a-list")[("aws.inputs", "instanceTypes")]
    assert g.message == "'p5.48xlarge' is a string, not an array of string"
    assert of(defects, "ng-fraction")[("aws.inputs", "scalingConfig.maxSize")].message == "2.5 is not a whole number"
    release = of(defects, "release-bad")
    assert release[("kubernetes.inputs", "timeout")].message == "'soon' is a string, not an integer"
    assert release[("kubernetes.inputs", "timeout")].source.startswith("pulumi-kubernetes 4.34")


def test_missing_required_nested_input(defects: list[Finding]) -> None:
    f = of(defects, "ng-missing-required")[("aws.inputs", "scalingConfig.desiredSize")]
    assert f.message == "required input 'desiredSize' is missing"
    assert f.source.endswith("input type NodeGroupScalingConfigArgs")


def test_unknown_resource_type_token(defects: list[Finding]) -> None:
    f = of(defects, "lt-bad-token")[("aws.inputs", "type")]
    assert f.message == (
        "aws:ec2/launchTemplat:LaunchTemplate is not a resource type of the installed provider; "
        "did you mean 'aws:ec2/launchTemplate:LaunchTemplate'?"
    )
    assert f.source.startswith(PULUMI_AWS) and f.source.endswith(" resource registry")


def test_botocore_enums_including_instance_types(defects: list[Finding]) -> None:
    lt = of(defects, "lt-bad-enum")
    tokens = lt[("aws.api", "metadataOptions.httpTokens")]
    assert tokens.message == "value 'require' is not one the API accepts; did you mean 'required'?"
    assert tokens.expected == "one of optional, required"
    assert tokens.source.startswith("botocore 1.")
    assert tokens.source.endswith("ec2 model (2016-11-15), shape LaunchTemplateHttpTokensState")
    itype = lt[("aws.api", "instanceType")]
    assert itype.message == "value 'p5.48xlage' is not one the API accepts; did you mean 'p5.48xlarge'?"
    assert itype.source.endswith("shape InstanceType")
    assert lt[("aws.api", "blockDeviceMappings[0].ebs.volumeType")].expected.startswith("one of standard, io1,")
    ng = of(defects, "ng-spott")
    assert ng[("aws.api", "capacityType")].expected == "one of ON_DEMAND, SPOT, CAPACITY_BLOCK"
    assert ng[("aws.api", "capacityType")].message.endswith("did you mean 'SPOT'?")
    # EKS types instanceTypes as bare strings; the EC2 model's enum is what the names must be.
    assert ng[("aws.api", "instanceTypes[1]")].source.endswith("ec2 model (2016-11-15), shape InstanceType")
    assert ("aws.api", "instanceTypes[0]") not in ng
    assert (
        of(defects, "pg-bad")[("aws.api", "strategy")].expected == "one of cluster, spread, partition, precision-time"
    )


def test_provider_additions_to_an_api_enum_are_listed(defects: list[Finding]) -> None:
    f = of(defects, "ver-bad")[("aws.api", "versioningConfiguration.status")]
    assert f.expected == "one of Enabled, Suspended, Disabled"
    assert f.source.endswith("shape BucketVersioningStatus")


def test_inputs_that_terraform_renames_are_matched_to_their_members(defects: list[Finding]) -> None:
    asg = of(defects, "asg-bad")
    # `launchTemplate.name` is the API's LaunchTemplate.LaunchTemplateName (Terraform drops the parent's prefix).
    assert asg[("aws.api", "launchTemplate.name")].message == "value 'lt' is 2 characters, under the minimum 3"
    assert asg[("aws.api", "launchTemplate.name")].source.endswith(
        "autoscaling model (2011-01-01), shape LaunchTemplateName"
    )
    over = asg[("aws.api", "mixedInstancesPolicy.launchTemplate.overrides[0].instanceType")]
    assert over.message.endswith("did you mean 'g6.12xlarge'?")


def test_botocore_ranges(defects: list[Finding]) -> None:
    key = of(defects, "key-bad")[("aws.api", "deletionWindowInDays")]
    assert key.message == "400 is above the maximum 365"
    assert key.source.endswith("shape PendingWindowInDaysType")
    ng = of(defects, "ng-range")
    assert ng[("aws.api", "scalingConfig.minSize")].message == "-1 is below the minimum 0"
    assert ng[("aws.api", "scalingConfig.maxSize")].message == "0 is below the minimum 1"
    assert ng[("aws.api", "scalingConfig.maxSize")].source.endswith("shape Capacity")
    fsx = of(defects, "fsx-bad")
    assert fsx[("aws.api", "perUnitStorageThroughput")].message == "2000 is above the maximum 1000"
    assert fsx[("aws.api", "perUnitStorageThroughput")].expected == "a number in [12, 1000]"


def test_every_mapped_service_is_read_the_same_way(defects: list[Finding]) -> None:
    fn = of(defects, "fn-bad")
    assert fn[("aws.api", "runtime")].source.endswith("shape Runtime")
    assert fn[("aws.api", "runtime")].message.startswith("value 'python2.9' is not one the API accepts")
    assert fn[("aws.api", "memorySize")].message == "64 is below the minimum 128"
    assert fn[("aws.api", "handler")].source.endswith("lambda model (2015-03-31), shape Handler")


def test_botocore_patterns_and_lengths(defects: list[Finding]) -> None:
    fsx = of(defects, "fsx-bad")[("aws.api", "weeklyMaintenanceStartTime")]
    assert fsx.message == "value '9:03:00' does not match the API's pattern"
    assert fsx.source.endswith("fsx model (2018-03-01), shape WeeklyTime")
    target = of(defects, "tgt-long")[("aws.api", "targetId")]
    assert target.message.endswith("is 77 characters, over the maximum 64")
    assert target.source.endswith("events model (2015-10-07), shape TargetId")
    role = of(defects, "role-bad-name")[("aws.api", "name")]
    assert role.message == "value 'gpu node role' does not match the API's pattern"
    assert role.source.endswith("shape roleNameType")
    # IAM's tag pattern is written with Java's Unicode classes (\p{L}\p{Z}\p{N}); a comma is outside all of them.
    tag = of(defects, "role-bad-name")[("aws.api", "tags.Team")]
    assert tag.message == "value 'ml, platform' does not match the API's pattern"
    assert tag.source.endswith("iam model (2010-05-08), shape tagValueType")
    assert of(defects, "cluster-bad")[("aws.api", "name")].source.endswith("eks model (2017-11-01), shape ClusterName")


def _valid() -> None:
    role = aws.iam.Role("node-role", assume_role_policy=ASSUME, tags={"Owner": "équipe ml@example.com"})
    lt = aws.ec2.LaunchTemplate(
        "lt-ok",
        instance_type="p5.48xlarge",
        metadata_options={"http_tokens": "required", "http_put_response_hop_limit": 2},
        block_device_mappings=[
            {"device_name": "/dev/xvda", "ebs": {"volume_type": "gp3", "volume_size": 200, "encrypted": "true"}}
        ],
        network_interfaces=[{"device_index": 0, "network_card_index": 0, "interface_type": "efa"}],
        tags={"Team": "ml"},
    )
    # Unknown values (role.arn, lt.id) and secrets match every type and constraint.
    _node_group(
        "ng-ok",
        node_role_arn=role.arn,
        capacity_type="SPOT",
        launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
        scaling_config={"min_size": 0, "max_size": pulumi.Output.secret(3), "desired_size": role.arn.apply(len)},
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    )
    aws.fsx.LustreFileSystem(
        "fsx-ok",
        subnet_ids="subnet-1",
        storage_capacity=2400,
        deployment_type="PERSISTENT_2",
        per_unit_storage_throughput=250,
        weekly_maintenance_start_time="7:03:00",
        log_configuration={"level": "WARN_ERROR", "destination": role.arn},
    )
    aws.ec2.PlacementGroup("pg-ok", strategy="cluster")
    aws.autoscaling.Group(
        "asg-ok",
        min_size=0,
        max_size=2,
        vpc_zone_identifiers=["subnet-1"],
        mixed_instances_policy={
            "launch_template": {
                "launch_template_specification": {"launch_template_id": lt.id, "version": "$Latest"},
                "overrides": [
                    {"instance_type": "g6.12xlarge"},
                    # Attribute-based selection takes wildcards, which are not instance type names.
                    {"instance_requirements": {"allowed_instance_types": ["g6*"], "vcpu_count": {"min": 4}}},
                ],
            },
            "instances_distribution": {
                "on_demand_base_capacity": 0,
                "spot_allocation_strategy": "price-capacity-optimized",
            },
        },
        tags=[{"key": "k8s.io/cluster-autoscaler/enabled", "value": "true", "propagate_at_launch": True}],
    )
    # CreateKey's KeySpec (not the deprecated CustomerMasterKeySpec) carries the newer specs.
    aws.kms.Key("key-ok", customer_master_key_spec="ML_DSA_65", key_usage="SIGN_VERIFY", deletion_window_in_days=7)
    # "Disabled" is the provider's own addition to the API's versioning statuses.
    aws.s3.BucketVersioning("ver-ok", bucket="b", versioning_configuration={"status": "Disabled"})
    # Services a red-team program might reach for beside the fleet, each with values the provider accepts.
    aws.lambda_.Function(
        "fn-ok",
        role=role.arn,
        runtime="python3.12",
        handler="app.handler",
        memory_size=512,
        timeout=60,
        architectures=["arm64"],
        code=pulumi.AssetArchive({"app.py": pulumi.StringAsset("def handler(e, c): return e")}),
        environment={"variables": {"QUEUE_URL": "https://sqs.example", "MAX_RETRIES": "3"}},
        ephemeral_storage={"size": 1024},
    )
    aws.cloudwatch.MetricAlarm(
        "alarm-ok",
        comparison_operator="GreaterThanOrEqualToThreshold",
        evaluation_periods=2,
        metric_name="GPUUtilization",
        namespace="gpucloud",
        period=60,
        statistic="Average",
        threshold=90,
        treat_missing_data="notBreaching",
        dimensions={"AutoScalingGroupName": "gpu"},
    )
    aws.efs.FileSystem(
        "efs-ok",
        performance_mode="generalPurpose",
        throughput_mode="elastic",
        lifecycle_policies=[{"transition_to_ia": "AFTER_30_DAYS"}],
    )
    aws.ecr.Repository(
        "ecr-ok",
        name="team/trainer",
        image_tag_mutability="IMMUTABLE",
        encryption_configurations=[{"encryption_type": "KMS"}],
    )
    aws.ssm.Parameter("param-ok", name="/gpucloud/ami", type="String", value="ami-123", tier="Standard")
    aws.autoscaling.Policy(
        "policy-ok",
        autoscaling_group_name="gpu",
        policy_type="TargetTrackingScaling",
        target_tracking_configuration={
            "predefined_metric_specification": {"predefined_metric_type": "ASGAverageCPUUtilization"},
            "target_value": 50,
        },
    )
    k8s.helm.v3.Release("release-ok", chart="karpenter", version="1.8.1", values={"replicas": 2}, timeout=600)


def _fleet() -> None:
    """A GPU fleet in raw pulumi_aws, written the way the provider's docs show each resource."""
    key = aws.kms.Key("key", description="GPU fleet key", enable_key_rotation=True, rotation_period_in_days=365)
    aws.kms.Alias("alias", name="alias/gpu-fleet", target_key_id=key.key_id)
    role = aws.iam.Role("cluster-role", path="/gpucloud/", assume_role_policy=ASSUME, max_session_duration=7200)
    aws.kms.Grant(
        "grant",
        key_id=key.key_id,
        grantee_principal=role.arn,
        operations=["Decrypt", "GenerateDataKeyWithoutPlaintext"],
    )
    cluster = aws.eks.Cluster(
        "cluster",
        name="gpu-fleet",
        role_arn=role.arn,
        version="1.34",
        vpc_config={
            "subnet_ids": ["subnet-1", "subnet-2"],
            "endpoint_private_access": True,
            "public_access_cidrs": ["10.0.0.0/8"],
        },
        access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
        enabled_cluster_log_types=["api", "audit", "authenticator"],
        kubernetes_network_config={"service_ipv4_cidr": "172.20.0.0/16", "ip_family": "ipv4"},
        upgrade_policy={"support_type": "STANDARD"},
        encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
    )
    aws.eks.Addon(
        "vpc-cni",
        cluster_name=cluster.name,
        addon_name="vpc-cni",
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="PRESERVE",
        configuration_values=json.dumps({"env": {"ENABLE_PREFIX_DELEGATION": "true"}}),
    )
    aws.ec2.CapacityReservation(
        "odcr",
        instance_type="p5.48xlarge",
        instance_platform="Linux/UNIX",
        availability_zone="us-east-1a",
        instance_count=2,
        end_date_type="unlimited",
        instance_match_criteria="targeted",
        tenancy="default",
    )
    aws.ec2.Instance(
        "bastion",
        ami="ami-0123456789abcdef0",
        instance_type="m7i.large",
        metadata_options={"http_tokens": "required", "http_endpoint": "enabled"},
        root_block_device={"volume_size": 50, "volume_type": "gp3", "encrypted": True},
        instance_initiated_shutdown_behavior="stop",
    )
    aws.iam.OpenIdConnectProvider(
        "oidc",
        url="https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
        client_id_lists=["sts.amazonaws.com"],
        thumbprint_lists=["9e99a48a9960b14926bb7f3b02e22da2b0ab7280"],
    )
    aws.cloudwatch.EventRule("spot", event_pattern=json.dumps({"source": ["aws.ec2"]}), state="ENABLED")
    aws.cloudwatch.EventRule("tick", schedule_expression="rate(5 minutes)")
    aws.cloudwatch.LogGroup("logs", retention_in_days=30, kms_key_id=key.arn)
    aws.fsx.DataRepositoryAssociation(
        "dra",
        file_system_id="fs-0123456789abcdef0",
        file_system_path="/datasets",
        data_repository_path="s3://gpu-datasets/train",
        s3={"auto_import_policy": {"events": ["NEW", "CHANGED", "DELETED"]}},
    )
    aws.s3.BucketLifecycleConfiguration(
        "lifecycle",
        bucket="gpu-datasets",
        rules=[
            {
                "id": "tier",
                "status": "Enabled",
                "filter": {"prefix": "raw/"},
                "transitions": [{"days": 30, "storage_class": "INTELLIGENT_TIERING"}],
                "noncurrent_version_expiration": {"noncurrent_days": 30},
            }
        ],
    )


def test_a_fleet_written_as_the_provider_docs_show_passes() -> None:
    assert findings(run_callable(_fleet)) == []


def test_valid_resources_with_unknowns_and_secrets_pass() -> None:
    plan = run_callable(_valid)
    ng = plan.find("aws:eks/nodeGroup:NodeGroup", "ng-ok")
    assert ng.inputs["nodeRoleArn"] == UNKNOWN and ng.inputs["scalingConfig"]["maxSize"] == SECRET
    assert findings(plan) == []


# --- the shipped stacks ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prod() -> Plan:
    return run_program(ROOT, "prod")


@pytest.fixture(scope="module")
def dev() -> Plan:
    return run_program(ROOT, "dev")


def test_dev_and_staging_have_no_aws_input_findings(dev: Plan) -> None:
    assert findings(dev) == []
    assert findings(run_program(ROOT, "staging")) == []


def test_prod_and_team_stack_have_no_aws_input_findings(prod: Plan) -> None:
    assert findings(prod) == []
    assert findings(run_program(ROOT / "stacks" / "teams" / "vision", "dev")) == []


def _mutated(plan: Plan, type_: str, edit: Callable[[dict[str, Any]], None]) -> tuple[Plan, str]:
    """A copy of the plan with one resource of `type_` edited (the defect put back); returns its URN."""
    twin = copy.deepcopy(plan)
    target = twin.of_type(type_)[0]
    edit(target.inputs)
    return twin, target.urn


DEFECTS: list[tuple[str, str, Callable[[dict[str, Any]], None], str, str]] = [
    (
        "unknown key",
        "aws:ec2/launchTemplate:LaunchTemplate",
        lambda i: i["metadataOptions"].update(httpTokenz="required"),
        "aws.inputs",
        "metadataOptions.httpTokenz",
    ),
    (
        "wrong type",
        "aws:eks/nodeGroup:NodeGroup",
        lambda i: i["scalingConfig"].update(maxSize=[4.0]),
        "aws.inputs",
        "scalingConfig.maxSize",
    ),
    (
        "missing required",
        "aws:eks/nodeGroup:NodeGroup",
        lambda i: i.pop("clusterName"),
        "aws.inputs",
        "clusterName",
    ),
    (
        "enum",
        "aws:ec2/launchTemplate:LaunchTemplate",
        lambda i: i["metadataOptions"].update(httpTokens="require"),
        "aws.api",
        "metadataOptions.httpTokens",
    ),
    (
        "range",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        lambda i: i.update(automaticBackupRetentionDays=120.0),
        "aws.api",
        "automaticBackupRetentionDays",
    ),
    (
        "pattern",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        lambda i: i.update(fileSystemTypeVersion="v2.15"),
        "aws.api",
        "fileSystemTypeVersion",
    ),
    (
        "instance type",
        "aws:eks/nodeGroup:NodeGroup",
        lambda i: i.update(instanceTypes=["m7i.xlage"]),
        "aws.api",
        "instanceTypes[0]",
    ),
]


@pytest.mark.parametrize(("label", "type_", "edit", "check", "field"), DEFECTS, ids=[d[0] for d in DEFECTS])
def test_defect_put_back_into_prod_is_reported(
    prod: Plan, label: str, type_: str, edit: Callable[[dict[str, Any]], None], check: str, field: str
) -> None:
    twin, urn = _mutated(prod, type_, edit)
    found = [(f.check, f.urn, f.field) for f in findings(twin)]
    assert found == [(check, urn, field)], label


def test_a_stack_config_the_spec_accepts_but_the_api_refuses(dev: Plan) -> None:
    # The platform spec bounds each tag's length but not their number; EKS, EC2, IAM and FSx take at most 50.
    platform = copy.deepcopy(dev.config["gpucloud:platform"])
    platform["tags"].update({f"Extra{i:02d}": "x" for i in range(50)})
    found = findings(run_program(ROOT, "dev", config_overrides={"gpucloud:platform": platform}))
    cluster = [f for f in found if "aws:eks/cluster:Cluster" in f.urn]
    assert [(f.check, f.field, f.message) for f in cluster] == [("aws.api", "tags", "57 entries, over the maximum 50")]
    assert cluster[0].source.endswith("eks model (2017-11-01), shape TagMap")
    assert {f.field for f in found} == {"tags"}
    assert len({f.urn for f in found}) > 20


# --- mechanism ------------------------------------------------------------------------------------------------


def test_input_types_come_from_the_installed_sdk() -> None:
    schema = provider_types.resource_schema("aws:eks/nodeGroup:NodeGroup")
    assert schema is not None and schema.args.name == "NodeGroupArgs"
    assert schema.args.required == {"clusterName", "nodeRoleArn", "scalingConfig", "subnetIds"}
    assert schema.args.props["taints"].describe() == "array of object NodeGroupTaintArgs"
    # The generator renames an args class that collides with a nested input type; the lookup follows it.
    logging = provider_types.resource_schema("aws:s3/bucketLogging:BucketLogging")
    assert logging is not None and logging.args.name == "BucketLoggingInitArgs"
    # Kubernetes API objects are left to the OpenAPI schema check; CRD-backed types have no SDK class.
    namespace = provider_types.resource_schema("kubernetes:core/v1:Namespace")
    assert namespace is not None and namespace.kubernetes_object
    assert provider_types.resource_schema("kubernetes:kubeflow.org/v1:MPIJob") is None


def test_every_mapped_root_exists_in_the_installed_botocore() -> None:
    for token, mapping in aws_api.API_SHAPES.items():
        model = botocore_models.service_model(mapping.service, aws_api._service_roots(mapping.service))
        assert model is not None, token
        assert all(model.root(root) is not None for root in mapping.roots), token
        assert provider_types.resource_schema(token) is not None, token


def test_extracted_constraints_round_trip_through_the_disk_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(botocore_models.CACHE_ENV, str(tmp_path))
    roots = ("CreateNodegroup",)
    botocore_models.clear_memory_cache()
    fresh = botocore_models.service_model("eks", roots)
    assert len(list(tmp_path.rglob("eks-*.json"))) == 1
    botocore_models.clear_memory_cache()
    cached = botocore_models.service_model("eks", roots)
    assert fresh is not None and cached == fresh
    assert cached.root("CreateNodegroup") == cached.shape("CreateNodegroupRequest")
    assert cached.shapes["CapacityTypes"].enum == ("ON_DEMAND", "SPOT", "CAPACITY_BLOCK")
    # A damaged file is parsed again and rewritten, not trusted.
    [path] = tmp_path.rglob("eks-*.json")
    path.write_text('{"shapes": []}', encoding="utf-8")
    botocore_models.clear_memory_cache()
    assert botocore_models.service_model("eks", roots) == fresh
    assert json.loads(path.read_text(encoding="utf-8"))["inputs"] == {"CreateNodegroup": "CreateNodegroupRequest"}
    botocore_models.clear_memory_cache()


def test_a_failure_inside_the_check_is_a_warning_on_that_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = run_callable(lambda: aws.ec2.PlacementGroup("pg", strategy="cluster"))

    def broken(token: str) -> None:
        raise RuntimeError("unreadable SDK")

    monkeypatch.setattr(aws_inputs, "resource_schema", broken)
    [f] = run_conformance(plan, only=["aws.inputs"]).findings
    assert (f.severity, f.urn.rsplit("::", 1)[1]) == ("warning", "pg")
    assert f.message == "the check could not read this resource's inputs: RuntimeError: unreadable SDK"


def test_java_pattern_idioms_are_read_no_narrower_than_the_service() -> None:
    tags = botocore_models.compiled(r"[\p{L}\p{Z}\p{N}_.:/=+\-@]*")
    assert tags is not None and tags.fullmatch("équipe ml 42") and not tags.fullmatch("a,b")
    xml = botocore_models.compiled(r"[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*")
    assert xml is not None and xml.fullmatch("gpu \U0001f680") and not xml.fullmatch("bell\x07")
    # A negated Unicode class would reject more once widened; such a pattern is left unchecked.
    assert botocore_models.compiled(r"[^\p{L}]+") is None


def test_clean_resources_are_remembered_and_findings_always_rechecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpucloud.conformance.aws_api as mod
    from gpucloud.conformance import ConformanceContext

    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path))
    calls: list[str] = []
    real = mod.api_findings

    def counting(r):  # type: ignore[no-untyped-def]
        calls.append(r.name)
        return real(r)

    monkeypatch.setattr(mod, "api_findings", counting)

    def program() -> None:
        aws.ec2.LaunchTemplate("good", metadata_options={"http_tokens": "required"})
        aws.ec2.LaunchTemplate("bad", metadata_options={"http_tokens": "require"})

    plan = run_callable(program)
    first = list(mod.check_aws_api(ConformanceContext(plan=plan)))
    second = list(mod.check_aws_api(ConformanceContext(plan=plan)))
    assert sorted(calls) == ["bad", "bad", "good"]  # the clean template is not checked again
    assert first == second
    assert [(f.urn.rsplit("::", 1)[-1], f.field) for f in second] == [("bad", "metadataOptions.httpTokens")]
