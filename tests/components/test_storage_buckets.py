"""DataBuckets under mocks: every protection on both buckets, lifecycle rules, the key, and prefix-scoped roles."""

from __future__ import annotations

from typing import Any

import pytest
from storage_testkit import ACCOUNT, BUCKET, KEY, KEY_ARN, OIDC_ARN, REGION, TAGS, doc, handle, names, run

from gpucloud.components.storage import DataBuckets, DataBucketsConfig
from gpucloud.components.storage._common import generated_bucket_name
from gpucloud.plan import Plan
from gpucloud.spec.storage import AccessLogsSpec, CheckpointBucketSpec, StorageAccessSpec, bucket_name_problems

DATASETS = f"gpucloud-test-datasets-{ACCOUNT}-{REGION}"
CHECKPOINTS = f"gpucloud-test-checkpoints-{ACCOUNT}-{REGION}"
N = "data"


def plan_of(cluster: bool = True, **overrides: Any) -> Plan:
    fields: dict[str, Any] = {
        "region": REGION,
        "tags": TAGS,
        "name_prefix": "gpucloud-test",
        "kms_key_arn": KEY_ARN,
        "access": StorageAccessSpec(readerServiceAccounts=["evaluator"], writerServiceAccounts=["trainer"]),
    }
    fields.update(overrides)
    config = DataBucketsConfig(**fields)
    return run(lambda: DataBuckets(N, config, handle() if cluster else None))


@pytest.fixture(scope="module")
def default_plan() -> Plan:
    return plan_of()


def test_resources_created(default_plan: Plan) -> None:
    got = {(r.type, r.name) for r in default_plan if r.custom}
    per_bucket = {
        ("aws:s3/bucket:Bucket", ""),
        ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "-public-access"),
        ("aws:s3/bucketOwnershipControls:BucketOwnershipControls", "-ownership"),
        ("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "-encryption"),
        ("aws:s3/bucketVersioning:BucketVersioning", "-versioning"),
        ("aws:s3/bucketPolicy:BucketPolicy", "-policy"),
        ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "-lifecycle"),
    }
    expected = {
        (t, f"{N}-{role}{suffix}")
        for role in ("datasets", "checkpoints")
        for t, suffix in per_bucket | {("aws:s3/bucketLogging:BucketLogging", "-logging")}
    }
    expected |= {(t, f"{N}-access-logs{suffix}") for t, suffix in per_bucket if suffix != "-versioning"}
    expected |= {
        ("aws:iam/role:Role", f"{N}-reader"),
        ("aws:iam/rolePolicy:RolePolicy", f"{N}-reader-s3"),
        ("aws:eks/podIdentityAssociation:PodIdentityAssociation", f"{N}-reader-evaluator"),
        ("aws:iam/role:Role", f"{N}-writer"),
        ("aws:iam/rolePolicy:RolePolicy", f"{N}-writer-s3"),
        ("aws:eks/podIdentityAssociation:PodIdentityAssociation", f"{N}-writer-trainer"),
    }
    assert got == expected
    component = default_plan.find("gpucloud:storage:DataBuckets", N)
    assert {r.parent for r in default_plan if r.custom} == {component.urn}


def test_generated_bucket_names(default_plan: Plan) -> None:
    assert default_plan.find(BUCKET, f"{N}-datasets").inputs["bucket"] == DATASETS
    assert default_plan.find(BUCKET, f"{N}-checkpoints").inputs["bucket"] == CHECKPOINTS


