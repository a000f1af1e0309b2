"""Storage section of the stack spec: defaults, sizing helpers, and every bad input rejected with path and fix."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.spec import SpecError, parse_platform
from gpucloud.spec.storage import (
    FsxSpec,
    StorageSpec,
    aggregate_throughput_mbps,
    bucket_name_problems,
    capacity_problem,
)

ROOT = Path(__file__).resolve().parents[2]
S = "gpucloud:platform.storage"


def platform(storage: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "gpucloud-test",
        "environment": "prod",
        "region": "us-east-1",
        "availabilityZones": ["us-east-1a", "us-east-1b"],
        "tags": {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud"},
        "cluster": {
            "kubernetesVersion": "1.34",
            "adminPrincipalArns": ["arn:aws:iam::123456789012:role/platform-admin"],
        },
        "nodePools": [
            {
                "name": "train",
                "workload": "training",
                "instanceTypes": ["p5.48xlarge"],
                "minSize": 0,
                "desiredSize": 1,
                "maxSize": 4,
                "availabilityZones": ["us-east-1a"],
                "efa": {"enabled": True},
            },
            {
                "name": "infer",
                "workload": "inference",
                "instanceTypes": ["g6e.xlarge"],
                "minSize": 0,
                "desiredSize": 1,
                "maxSize": 4,
            },
        ],
        "budget": {"monthlyLimitUsd": 1000, "alertEmails": ["ops@example.com"]},
    }
    if storage is not None:
        data["storage"] = storage
    return data


def fsx(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "deploymentType": "PERSISTENT_2",
        "storageCapacityGib": 2400,
        "perUnitStorageThroughput": 250,
        "feedsPool": "train",
    }
    out.update(overrides)
    return out


def issues_of(storage: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as info:
        parse_platform(platform(storage))
    return {i.path: i.message for i in info.value.issues}


# --- defaults and helpers ---------------------------------------------------------------------------------


def test_storage_defaults() -> None:
    spec = parse_platform(platform({}))
    s = spec.storage
    assert s is not None
    assert s.allow_data_deletion is False
    assert s.kms_key_arn is None
    assert s.dataset_bucket.name is None
    assert s.dataset_bucket.read_prefixes == ["datasets/"]
    assert s.dataset_bucket.write_prefixes == []
    assert s.checkpoint_bucket.read_prefixes == ["checkpoints/"]
    assert s.checkpoint_bucket.write_prefixes == ["checkpoints/"]
    assert s.checkpoint_bucket.transition_after_days == 30
    assert s.checkpoint_bucket.transition_storage_class == "STANDARD_IA"
    assert s.checkpoint_bucket.noncurrent_version_expiration_days == 14
    assert s.access.use_pod_identity is True
    assert s.fsx is None
    assert s.fsx_enabled is False
    assert s.csi.create_addon is True
    assert s.csi.create_storage_class is False
    assert spec.fsx_availability_zone is None


def test_fsx_defaults_for_persistent_2() -> None:
    spec = parse_platform(platform({"fsx": fsx()}))
    f = spec.storage.fsx  # type: ignore[union-attr]
    assert f is not None
    assert f.deployment_type == "PERSISTENT_2"
    assert f.data_compression == "LZ4"
    assert f.lustre_version == "2.15"
    assert f.log_level == "WARN_ERROR"
    assert f.kms_encrypted is True
    assert f.backup_retention_days == 7
    assert f.aggregate_throughput_mbps == 600.0
    assert spec.fsx_availability_zone == "us-east-1a"


def test_scratch_defaults_have_no_kms_and_no_backups() -> None:
    f = FsxSpec.model_validate({"deploymentType": "SCRATCH_2", "storageCapacityGib": 1200})
    assert f.kms_encrypted is False
    assert f.backup_retention_days == 0
    assert f.aggregate_throughput_mbps == 240.0


@pytest.mark.parametrize(
    ("kind", "capacity", "per_unit", "expected"),
    [
        ("PERSISTENT_2", 2400, 250, 600.0),
        ("PERSISTENT_2", 9600, 500, 4800.0),
        ("PERSISTENT_1", 1200, 200, 240.0),
        ("SCRATCH_2", 4800, None, 960.0),
        ("SCRATCH_1", 3600, None, 720.0),
    ],
)
def test_aggregate_throughput(kind: str, capacity: int, per_unit: int | None, expected: float) -> None:
    assert aggregate_throughput_mbps(kind, capacity, per_unit) == expected


@pytest.mark.parametrize(
    ("kind", "capacity", "ok"),
    [
        ("PERSISTENT_2", 1200, True),
        ("PERSISTENT_2", 2400, True),
        ("PERSISTENT_2", 4800, True),
        ("PERSISTENT_2", 3600, False),
        ("SCRATCH_2", 7200, True),
        ("SCRATCH_2", 1300, False),
        ("SCRATCH_1", 3600, True),
        ("SCRATCH_1", 7200, True),
        ("SCRATCH_1", 4800, False),
    ],
)
def test_capacity_increments(kind: str, capacity: int, ok: bool) -> None:
    assert (capacity_problem(kind, capacity) is None) is ok


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ab", "is 2 characters; bucket names are 3 to 63 characters"),
        ("a" * 64, "is 64 characters; bucket names are 3 to 63 characters"),
        ("Data-Bucket", "may use only lowercase letters, digits, '-' and must start and end with a letter or digit"),
        ("data_bucket", "may use only lowercase letters, digits, '-' and must start and end with a letter or digit"),
        ("-data", "may use only lowercase letters, digits, '-' and must start and end with a letter or digit"),
        ("data..set", "must not contain two adjacent periods"),
        ("192.168.5.4", "must not be formatted as an IP address"),
        ("my.data", "must not contain '.' (breaks TLS on virtual-hosted S3 URLs); use '-' instead"),
        ("xn--data", "must not start with 'xn--' (reserved by S3)"),
        ("sthree-data", "must not start with 'sthree-' (reserved by S3)"),
        ("data-s3alias", "must not end with '-s3alias' (reserved by S3)"),
        ("data--ol-s3", "must not end with '--ol-s3' (reserved by S3)"),
    ],
)
def test_bucket_name_problems(name: str, problem: str) -> None:
    assert problem in bucket_name_problems(name)


def test_good_bucket_names_have_no_problems() -> None:
    assert bucket_name_problems("acme-training-data-2026") == []
    assert bucket_name_problems("abc") == []


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_stacks_storage(stack: str) -> None:
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    spec = parse_platform(doc["config"]["gpucloud:platform"])
    expected = {
        "dev": ("SCRATCH_2", "us-west-2a", 240.0, 0, True),
        "staging": ("PERSISTENT_2", "us-east-1a", 150.0, 1, False),
        "prod": ("PERSISTENT_2", "us-east-1a", 4800.0, 2, False),
    }[stack]
    s = spec.storage
    assert s is not None and s.fsx is not None
    got = (
        s.fsx.deployment_type,
        spec.fsx_availability_zone,
        s.fsx.aggregate_throughput_mbps,
        len(s.fsx.data_repository_associations),
        s.allow_data_deletion,
    )
    assert got == expected


def test_prod_fsx_sits_in_the_training_pools_az() -> None:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    spec = parse_platform(doc["config"]["gpucloud:platform"])
    assert spec.pool("train-h100").availability_zones == ["us-east-1a"]
    assert spec.pool("train-h200").availability_zones == ["us-east-1a"]
    assert spec.fsx_availability_zone == "us-east-1a"


# --- bad input: one message per rule, with the field path and the fix -------------------------------------


def test_capacity_off_increment() -> None:
    assert issues_of({"fsx": fsx(storageCapacityGib=3000)}) == {
        f"{S}.fsx.storageCapacityGib": "3000 GiB is not a valid PERSISTENT_2 size: use 1200, 2400 or a multiple "
        "of 2400 (nearest: 2400 or 4800)"
    }


def test_scratch_1_capacity_uses_3600_steps() -> None:
    bad = fsx(deploymentType="SCRATCH_1", perUnitStorageThroughput=None, storageCapacityGib=4800)
    assert issues_of({"fsx": bad}) == {
        f"{S}.fsx.storageCapacityGib": "4800 GiB is not a valid SCRATCH_1 size: use 1200, 2400 or a multiple "
        "of 3600 (nearest: 3600 or 7200)"
    }


def test_capacity_below_minimum() -> None:
    issues = issues_of({"fsx": fsx(storageCapacityGib=600)})
    assert list(issues) == [f"{S}.fsx.storageCapacityGib"]
    assert "greater than or equal to 1200" in issues[f"{S}.fsx.storageCapacityGib"]


def test_throughput_not_offered_by_persistent_2() -> None:
    assert issues_of({"fsx": fsx(perUnitStorageThroughput=200)}) == {
        f"{S}.fsx.perUnitStorageThroughput": "PERSISTENT_2 offers 125, 250, 500, 1000 MB/s per TiB (got 200); pick one"
    }


def test_throughput_missing_on_persistent_1() -> None:
    assert issues_of({"fsx": fsx(deploymentType="PERSISTENT_1", perUnitStorageThroughput=None)}) == {
        f"{S}.fsx.perUnitStorageThroughput": "PERSISTENT_1 offers 50, 100, 200 MB/s per TiB (none given); pick one"
    }


def test_throughput_on_scratch() -> None:
    assert issues_of({"fsx": fsx(deploymentType="SCRATCH_2", perUnitStorageThroughput=250)}) == {
        f"{S}.fsx.perUnitStorageThroughput": "SCRATCH_2 has a fixed baseline (200 MB/s per TiB) and takes no "
        "perUnitStorageThroughput; remove it or use PERSISTENT_2"
    }


def test_kms_on_scratch() -> None:
    assert issues_of(
        {"fsx": fsx(deploymentType="SCRATCH_2", perUnitStorageThroughput=None, enableKmsEncryption=True)}
    ) == {
        f"{S}.fsx.enableKmsEncryption": "SCRATCH_2 cannot use a KMS key (FSx encrypts scratch file systems with "
        "its own keys); remove it or use PERSISTENT_2"
    }


def test_backups_on_scratch() -> None:
    assert issues_of(
        {"fsx": fsx(deploymentType="SCRATCH_2", perUnitStorageThroughput=None, automaticBackupRetentionDays=7)}
    ) == {
        f"{S}.fsx.automaticBackupRetentionDays": "SCRATCH_2 file systems cannot be backed up; remove it or use "
        "PERSISTENT_2"
    }


def test_persistent_2_rejects_lustre_2_10() -> None:
    assert issues_of({"fsx": fsx(lustreVersion="2.10")}) == {
        f"{S}.fsx.lustreVersion": "PERSISTENT_2 needs Lustre 2.12 or 2.15 (FSx rejects 2.10); use 2.15"
    }


def dra(path: str, bucket: str = "dataset", prefix: str = "") -> dict[str, Any]:
    return {"fileSystemPath": path, "bucket": bucket, "prefix": prefix}


def test_more_than_eight_associations() -> None:
    links = [dra(f"/d{i}", prefix=f"p{i}/") for i in range(9)]
    assert issues_of({"fsx": fsx(dataRepositoryAssociations=links)}) == {
        f"{S}.fsx.dataRepositoryAssociations": "FSx allows at most 8 data repository associations per file system "
        "(got 9); link parent directories or prefixes instead"
    }


def test_eight_associations_are_fine() -> None:
    links = [dra(f"/d{i}", prefix=f"p{i}/") for i in range(8)]
    spec = parse_platform(platform({"fsx": fsx(dataRepositoryAssociations=links)}))
    assert len(spec.storage.fsx.data_repository_associations) == 8  # type: ignore[union-attr]


def test_associations_on_scratch_1() -> None:
    assert issues_of(
        {
            "fsx": fsx(
                deploymentType="SCRATCH_1",
                perUnitStorageThroughput=None,
                dataRepositoryAssociations=[dra("/datasets")],
            )
        }
    ) == {
        f"{S}.fsx.dataRepositoryAssociations": "data repository associations need PERSISTENT_2 (SCRATCH_1 cannot "
        "have any); use deploymentType PERSISTENT_2 or remove them"
    }


def test_associations_on_scratch_2_point_to_legacy_link() -> None:
    assert issues_of(
        {
            "fsx": fsx(
                deploymentType="SCRATCH_2",
                perUnitStorageThroughput=None,
                dataRepositoryAssociations=[dra("/datasets")],
            )
        }
    ) == {
        f"{S}.fsx.dataRepositoryAssociations": "data repository associations need PERSISTENT_2 (SCRATCH_2 links S3 "
        "only through the legacy importPath/exportPath, which gpucloud does not manage); use deploymentType "
        "PERSISTENT_2 or remove them"
    }


def test_overlapping_association_paths() -> None:
    links = [dra("/data", prefix="a/"), dra("/data/sub", prefix="b/")]
    assert issues_of({"fsx": fsx(dataRepositoryAssociations=links)}) == {
        f"{S}.fsx.dataRepositoryAssociations[1].fileSystemPath": "'/data/sub' overlaps '/data' "
        "(dataRepositoryAssociations[0]); FSx needs disjoint directories"
    }


def test_overlapping_association_prefixes() -> None:
    links = [dra("/a", prefix="data/"), dra("/b", prefix="data/raw/")]
    assert issues_of({"fsx": fsx(dataRepositoryAssociations=links)}) == {
        f"{S}.fsx.dataRepositoryAssociations[1].prefix": "dataset bucket prefix 'data/raw/' overlaps 'data/' "
        "(dataRepositoryAssociations[0]); FSx needs disjoint S3 paths"
    }


def test_bad_association_path_and_event() -> None:
    issues = issues_of(
        {"fsx": fsx(dataRepositoryAssociations=[{**dra("datasets/"), "importEvents": ["NEW", "UPDATED"]}])}
    )
    assert issues[f"{S}.fsx.dataRepositoryAssociations[0].fileSystemPath"] == (
        "'datasets/' is not a file-system directory: start with '/', no trailing '/' or '//', e.g. /datasets"
    )
    assert "'NEW', 'CHANGED' or 'DELETED'" in issues[f"{S}.fsx.dataRepositoryAssociations[0].importEvents[1]"]


def test_fsx_az_differs_from_the_pool_it_feeds() -> None:
    assert issues_of({"fsx": fsx(availabilityZone="us-east-1b")}) == {
        f"{S}.fsx.availabilityZone": "'us-east-1b' differs from the AZ of pool 'train' it feeds (us-east-1a); FSx "
        "serves one AZ and cross-AZ reads are slower and billed: set it to us-east-1a"
    }


def test_fsx_az_outside_the_platform() -> None:
    issues = issues_of({"fsx": fsx(feedsPool=None, availabilityZone="us-east-1d")})
    assert issues == {
        f"{S}.fsx.availabilityZone": "'us-east-1d' is not one of the platform's AZs ['us-east-1a', 'us-east-1b']"
    }


def test_fsx_needs_an_az_or_a_pool() -> None:
    assert issues_of({"fsx": fsx(feedsPool=None)}) == {
        f"{S}.fsx": "set availabilityZone (the AZ of the GPU pool it feeds) or feedsPool (that pool's name)"
    }


def test_fsx_feeds_unknown_pool() -> None:
    assert issues_of({"fsx": fsx(feedsPool="trian")}) == {
        f"{S}.fsx.feedsPool": "no node pool named 'trian'; pools are ['infer', 'train']"
    }


def test_fsx_feeding_a_multi_az_pool_must_name_the_az() -> None:
    assert issues_of({"fsx": fsx(feedsPool="infer")}) == {
        f"{S}.fsx.availabilityZone": "pool 'infer' spans ['us-east-1a', 'us-east-1b']; FSx lives in one AZ: name "
        "it (one of those), or pin the pool to one AZ"
    }


def test_fsx_feeding_a_multi_az_pool_with_an_az() -> None:
    spec = parse_platform(platform({"fsx": fsx(feedsPool="infer", availabilityZone="us-east-1b")}))
    assert spec.fsx_availability_zone == "us-east-1b"


def test_disabled_fsx_skips_the_az_rules() -> None:
    spec = parse_platform(platform({"fsx": fsx(enabled=False, feedsPool=None)}))
    assert spec.storage is not None and spec.storage.fsx_enabled is False


def test_bucket_name_not_dns_compliant() -> None:
    assert issues_of({"datasetBucket": {"name": "Training.Data"}}) == {
        f"{S}.datasetBucket.name": "'Training.Data' is not a DNS-compliant bucket name: may use only lowercase "
        "letters, digits, '-' and must start and end with a letter or digit. Use 3-63 lowercase letters, digits "
        "and '-', or omit name to generate one"
    }


def test_bucket_name_reserved_suffix() -> None:
    assert issues_of({"checkpointBucket": {"name": "ckpt-s3alias"}}) == {
        f"{S}.checkpointBucket.name": "'ckpt-s3alias' is not a DNS-compliant bucket name: must not end with "
        "'-s3alias' (reserved by S3). Use 3-63 lowercase letters, digits and '-', or omit name to generate one"
    }


def test_same_name_for_both_buckets() -> None:
    assert issues_of({"datasetBucket": {"name": "acme-ml"}, "checkpointBucket": {"name": "acme-ml"}}) == {
        f"{S}.checkpointBucket.name": "'acme-ml' is also the dataset bucket's name; give each bucket its own"
    }


def test_transition_to_ia_before_30_days() -> None:
    assert issues_of({"checkpointBucket": {"transitionAfterDays": 7}}) == {
        f"{S}.checkpointBucket.transitionAfterDays": "S3 moves objects to STANDARD_IA only after 30 days or more "
        "(got 7); use 30+ or INTELLIGENT_TIERING / GLACIER_IR"
    }


def test_transition_to_glacier_ir_early_is_fine() -> None:
    spec = parse_platform(
        platform({"checkpointBucket": {"transitionAfterDays": 7, "transitionStorageClass": "GLACIER_IR"}})
    )
    assert spec.storage.checkpoint_bucket.transition_after_days == 7  # type: ignore[union-attr]


def test_bad_prefix() -> None:
    assert issues_of({"datasetBucket": {"readPrefixes": ["/datasets/*"]}}) == {
        f"{S}.datasetBucket.readPrefixes": "not S3 key prefixes: ['/datasets/*']; write folders like 'datasets/' "
        "or 'runs/llama/' (no leading '/', no '*', ending in '/'), or '' for the whole bucket"
    }


def test_service_account_in_both_roles() -> None:
    assert issues_of({"access": {"readerServiceAccounts": ["trainer"], "writerServiceAccounts": ["trainer"]}}) == {
        f"{S}.access.writerServiceAccounts": "['trainer'] are also readers; a service account takes one role "
        "(writers can read too): list it under writerServiceAccounts only"
    }


def test_storage_class_needs_fsx() -> None:
    assert issues_of({"csi": {"createStorageClass": True}}) == {
        f"{S}.csi.createStorageClass": "the StorageClass provisions into the file system's AZ, subnet and security "
        "group; add an fsx section or set createStorageClass: false"
    }


def test_bad_kms_key_and_addon_version() -> None:
    issues = issues_of({"kmsKeyArn": "alias/storage", "csi": {"addonVersion": "1.6"}})
    assert issues == {
        f"{S}.kmsKeyArn": "'alias/storage' is not a KMS key ARN; use arn:aws:kms:<region>:<account>:key/<key-id> "
        "(not an alias)",
        f"{S}.csi.addonVersion": "'1.6' is not an EKS add-on version; versions look like v1.6.0-eksbuild.1",
    }


def test_unknown_deployment_type_lists_the_enum() -> None:
    issues = issues_of({"fsx": fsx(deploymentType="PERSISTENT_3")})
    assert "'SCRATCH_1', 'SCRATCH_2', 'PERSISTENT_1' or 'PERSISTENT_2'" in issues[f"{S}.fsx.deploymentType"]


def test_every_problem_reported_at_once() -> None:
    issues = issues_of(
        {
            "fsx": fsx(storageCapacityGib=3000, perUnitStorageThroughput=200, availabilityZone="us-east-1b"),
            "datasetBucket": {"name": "xn--data"},
        }
    )
    assert set(issues) == {
        f"{S}.fsx.storageCapacityGib",
        f"{S}.fsx.perUnitStorageThroughput",
        f"{S}.datasetBucket.name",
    }


def test_model_is_frozen_and_forbids_unknown_keys() -> None:
    issues = issues_of({"fsx": fsx(throughput=250)})
    assert list(issues) == [f"{S}.fsx.throughput"]
    assert issues[f"{S}.fsx.throughput"].startswith("unknown key 'throughput'; allowed keys: ")
    spec = StorageSpec()
    with pytest.raises(Exception, match="frozen"):
        spec.allow_data_deletion = True  # type: ignore[misc]
    assert copy.deepcopy(spec) == spec


def test_access_logs_defaults_and_bad_bucket() -> None:
    spec = parse_platform(platform({}))
    assert spec.storage is not None
    logs = spec.storage.access_logs
    assert (logs.enabled, logs.bucket, logs.expire_after_days) == (True, None, 365)
    assert issues_of({"accessLogs": {"bucket": "Logs_Bucket"}}) == {
        f"{S}.accessLogs.bucket": "'Logs_Bucket' is not a DNS-compliant bucket name: may use only lowercase "
        "letters, digits, '-' and must start and end with a letter or digit"
    }
