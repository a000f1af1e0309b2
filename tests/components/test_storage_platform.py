"""The data layer of the shipped stacks, built through the platform's storage builder with a literal cluster:
prod shows both buckets with every protection, FSx linked to both, the CSI add-on and the PV/PVC; dev is a small
scratch setup; `pulumi destroy` keeps every data-holding resource unless the spec allows deletion."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from storage_testkit import BUCKET, DATA_HOLDING, DRA, FS, KEY, handle, provider

from gpucloud.components.platform import Platform, _build_storage, build
from gpucloud.components.storage import GpuStorageConfig
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import PlatformSpec, parse_platform
from gpucloud.spec.storage import StorageSpec

ROOT = Path(__file__).resolve().parents[2]


def stack_spec(stack: str, **storage_overrides: Any) -> PlatformSpec:
    data = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]["gpucloud:platform"]
    data["storage"].update(storage_overrides)
    return parse_platform(data)


def plan_stack(spec: PlatformSpec) -> tuple[Plan, Platform]:
    holder: dict[str, Platform] = {}

    def program() -> None:
        cluster = replace(handle(provider()), subnet_ids_by_az={az: f"subnet-{az}" for az in spec.availability_zones})
        platform = Platform(spec=spec, cluster=cluster)
        _build_storage(spec, platform)
        for key, value in platform.exports.items():
            pulumi.export(key, value)
        holder["platform"] = platform

    return run_callable(program, preview=True, region=spec.region), holder["platform"]


@pytest.fixture(scope="module")
def prod() -> tuple[Plan, Platform]:
    return plan_stack(stack_spec("prod"))


def test_prod_data_layer(prod: tuple[Plan, Platform]) -> None:
    plan, _ = prod
    counts: dict[str, int] = {}
    for r in plan:
        counts[r.type] = counts.get(r.type, 0) + 1
    expected = {
        BUCKET: 3,
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": 3,
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls": 3,
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": 3,
        "aws:s3/bucketVersioning:BucketVersioning": 2,
        "aws:s3/bucketPolicy:BucketPolicy": 3,
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": 3,
        "aws:s3/bucketLogging:BucketLogging": 2,
        KEY: 1,
        "aws:kms/alias:Alias": 1,
        "aws:kms/grant:Grant": 2,
        FS: 1,
        DRA: 2,
        "aws:eks/addon:Addon": 1,
        "kubernetes:core/v1:PersistentVolume": 1,
        "kubernetes:core/v1:PersistentVolumeClaim": 1,
        "kubernetes:core/v1:Namespace": 1,
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": 2,
    }
    assert {t: counts.get(t, 0) for t in expected} == expected
    assert "kubernetes:storage.k8s.io/v1:StorageClass" not in counts
    fs = plan.find(FS, "gpucloud-prod-storage-fsx-fs")
    assert fs.inputs["deploymentType"] == "PERSISTENT_2"
    assert fs.inputs["subnetIds"] == "subnet-us-east-1a"
    assert {d.inputs["fileSystemPath"] for d in plan.of_type(DRA)} == {"/datasets", "/checkpoints"}
    assert {d.inputs["dataRepositoryPath"] for d in plan.of_type(DRA)} == {
        "s3://gpucloud-prod-datasets-123456789012-us-east-1/datasets/",
        "s3://gpucloud-prod-checkpoints-123456789012-us-east-1/checkpoints/",
    }


def test_prod_destroy_keeps_and_protects_all_data(prod: tuple[Plan, Platform]) -> None:
    plan, _ = prod
    holding = plan.of_type(*DATA_HOLDING)
    assert len(holding) == 7
    assert [r.name for r in holding if not (r.retain_on_delete and r.protect)] == []
    assert all(r.retain_on_delete for r in plan if r.type.startswith("aws:s3/"))


def test_prod_exports(prod: tuple[Plan, Platform]) -> None:
    plan, platform = prod
    assert set(platform.exports) == {
        "datasetBucketName",
        "datasetBucketArn",
        "checkpointBucketName",
        "checkpointBucketArn",
        "checkpointUri",
        "storageKmsKeyArn",
        "storageReaderRoleArn",
        "storageWriterRoleArn",
        "accessLogBucketName",
        "fsxFileSystemId",
        "fsxDnsName",
        "fsxMountName",
        "fsxAvailabilityZone",
        "fsxStorageCapacityGib",
        "fsxAggregateThroughputMBps",
        "fsxPvcName",
        "fsxPvcNamespace",
    }
    assert {k: plan.outputs[k] for k in ("fsxAggregateThroughputMBps", "fsxStorageCapacityGib")} == {
        "fsxAggregateThroughputMBps": 4800.0,
        "fsxStorageCapacityGib": 9600,
    }
    assert {k: plan.outputs[k] for k in ("fsxAvailabilityZone", "fsxPvcName", "fsxPvcNamespace")} == {
        "fsxAvailabilityZone": "us-east-1a",
        "fsxPvcName": "fsx-lustre",
        "fsxPvcNamespace": "training",
    }


def test_dev_is_a_small_deletable_scratch_setup() -> None:
    plan, _ = plan_stack(stack_spec("dev"))
    fs = plan.find(FS, "gpucloud-dev-storage-fsx-fs")
    assert (fs.inputs["deploymentType"], fs.inputs["storageCapacity"]) == ("SCRATCH_2", 1200.0)
    assert fs.inputs["subnetIds"] == "subnet-us-west-2a"
    assert plan.of_type(DRA) == []
    assert [r.name for r in plan if r.retain_on_delete or r.protect] == []
    assert {r.inputs["forceDestroy"] for r in plan.of_type(BUCKET)} == {True}
    assert len(plan.of_type("kubernetes:storage.k8s.io/v1:StorageClass")) == 1
    assert plan.outputs["fsxAggregateThroughputMBps"] == 240.0


def test_staging_retains_without_protect() -> None:
    plan, _ = plan_stack(stack_spec("staging"))
    holding = plan.of_type(*DATA_HOLDING)
    assert {r.type for r in holding} == set(DATA_HOLDING)
    assert all(r.retain_on_delete and not r.protect for r in holding)


def test_prod_with_deletion_allowed_keeps_nothing() -> None:
    plan, _ = plan_stack(stack_spec("prod", allowDataDeletion=True))
    assert [r.name for r in plan if r.retain_on_delete or r.protect] == []


def test_fsx_off_leaves_buckets_and_driver() -> None:
    spec = stack_spec("prod", fsx=None)
    plan, platform = plan_stack(spec)
    assert plan.of_type(FS, DRA, "kubernetes:core/v1:PersistentVolume") == []
    assert len(plan.of_type(BUCKET)) == 3
    assert len(plan.of_type("aws:eks/addon:Addon")) == 1
    assert platform.exports["fsxFileSystemId"] is None
    assert platform.exports["fsxAggregateThroughputMBps"] is None


def test_build_creates_storage_only_with_a_cluster_and_a_storage_section() -> None:
    def storage_in(spec: PlatformSpec) -> list[str]:
        holder: dict[str, Platform] = {}

        def program() -> None:
            holder["platform"] = build(spec)

        plan = run_callable(program, preview=True, region=spec.region)
        has_storage = holder["platform"].cluster is not None and spec.storage is not None
        found = [r.name for r in plan.of_type("gpucloud:storage:GpuStorage")]
        assert found == ([f"{spec.name}-storage"] if has_storage else [])
        return found

    assert storage_in(stack_spec("prod").model_copy(update={"storage": None})) == []
    storage_in(stack_spec("prod"))


def test_config_needs_an_az_when_fsx_is_on() -> None:
    storage = StorageSpec.model_validate({"fsx": {"deploymentType": "SCRATCH_2", "availabilityZone": "us-east-1a"}})
    with pytest.raises(ValueError, match="fsx_availability_zone is required"):
        GpuStorageConfig(
            region="us-east-1",
            tags={"CostCenter": "ml", "Team": "p", "Project": "g", "Env": "dev"},
            name_prefix="x",
            storage=storage,
        )


def _owner(plan: Plan, record_urn_deps: list[str], type_: str) -> str:
    by_urn = plan.by_urn()
    owners = [u for u in record_urn_deps if by_urn[u].type == type_]
    assert len(owners) == 1
    return owners[0]


def test_prod_plan_meets_the_storage_guardrails(prod: tuple[Plan, Platform]) -> None:
    """The property shapes guardrails 17-24, 40, 48 and 53 check, read from the prod plan as a policy would."""
    plan, _ = prod
    buckets = {r.urn: r.inputs["tags"]["DataRole"] for r in plan.of_type(BUCKET)}
    assert sorted(buckets.values()) == ["access-logs", "checkpoints", "datasets"]

    def per_bucket(type_: str) -> dict[str, dict[str, Any]]:
        return {buckets[_owner(plan, r.property_dependencies["bucket"], BUCKET)]: r.inputs for r in plan.of_type(type_)}

    # 19 public access blocked, 20 ACLs disabled, 22/23 TLS-only and no public Allow: every bucket.
    pab = per_bucket("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    flags = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    assert {role: all(p[f] is True for f in flags) for role, p in pab.items()} == dict.fromkeys(buckets.values(), True)
    own = per_bucket("aws:s3/bucketOwnershipControls:BucketOwnershipControls")
    assert {r: o["rule"]["objectOwnership"] for r, o in own.items()} == dict.fromkeys(
        buckets.values(), "BucketOwnerEnforced"
    )
    for role, p in per_bucket("aws:s3/bucketPolicy:BucketPolicy").items():
        statements = json.loads(p["policy"])["Statement"]
        assert any(
            s["Effect"] == "Deny"
            and s["Principal"] == "*"
            and s["Action"] == "s3:*"
            and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            for s in statements
        ), role
        assert not [s for s in statements if s["Effect"] == "Allow" and s["Principal"] == "*"], role
    # 21 SSE-KMS with a bucket key on the data buckets.
    sse = per_bucket("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    for role in ("datasets", "checkpoints"):
        rule = sse[role]["rules"][0]
        assert rule["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
        assert "kmsMasterKeyId" in rule["applyServerSideEncryptionByDefault"]
        assert rule["bucketKeyEnabled"] is True
    # 24 access logging on the data buckets.
    assert sorted(per_bucket("aws:s3/bucketLogging:BucketLogging")) == ["checkpoints", "datasets"]
    # 48 checkpoint bucket: versioning and lifecycle with noncurrent expiration and multipart abort.
    assert per_bucket("aws:s3/bucketVersioning:BucketVersioning")["checkpoints"]["versioningConfiguration"] == {
        "status": "Enabled"
    }
    rules = per_bucket("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")["checkpoints"]["rules"]
    assert any("noncurrentVersionExpiration" in r for r in rules)
    assert any(r.get("abortIncompleteMultipartUpload", {}).get("daysAfterInitiation") for r in rules)
    # 17 Lustre ports from nodes/self only, 18 CMK on persistent, 40 LZ4, 53 locality, backups, logs, links.
    fs = plan.find(FS, "gpucloud-prod-storage-fsx-fs")
    sg_urn = _owner(plan, fs.property_dependencies["securityGroupIds"], "aws:ec2/securityGroup:SecurityGroup")
    ingress = [
        r
        for r in plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if sg_urn in r.property_dependencies.get("securityGroupId", [])
    ]
    assert {(int(r.inputs["fromPort"]), int(r.inputs["toPort"])) for r in ingress} == {(988, 988), (1018, 1023)}
    assert not [r for r in ingress if {"cidrIpv4", "cidrIpv6"} & set(r.inputs)]
    assert all(r.inputs["description"] for r in ingress)
    assert "kmsKeyId" in fs.inputs
    assert fs.inputs["dataCompressionType"] == "LZ4"
    assert isinstance(fs.inputs["subnetIds"], str)
    assert fs.inputs["copyTagsToBackups"] is True
    assert fs.inputs["automaticBackupRetentionDays"] >= 1
    assert fs.inputs["logConfiguration"]["level"] == "WARN_ERROR"
    dras = plan.of_type(DRA)
    assert 0 < len(dras) <= 8
    for d in dras:
        assert d.inputs["dataRepositoryPath"].startswith("s3://")
        assert set(d.inputs["s3"]) == {"autoImportPolicy", "autoExportPolicy"}
    assert not {"importPath", "exportPath", "autoImportPolicy"} & set(fs.inputs)
