"""Data at rest, logs and inline S3 settings: passing and failing fixtures with the exact resources flagged and the
messages that name the field and the fix."""

import json

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages

EFS = "aws:efs/fileSystem:FileSystem"
RDS = "aws:rds/instance:Instance"
RDS_CLUSTER = "aws:rds/cluster:Cluster"
KMS = "aws:kms/key:Key"
TRAIL = "aws:cloudtrail/trail:Trail"
EBS_DEFAULT = "aws:ebs/encryptionByDefault:EncryptionByDefault"
VPC = "aws:ec2/vpc:Vpc"
FLOW = "aws:ec2/flowLog:FlowLog"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
ONTAP = "aws:fsx/ontapFileSystem:OntapFileSystem"
OPENZFS = "aws:fsx/openZfsFileSystem:OpenZfsFileSystem"
WINDOWS = "aws:fsx/windowsFileSystem:WindowsFileSystem"
BUCKET = "aws:s3/bucket:Bucket"
BUCKET_V2 = "aws:s3/bucketV2:BucketV2"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/abc"


def test_efs_encrypted_with_cmk():
    fss = [
        Res(EFS, "cmk", {"encrypted": True, "kmsKeyId": UNKNOWN}),
        Res(EFS, "aws-key", {"encrypted": True}),
        Res(EFS, "plain", {}),
        Res(EFS, "string-false", {"encrypted": "false", "kmsKeyId": KEY_ARN}),
    ]
    assert flagged("efs-encrypted-cmk", fss) == {"aws-key", "plain", "string-false"}
    assert flagged("efs-encrypted-cmk", fss, {"requireKmsKey": False}) == {"plain", "string-false"}
    assert resource_messages("efs-encrypted-cmk", fss[2]) == [
        "plain: encrypted is unset: the file system is stored unencrypted. Fix: set encrypted=True and kms_key_id "
        "to the platform's KMS key."
    ]
    assert resource_messages("efs-encrypted-cmk", fss[3])[0].startswith("string-false: encrypted is 'false':")
    assert resource_messages("efs-encrypted-cmk", fss[1]) == [
        "aws-key: kmsKeyId is not set: the file system uses the AWS-managed key. Fix: set kms_key_id."
    ]
    with pytest.raises(UnknownValueError):
        resource_messages("efs-encrypted-cmk", Res(EFS, "u", {"encrypted": UNKNOWN}))


def test_rds_instances_and_clusters_encrypted_with_cmk():
    dbs = [
        Res(RDS, "cmk", {"storageEncrypted": True, "kmsKeyId": KEY_ARN}),
        Res(RDS, "aws-key", {"storageEncrypted": True}),
        Res(RDS, "plain", {"engine": "postgres"}),
        Res(RDS, "replica", {"replicateSourceDb": "db-1", "kmsKeyId": KEY_ARN}),
        Res(RDS, "replica-no-key", {"replicateSourceDb": "db-1"}),
        Res(RDS_CLUSTER, "aurora-plain", {"engine": "aurora-postgresql"}),
        Res(RDS_CLUSTER, "aurora-cmk", {"storageEncrypted": True, "kmsKeyId": UNKNOWN}),
        Res(RDS_CLUSTER, "cluster-replica", {"replicationSourceIdentifier": "arn:x", "kmsKeyId": KEY_ARN}),
    ]
    assert flagged("rds-encrypted-cmk", dbs) == {"aws-key", "plain", "replica-no-key", "aurora-plain"}
    assert flagged("rds-encrypted-cmk", dbs, {"requireKmsKey": False}) == {"plain", "aurora-plain"}
    assert resource_messages("rds-encrypted-cmk", dbs[2]) == [
        "plain: storageEncrypted is unset: the database storage, its backups and snapshots are unencrypted. "
        "Fix: set storage_encrypted=True and kms_key_id."
    ]
    assert resource_messages("rds-encrypted-cmk", dbs[1]) == [
        "aws-key: kmsKeyId is not set: storage uses the AWS-managed aws/rds key. Fix: set kms_key_id."
    ]
    false = Res(RDS, "false", {"storageEncrypted": False, "kmsKeyId": KEY_ARN})
    assert resource_messages("rds-encrypted-cmk", false)[0].startswith("false: storageEncrypted is False:")