def test_explicit_bucket_names() -> None:
    from gpucloud.spec.storage import DatasetBucketSpec

    plan = plan_of(
        dataset=DatasetBucketSpec(name="acme-datasets"), checkpoint=CheckpointBucketSpec(name="acme-checkpoints")
    )
    assert plan.find(BUCKET, f"{N}-datasets").inputs["bucket"] == "acme-datasets"
    assert plan.find(BUCKET, f"{N}-checkpoints").inputs["bucket"] == "acme-checkpoints"
    reader = doc(plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-reader-s3"))
    assert reader["Statement"][2]["Resource"] == [
        "arn:aws:s3:::acme-checkpoints/checkpoints/*",
        "arn:aws:s3:::acme-datasets/datasets/*",
    ]


def test_generated_name_is_shortened_to_63_characters() -> None:
    long_prefix = "a-very-long-platform-name-for-tests-x"
    name = generated_bucket_name(long_prefix, "checkpoints", ACCOUNT, "ap-southeast-2")
    assert len(name) == 63
    assert name.endswith(f"-checkpoints-{ACCOUNT}-ap-southeast-2")
    assert bucket_name_problems(name) == []
    assert (
        generated_bucket_name("gpucloud-prod", "datasets", ACCOUNT, REGION)
        == f"gpucloud-prod-datasets-{ACCOUNT}-{REGION}"
    )


@pytest.mark.parametrize("role", ["datasets", "checkpoints"])
def test_public_access_blocked_and_acls_disabled(default_plan: Plan, role: str) -> None:
    pab = default_plan.find("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", f"{N}-{role}-public-access")
    assert {
        k: pab.inputs[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    } == {
        "blockPublicAcls": True,
        "blockPublicPolicy": True,
        "ignorePublicAcls": True,
        "restrictPublicBuckets": True,
    }
    own = default_plan.find("aws:s3/bucketOwnershipControls:BucketOwnershipControls", f"{N}-{role}-ownership")
    assert own.inputs["rule"] == {"objectOwnership": "BucketOwnerEnforced"}


@pytest.mark.parametrize("role", ["datasets", "checkpoints"])
def test_sse_kms_with_bucket_key(default_plan: Plan, role: str) -> None:
    sse = default_plan.find(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        f"{N}-{role}-encryption",
    )
    assert sse.inputs["rules"] == [
        {
            "applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY_ARN},
            "bucketKeyEnabled": True,
        }
    ]


@pytest.mark.parametrize("role", ["datasets", "checkpoints"])
def test_versioning_enabled(default_plan: Plan, role: str) -> None:
    v = default_plan.find("aws:s3/bucketVersioning:BucketVersioning", f"{N}-{role}-versioning")
    assert v.inputs["versioningConfiguration"] == {"status": "Enabled"}


@pytest.mark.parametrize(("role", "bucket"), [("datasets", DATASETS), ("checkpoints", CHECKPOINTS)])
def test_tls_only_policy(default_plan: Plan, role: str, bucket: str) -> None:
    policy = doc(default_plan.find("aws:s3/bucketPolicy:BucketPolicy", f"{N}-{role}-policy"))
    resources = [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]
    assert policy == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": resources,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
            {
                "Sid": "DenyOutdatedTls",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": resources,
                "Condition": {"NumericLessThan": {"s3:TlsVersion": "1.2"}},
            },
        ],
    }


def _rule_ids(plan: Plan, role: str) -> dict[str, dict[str, Any]]:
    lc = plan.find("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{N}-{role}-lifecycle")
    return {r["id"]: r for r in lc.inputs["rules"]}


def test_checkpoint_lifecycle(default_plan: Plan) -> None:
    rules = _rule_ids(default_plan, "checkpoints")
    assert rules == {
        "abort-incomplete-multipart-uploads": {
            "id": "abort-incomplete-multipart-uploads",
            "status": "Enabled",
            "filter": {"prefix": ""},
            "abortIncompleteMultipartUpload": {"daysAfterInitiation": 3.0},
        },
        "expire-noncurrent-versions": {
            "id": "expire-noncurrent-versions",
            "status": "Enabled",
            "filter": {"prefix": ""},
            "noncurrentVersionExpiration": {"noncurrentDays": 14.0},
            "expiration": {"expiredObjectDeleteMarker": True},
        },
        "transition-old-checkpoints": {
            "id": "transition-old-checkpoints",
            "status": "Enabled",
            "filter": {"prefix": "checkpoints/"},
            "transitions": [{"days": 30.0, "storageClass": "STANDARD_IA"}],
        },
    }