def test_kms_rotation_on_symmetric_keys_only():
    keys = [
        Res(KMS, "rotating", {"enableKeyRotation": True}),
        Res(KMS, "off", {}),
        Res(KMS, "string-true", {"enableKeyRotation": "true"}),
        Res(KMS, "signing", {"customerMasterKeySpec": "RSA_2048", "keyUsage": "SIGN_VERIFY"}),
        Res(KMS, "hmac", {"customerMasterKeySpec": "HMAC_256", "keyUsage": "GENERATE_VERIFY_MAC"}),
        Res(KMS, "explicit-symmetric", {"customerMasterKeySpec": "SYMMETRIC_DEFAULT", "keyUsage": "ENCRYPT_DECRYPT"}),
        Res(KMS, "slow", {"enableKeyRotation": True, "rotationPeriodInDays": 730}),
        Res(KMS, "at-limit", {"enableKeyRotation": True, "rotationPeriodInDays": 365}),
    ]
    assert flagged("kms-key-rotation", keys) == {"off", "explicit-symmetric", "slow"}
    assert flagged("kms-key-rotation", keys, {"maxRotationPeriodDays": 730}) == {"off", "explicit-symmetric"}
    assert resource_messages("kms-key-rotation", keys[6]) == [
        "slow: rotationPeriodInDays 730 exceeds 365. Fix: set rotation_period_in_days <= 365."
    ]
    assert resource_messages("kms-key-rotation", keys[1])[0].startswith("off: enableKeyRotation is not true")
    # An asymmetric spec with the default usage is still not rotatable.
    assert flagged("kms-key-rotation", [Res(KMS, "ecc", {"customerMasterKeySpec": "ECC_NIST_P256"})]) == set()
    assert flagged("kms-key-rotation", [Res(KMS, "mac", {"keyUsage": "GENERATE_VERIFY_MAC"})]) == set()


def test_cloudtrail_validation_kms_multi_region():
    good = {"enableLogFileValidation": True, "kmsKeyId": UNKNOWN, "isMultiRegionTrail": True}
    trails = [
        Res(TRAIL, "good", good),
        Res(TRAIL, "bare", {"s3BucketName": "logs"}),
        Res(TRAIL, "no-validation", {**good, "enableLogFileValidation": False}),
        Res(TRAIL, "no-kms", {k: v for k, v in good.items() if k != "kmsKeyId"}),
        Res(TRAIL, "one-region", {**good, "isMultiRegionTrail": False}),
    ]
    assert flagged("cloudtrail-hardened", trails) == {"bare", "no-validation", "no-kms", "one-region"}
    relaxed = {"requireKmsKey": False, "requireMultiRegion": False}
    assert flagged("cloudtrail-hardened", trails, relaxed) == {"bare", "no-validation"}
    assert resource_messages("cloudtrail-hardened", trails[1]) == [
        "bare: enableLogFileValidation is not true: tampering with the logs cannot be detected. Fix: set "
        "enable_log_file_validation=True.",
        "bare: kmsKeyId is not set: logs are encrypted with SSE-S3 only. Fix: set kms_key_id to a KMS key ARN.",
        "bare: isMultiRegionTrail is not true: API activity in other regions is not recorded. Fix: set "
        "is_multi_region_trail=True.",
    ]


def test_ebs_encryption_by_default_not_disabled():
    rs = [
        Res(EBS_DEFAULT, "on", {"enabled": True}),
        Res(EBS_DEFAULT, "implicit", {}),
        Res(EBS_DEFAULT, "off", {"enabled": False}),
        Res(EBS_DEFAULT, "off-string", {"enabled": "false"}),
    ]
    assert flagged("ebs-encryption-by-default", rs) == {"off", "off-string"}
    assert resource_messages("ebs-encryption-by-default", rs[2])[0].startswith("off: enabled is false:")


def test_fsx_every_type_needs_a_cmk():
    rs = [
        Res(LUSTRE, "scratch", {}),
        Res(LUSTRE, "scratch2", {"deploymentType": "SCRATCH_2"}),
        Res(LUSTRE, "persistent", {"deploymentType": "PERSISTENT_2"}),
        Res(LUSTRE, "persistent-cmk", {"deploymentType": "PERSISTENT_1", "kmsKeyId": UNKNOWN}),
        Res(ONTAP, "ontap", {"deploymentType": "MULTI_AZ_1"}),
        Res(ONTAP, "ontap-cmk", {"kmsKeyId": KEY_ARN}),
        Res(OPENZFS, "zfs", {"deploymentType": "SINGLE_AZ_1"}),
        Res(WINDOWS, "win", {}),
        Res(WINDOWS, "win-cmk", {"kmsKeyId": KEY_ARN}),
    ]
    assert flagged("fsx-persistent-cmk", rs) == {"persistent", "ontap", "zfs", "win"}
    assert resource_messages("fsx-persistent-cmk", rs[4]) == [
        "ontap: OntapFileSystem without kmsKeyId: data at rest uses the AWS-managed key. Fix: set kms_key_id to "
        "the platform's KMS key."
    ]
    assert resource_messages("fsx-persistent-cmk", rs[2])[0].startswith("persistent: deploymentType PERSISTENT_2 ")


def test_vpc_flow_logs_matched_by_dependency_not_id():
    resources = [
        Res(VPC, "logged", {"cidrBlock": "10.0.0.0/16"}),
        Res(VPC, "silent", {"cidrBlock": "10.1.0.0/16"}),
        Res(VPC, "subnet-only", {"cidrBlock": "10.2.0.0/16"}),
        Res(LOG_GROUP, "lg", {}),
        Res(FLOW, "fl", {"vpcId": UNKNOWN, "trafficType": "ALL"}, deps={"vpcId": ["logged"]}),
        # A subnet-level log does not cover the VPC, even though it depends on it.
        Res(FLOW, "subnet-fl", {"subnetId": UNKNOWN}, deps={"subnetId": ["subnet-only"]}),
        # A literal VPC ID names a VPC created elsewhere.
        Res(FLOW, "other-vpc", {"vpcId": "vpc-0123456789abcdef0"}),
    ]
    assert stack_flagged("vpc-flow-logs", resources) == {"silent", "subnet-only"}
    assert stack_messages("vpc-flow-logs", resources[:2])[0] == (
        "logged",
        "logged: has no aws.ec2.FlowLog: network traffic to and from the GPU fleet is not recorded. Fix: add "
        "aws.ec2.FlowLog(vpc_id=vpc.id, traffic_type='ALL', log_destination=...).",
    )
    assert stack_flagged("vpc-flow-logs", [Res(FLOW, "orphan", {"vpcId": "vpc-1"})]) == set()


def test_vpc_flow_logs_undecided_only_when_a_computed_vpc_id_cannot_be_placed():
    placed = [
        Res(VPC, "a", {}),
        Res(LOG_GROUP, "lg", {}),
        Res(FLOW, "fl-a", {"vpcId": UNKNOWN}, deps={"vpcId": ["a"]}),
        Res(FLOW, "fl-x", {"vpcId": UNKNOWN}, deps={"vpcId": ["lg"]}),
    ]
    # Every VPC is covered: the unplaceable log changes nothing.
    assert stack_flagged("vpc-flow-logs", placed) == set()
    with pytest.raises(UnknownValueError) as exc:
        stack_messages("vpc-flow-logs", [*placed, Res(VPC, "b", {})])
    assert exc.value.message.endswith(
        "flow logs ['fl-x'] take vpcId from a computed value not linked to a VPC, so whether VPCs ['b'] have flow "
        "logs cannot be decided at preview"
    )
    # A computed vpcId with no dependency at all (a stack reference) is unplaceable too.
    with pytest.raises(UnknownValueError):
        stack_messages("vpc-flow-logs", [Res(VPC, "b", {}), Res(FLOW, "ref", {"vpcId": UNKNOWN})])


SSE_KMS_RULE = {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY_ARN}}
TLS_DENY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": ["arn:aws:s3:::b", "arn:aws:s3:::b/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ],
}