def test_dataset_lifecycle_has_no_transition(default_plan: Plan) -> None:
    rules = _rule_ids(default_plan, "datasets")
    assert set(rules) == {"abort-incomplete-multipart-uploads", "expire-noncurrent-versions"}
    assert rules["abort-incomplete-multipart-uploads"]["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7.0}
    assert rules["expire-noncurrent-versions"]["noncurrentVersionExpiration"] == {"noncurrentDays": 30.0}


def test_checkpoint_lifecycle_settings_follow_the_spec() -> None:
    spec = CheckpointBucketSpec(
        transitionAfterDays=None, noncurrentVersionExpirationDays=5, noncurrentVersionsRetained=3
    )
    rules = _rule_ids(plan_of(checkpoint=spec), "checkpoints")
    assert set(rules) == {"abort-incomplete-multipart-uploads", "expire-noncurrent-versions"}
    assert rules["expire-noncurrent-versions"]["noncurrentVersionExpiration"] == {
        "noncurrentDays": 5.0,
        "newerNoncurrentVersions": 3.0,
    }
    spec = CheckpointBucketSpec(transitionAfterDays=7, transitionStorageClass="GLACIER_IR", prefix="runs/")
    rule = _rule_ids(plan_of(checkpoint=spec), "checkpoints")["transition-old-checkpoints"]
    assert rule["filter"] == {"prefix": "runs/"}
    assert rule["transitions"] == [{"days": 7.0, "storageClass": "GLACIER_IR"}]


def test_lifecycle_waits_for_versioning(default_plan: Plan) -> None:
    lc = default_plan.find(
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{N}-checkpoints-lifecycle"
    )
    versioning = default_plan.find("aws:s3/bucketVersioning:BucketVersioning", f"{N}-checkpoints-versioning")
    assert versioning.urn in lc.dependencies


def test_data_is_retained_by_default(default_plan: Plan) -> None:
    bucket_scoped = [r for r in default_plan if r.type.startswith("aws:s3/")]
    assert len(bucket_scoped) == 22
    assert all(r.retain_on_delete for r in bucket_scoped)
    assert not any(r.protect for r in default_plan)
    assert {r.inputs["forceDestroy"] for r in default_plan.of_type(BUCKET)} == {False}


def test_prod_protects_buckets_and_key() -> None:
    plan = plan_of(protect=True, kms_key_arn=None)
    assert {r.name for r in plan if r.protect} == {
        f"{N}-datasets",
        f"{N}-checkpoints",
        f"{N}-access-logs",
        f"{N}-key",
    }
    assert all(r.retain_on_delete for r in plan.of_type(BUCKET, KEY))


def test_allow_data_deletion_lifts_retain_and_protect() -> None:
    plan = plan_of(protect=True, allow_data_deletion=True, kms_key_arn=None)
    assert not any(r.retain_on_delete or r.protect for r in plan)
    assert {r.inputs["forceDestroy"] for r in plan.of_type(BUCKET)} == {True}


def test_created_key() -> None:
    plan = plan_of(kms_key_arn=None)
    key = plan.find(KEY, f"{N}-key")
    assert key.inputs["enableKeyRotation"] is True
    assert key.inputs["deletionWindowInDays"] == 30.0
    assert key.retain_on_delete is True
    policy = doc(key)
    principals = [s["Principal"] for s in policy["Statement"]]
    assert principals == [{"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, {"Service": "logs.us-east-1.amazonaws.com"}]
    assert plan.find("aws:kms/alias:Alias", f"{N}-key-alias").inputs["name"] == "alias/gpucloud-test-storage"
    sse = plan.find(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        f"{N}-datasets-encryption",
    )
    assert key.urn in sse.dependencies


def test_given_key_creates_none(default_plan: Plan) -> None:
    assert names(default_plan, KEY) == set()
    assert names(default_plan, "aws:kms/alias:Alias") == set()


def test_pod_identity_trust(default_plan: Plan) -> None:
    trust = doc(default_plan.find("aws:iam/role:Role", f"{N}-writer"), "assumeRolePolicy")
    assert trust["Statement"] == [
        {
            "Sid": "EksPodIdentity",
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
        }
    ]
    assoc = default_plan.find("aws:eks/podIdentityAssociation:PodIdentityAssociation", f"{N}-writer-trainer")
    assert {k: assoc.inputs[k] for k in ("clusterName", "namespace", "serviceAccount")} == {
        "clusterName": "gpucloud-test",
        "namespace": "training",
        "serviceAccount": "trainer",
    }


def test_irsa_trust_and_no_associations() -> None:
    access = StorageAccessSpec(usePodIdentity=False, namespace="ml", writerServiceAccounts=["trainer", "finetuner"])
    plan = plan_of(access=access)
    assert names(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation") == set()
    assert names(plan, "aws:iam/role:Role") == {f"{N}-writer"}
    trust = doc(plan.find("aws:iam/role:Role", f"{N}-writer"), "assumeRolePolicy")
    issuer = "oidc.eks.us-east-1.amazonaws.com/id/ABCDEF0123456789"
    assert trust["Statement"] == [
        {
            "Sid": "IrsaServiceAccounts",
            "Effect": "Allow",
            "Principal": {"Federated": OIDC_ARN},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:sub": ["system:serviceaccount:ml:trainer", "system:serviceaccount:ml:finetuner"],
                    f"{issuer}:aud": "sts.amazonaws.com",
                }
            },
        }
    ]


def test_reader_policy_is_prefix_scoped(default_plan: Plan) -> None:
    policy = doc(default_plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-reader-s3"))
    assert policy["Statement"] == [
        {
            "Sid": "ListPrefixes0",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": f"arn:aws:s3:::{CHECKPOINTS}",
            "Condition": {"StringLike": {"s3:prefix": ["checkpoints/", "checkpoints/*"]}},
        },
        {
            "Sid": "ListPrefixes1",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": f"arn:aws:s3:::{DATASETS}",
            "Condition": {"StringLike": {"s3:prefix": ["datasets/", "datasets/*"]}},
        },
        {
            "Sid": "ReadObjects",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{CHECKPOINTS}/checkpoints/*", f"arn:aws:s3:::{DATASETS}/datasets/*"],
        },
        {
            "Sid": "UseBucketKeyThroughS3",
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": KEY_ARN,
            "Condition": {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}},
        },
    ]


def test_writer_policy_adds_writes_on_write_prefixes_only(default_plan: Plan) -> None:
    policy = doc(default_plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-writer-s3"))
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert set(by_sid) == {"ListPrefixes0", "ListPrefixes1", "ReadObjects", "WriteObjects", "UseBucketKeyThroughS3"}
    assert by_sid["WriteObjects"] == {
        "Sid": "WriteObjects",
        "Effect": "Allow",
        "Action": [
            "s3:AbortMultipartUpload",
            "s3:DeleteObject",
            "s3:GetObject",
            "s3:ListMultipartUploadParts",
            "s3:PutObject",
        ],
        "Resource": [f"arn:aws:s3:::{CHECKPOINTS}/checkpoints/*"],
    }
    assert by_sid["UseBucketKeyThroughS3"]["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]


@pytest.mark.parametrize("role", ["reader", "writer"])
def test_role_policies_never_wildcard(default_plan: Plan, role: str) -> None:
    for statement in doc(default_plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-{role}-s3"))["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        assert "s3:*" not in actions and "*" not in actions
        assert "*" not in resources


def test_roles_follow_listed_service_accounts() -> None:
    plan = plan_of(access=StorageAccessSpec(readerServiceAccounts=["a", "b"]))
    assert names(plan, "aws:iam/role:Role") == {f"{N}-reader"}
    assert names(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation") == {f"{N}-reader-a", f"{N}-reader-b"}
    plan = plan_of(access=StorageAccessSpec())
    assert names(plan, "aws:iam/role:Role") == set()


def test_no_cluster_means_buckets_only() -> None:
    plan = plan_of(cluster=False, access_logs=AccessLogsSpec(enabled=False))
    assert names(plan, "aws:iam/role:Role") == set()
    assert names(plan, BUCKET) == {f"{N}-datasets", f"{N}-checkpoints"}


LOGS = f"gpucloud-test-access-logs-{ACCOUNT}-{REGION}"


def test_access_logging_to_a_created_log_bucket(default_plan: Plan) -> None:
    assert default_plan.find(BUCKET, f"{N}-access-logs").inputs["bucket"] == LOGS
    for role in ("datasets", "checkpoints"):
        logging = default_plan.find("aws:s3/bucketLogging:BucketLogging", f"{N}-{role}-logging")
        assert (logging.inputs["targetBucket"], logging.inputs["targetPrefix"]) == (LOGS, f"{role}/")
    sse = default_plan.find(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        f"{N}-access-logs-encryption",
    )
    assert sse.inputs["rules"] == [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]
    policy = doc(default_plan.find("aws:s3/bucketPolicy:BucketPolicy", f"{N}-access-logs-policy"))
    assert [s["Sid"] for s in policy["Statement"]] == [
        "DenyInsecureTransport",
        "DenyOutdatedTls",
        "S3ServerAccessLogDelivery",
    ]
    assert policy["Statement"][2] == {
        "Sid": "S3ServerAccessLogDelivery",
        "Effect": "Allow",
        "Principal": {"Service": "logging.s3.amazonaws.com"},
        "Action": "s3:PutObject",
        "Resource": f"arn:aws:s3:::{LOGS}/*",
        "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
    }
    lc = default_plan.find(
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{N}-access-logs-lifecycle"
    )
    assert lc.inputs["rules"][0]["expiration"] == {"days": 365.0}


def test_access_logging_to_a_given_bucket() -> None:
    plan = plan_of(access_logs=AccessLogsSpec(bucket="org-s3-access-logs"))
    assert names(plan, BUCKET) == {f"{N}-datasets", f"{N}-checkpoints"}
    targets = {r.inputs["targetBucket"] for r in plan.of_type("aws:s3/bucketLogging:BucketLogging")}
    assert targets == {"org-s3-access-logs"}


def test_access_logging_off() -> None:
    plan = plan_of(access_logs=AccessLogsSpec(enabled=False))
    assert names(plan, "aws:s3/bucketLogging:BucketLogging") == set()
    assert names(plan, BUCKET) == {f"{N}-datasets", f"{N}-checkpoints"}