def test_s3_inline_encryption_policy_and_versioning_count():
    inline = Res(
        BUCKET,
        "inline",
        {
            "bucket": "b",
            "serverSideEncryptionConfiguration": {"rule": {**SSE_KMS_RULE, "bucketKeyEnabled": True}},
            "policy": json.dumps(TLS_DENY),
            "versioning": {"enabled": True},
        },
    )
    inline_v2 = Res(
        BUCKET_V2,
        "inline-v2-checkpoints",
        {
            "serverSideEncryptionConfigurations": [
                {
                    "rules": [
                        {
                            "applyServerSideEncryptionByDefaults": [
                                {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY_ARN}
                            ],
                            "bucketKeyEnabled": True,
                        }
                    ]
                }
            ],
            "policy": json.dumps(TLS_DENY),
            "versionings": [{"enabled": True}],
        },
    )
    v2_unversioned = Res(BUCKET_V2, "v2-checkpoints-unversioned", {"versionings": [{"enabled": False}]})
    aes = Res(
        BUCKET,
        "aes-checkpoints",
        {
            "serverSideEncryptionConfiguration": {
                "rule": {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}
            },
            "policy": TLS_DENY,
        },
    )
    no_bucket_key = Res(BUCKET, "no-bucket-key", {"serverSideEncryptionConfiguration": {"rule": SSE_KMS_RULE}})
    rs = [inline, inline_v2, v2_unversioned, aes, no_bucket_key]
    assert stack_flagged("s3-sse-kms", rs) == {"v2-checkpoints-unversioned", "aes-checkpoints", "no-bucket-key"}
    assert stack_flagged("s3-sse-kms", rs, {"requireBucketKey": False}) == {
        "v2-checkpoints-unversioned",
        "aes-checkpoints",
    }
    assert stack_flagged("s3-tls-only", rs) == {"v2-checkpoints-unversioned", "no-bucket-key"}
    assert stack_flagged("checkpoint-bucket-versioning", rs) == {"v2-checkpoints-unversioned", "aes-checkpoints"}


def test_inline_versioning_on_bucket_and_bucket_v2():
    rs = [
        Res(BUCKET, "ckpt-on", {"versioning": {"enabled": True}}),
        Res(BUCKET, "ckpt-off", {"versioning": {"enabled": False}}),
        Res(BUCKET, "ckpt-string", {"versioning": {"enabled": "true"}}),
        Res(BUCKET, "ckpt-none", {}),
        Res(BUCKET_V2, "ckpt-v2-on", {"versionings": [{"enabled": False}, {"enabled": True}]}),
        Res(BUCKET_V2, "ckpt-v2-off", {"versionings": [{"enabled": False}]}),
        Res(BUCKET_V2, "ckpt-v2-bucket-form", {"versioning": {"enabled": True}}),
        Res(BUCKET, "ckpt-bucket-v2-form", {"versionings": [{"enabled": True}]}),
    ]
    assert stack_flagged("checkpoint-bucket-versioning", rs) == {
        "ckpt-off",
        "ckpt-none",
        "ckpt-v2-off",
        "ckpt-v2-bucket-form",
        "ckpt-bucket-v2-form",
    }


def test_inline_sse_rules_shapes():
    from gpucloud.policies.gpucloud_policies.security import s3_inline

    class R:
        def __init__(self, type_, props):
            self.resource_type, self.props = type_, props

    v2 = R(
        BUCKET_V2,
        {
            "serverSideEncryptionConfigurations": [
                {
                    "rules": [
                        {"applyServerSideEncryptionByDefaults": [{"sseAlgorithm": "AES256"}], "bucketKeyEnabled": False}
                    ]
                }
            ]
        },
    )
    assert s3_inline.sse_rules(v2) == [
        {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}, "bucketKeyEnabled": False}
    ]
    v1 = R(BUCKET, {"serverSideEncryptionConfiguration": {"rule": {"bucketKeyEnabled": True}}})
    assert s3_inline.sse_rules(v1) == [{"applyServerSideEncryptionByDefault": None, "bucketKeyEnabled": True}]
    assert s3_inline.sse_rules(R(BUCKET, {})) == []
    assert s3_inline.sse_rules(R(BUCKET, {"serverSideEncryptionConfigurations": [{"rules": [{}]}]})) == []
    assert s3_inline.policy(R(BUCKET_V2, {"policy": "{}"})) == "{}"
