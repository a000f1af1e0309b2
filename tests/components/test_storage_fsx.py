"""LustreStorage under mocks: file-system settings per deployment type, Lustre-only security group rules,
data repository associations with import/export events, KMS grants for FSx's S3 role, and retained data."""

from __future__ import annotations

from typing import Any

import pytest
from storage_testkit import DRA, FS, KEY_ARN, REGION, TAGS, handle, names, run

from gpucloud.components.storage import LustreConfig, LustreStorage
from gpucloud.plan import Plan
from gpucloud.spec.storage import FsxSpec

N = "lustre"
BUCKETS = {
    "dataset": ("acme-datasets", "arn:aws:s3:::acme-datasets"),
    "checkpoint": ("acme-checkpoints", "arn:aws:s3:::acme-checkpoints"),
}
LINKS = [
    {"fileSystemPath": "/datasets", "bucket": "dataset", "prefix": "datasets/"},
    {"fileSystemPath": "/checkpoints", "bucket": "checkpoint", "prefix": "checkpoints/"},
]
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def persistent(**overrides: Any) -> FsxSpec:
    data: dict[str, Any] = {
        "deploymentType": "PERSISTENT_2",
        "storageCapacityGib": 2400,
        "perUnitStorageThroughput": 250,
        "dataRepositoryAssociations": LINKS,
    }
    data.update(overrides)
    return FsxSpec.model_validate(data)


def scratch(**overrides: Any) -> FsxSpec:
    return FsxSpec.model_validate({"deploymentType": "SCRATCH_2", "storageCapacityGib": 1200, **overrides})


def plan_of(
    spec: FsxSpec, *, key: str | None = KEY_ARN, efa_sg: str = "sg-efa", az: str = "us-east-1a", **overrides: Any
) -> tuple[Plan, dict[str, LustreStorage]]:
    fields: dict[str, Any] = {"region": REGION, "tags": TAGS, "name_prefix": "gpucloud-test", "fsx": spec}
    fields["availability_zone"] = az
    fields.update(overrides)
    config = LustreConfig(**fields)
    made: dict[str, LustreStorage] = {}

    def program() -> None:
        made["fs"] = LustreStorage(N, config, handle(efa_sg=efa_sg), kms_key_arn=key, buckets=BUCKETS)

    return run(program), made


@pytest.fixture(scope="module")
def p2() -> tuple[Plan, dict[str, LustreStorage]]:
    return plan_of(persistent())


def test_persistent_2_file_system(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    plan, _ = p2
    fs = plan.find(FS, f"{N}-fs")
    got = {k: v for k, v in fs.inputs.items() if k not in ("tags", "securityGroupIds", "logConfiguration")}
    assert got == {
        "subnetIds": "subnet-aaaa",
        "deploymentType": "PERSISTENT_2",
        "storageType": "SSD",
        "storageCapacity": 2400.0,
        "perUnitStorageThroughput": 250.0,
        "dataCompressionType": "LZ4",
        "fileSystemTypeVersion": "2.15",
        "kmsKeyId": KEY_ARN,
        "automaticBackupRetentionDays": 7.0,
        "copyTagsToBackups": True,
        "skipFinalBackup": False,
    }
    assert fs.inputs["logConfiguration"]["level"] == "WARN_ERROR"
    sg = plan.find("aws:ec2/securityGroup:SecurityGroup", f"{N}-sg")
    assert sg.urn in fs.property_dependencies["securityGroupIds"]
    logs = plan.find("aws:cloudwatch/logGroup:LogGroup", f"{N}-logs")
    assert logs.inputs["name"] == f"/aws/fsx/lustre/{N}"
    assert logs.inputs["retentionInDays"] == 90.0
    assert "kmsKeyId" not in logs.inputs
    assert logs.urn in fs.property_dependencies["logConfiguration"]


def test_scratch_2_file_system_has_no_persistent_settings() -> None:
    plan, _ = plan_of(scratch(), key=None)
    fs = plan.find(FS, f"{N}-fs")
    for absent in ("perUnitStorageThroughput", "kmsKeyId", "automaticBackupRetentionDays", "copyTagsToBackups"):
        assert absent not in fs.inputs
    assert fs.inputs["deploymentType"] == "SCRATCH_2"
    assert fs.inputs["storageCapacity"] == 1200.0
    assert fs.inputs["dataCompressionType"] == "LZ4"
    assert names(plan, DRA) == set()
    assert names(plan, "aws:kms/grant:Grant") == set()


def test_kms_toggle_off_on_persistent() -> None:
    plan, _ = plan_of(persistent(enableKmsEncryption=False, dataRepositoryAssociations=[]))
    assert "kmsKeyId" not in plan.find(FS, f"{N}-fs").inputs


def test_settings_follow_the_spec() -> None:
    spec = persistent(
        perUnitStorageThroughput=1000,
        storageCapacityGib=4800,
        dataCompression="NONE",
        lustreVersion="2.12",
        automaticBackupRetentionDays=30,
        dailyBackupStartTime="03:00",
        weeklyMaintenanceStartTime="7:04:00",
    )
    plan, made = plan_of(spec, az="us-east-1b")
    fs = plan.find(FS, f"{N}-fs").inputs
    assert (fs["subnetIds"], fs["perUnitStorageThroughput"], fs["storageCapacity"]) == ("subnet-bbbb", 1000.0, 4800.0)
    assert (fs["dataCompressionType"], fs["fileSystemTypeVersion"]) == ("NONE", "2.12")
    assert (fs["automaticBackupRetentionDays"], fs["dailyAutomaticBackupStartTime"]) == (30.0, "03:00")
    assert fs["weeklyMaintenanceStartTime"] == "7:04:00"
    assert made["fs"].aggregate_throughput_mbps == 4800.0


def test_logging_disabled() -> None:
    plan, _ = plan_of(persistent(logLevel="DISABLED"))
    assert names(plan, "aws:cloudwatch/logGroup:LogGroup") == set()
    assert plan.find(FS, f"{N}-fs").inputs["logConfiguration"] == {"level": "DISABLED"}


def test_log_group_encrypted_when_asked() -> None:
    plan, _ = plan_of(persistent(), enable_log_encryption=True)
    assert plan.find("aws:cloudwatch/logGroup:LogGroup", f"{N}-logs").inputs["kmsKeyId"] == KEY_ARN


def _rules(plan: Plan, type_: str) -> set[tuple[str, str, str, int, int]]:
    sg_urn = plan.find("aws:ec2/securityGroup:SecurityGroup", f"{N}-sg").urn
    out = set()
    for r in plan.of_type(type_):
        assert r.inputs["ipProtocol"] == "tcp"
        assert not {"cidrIpv4", "cidrIpv6", "prefixListId"} & set(r.inputs)
        assert r.inputs["description"]
        target = "fsx" if sg_urn in r.property_dependencies.get("securityGroupId", []) else r.inputs["securityGroupId"]
        source = (
            "fsx"
            if sg_urn in r.property_dependencies.get("referencedSecurityGroupId", [])
            else (r.inputs["referencedSecurityGroupId"])
        )
        out.add((r.name, target, source, int(r.inputs["fromPort"]), int(r.inputs["toPort"])))
    return out


def test_security_group_allows_lustre_from_nodes_and_itself_only(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    plan, _ = p2
    assert _rules(plan, INGRESS) == {
        (f"{N}-in-988-self", "fsx", "fsx", 988, 988),
        (f"{N}-in-1018-1023-self", "fsx", "fsx", 1018, 1023),
        (f"{N}-in-988-nodes", "fsx", "sg-nodes", 988, 988),
        (f"{N}-in-1018-1023-nodes", "fsx", "sg-nodes", 1018, 1023),
        (f"{N}-in-988-efa-nodes", "fsx", "sg-efa", 988, 988),
        (f"{N}-in-1018-1023-efa-nodes", "fsx", "sg-efa", 1018, 1023),
        (f"{N}-nodes-in-988", "sg-nodes", "fsx", 988, 988),
        (f"{N}-nodes-in-1018-1023", "sg-nodes", "fsx", 1018, 1023),
        (f"{N}-efa-nodes-in-988", "sg-efa", "fsx", 988, 988),
        (f"{N}-efa-nodes-in-1018-1023", "sg-efa", "fsx", 1018, 1023),
    }
    assert _rules(plan, EGRESS) == {
        (f"{N}-out-988-self", "fsx", "fsx", 988, 988),
        (f"{N}-out-1018-1023-self", "fsx", "fsx", 1018, 1023),
        (f"{N}-out-988-nodes", "fsx", "sg-nodes", 988, 988),
        (f"{N}-out-1018-1023-nodes", "fsx", "sg-nodes", 1018, 1023),
        (f"{N}-out-988-efa-nodes", "fsx", "sg-efa", 988, 988),
        (f"{N}-out-1018-1023-efa-nodes", "fsx", "sg-efa", 1018, 1023),
    }
    sg = plan.find("aws:ec2/securityGroup:SecurityGroup", f"{N}-sg")
    assert sg.inputs["vpcId"] == "vpc-0123456789abcdef0"
    assert "ingress" not in sg.inputs and "egress" not in sg.inputs


def test_no_efa_security_group_means_node_rules_only() -> None:
    plan, _ = plan_of(persistent(), efa_sg="")
    assert len(plan.of_type(INGRESS)) == 6
    assert len(plan.of_type(EGRESS)) == 4
    assert not [r for r in plan.of_type(INGRESS, EGRESS) if r.inputs.get("referencedSecurityGroupId") == ""]


def test_data_repository_associations(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    plan, _ = p2
    fs = plan.find(FS, f"{N}-fs")
    all_events = ["NEW", "CHANGED", "DELETED"]
    for name, path, repo in (
        ("datasets", "/datasets", "s3://acme-datasets/datasets/"),
        ("checkpoints", "/checkpoints", "s3://acme-checkpoints/checkpoints/"),
    ):
        dra = plan.find(DRA, f"{N}-dra-{name}")
        got = {k: v for k, v in dra.inputs.items() if k not in ("tags", "fileSystemId")}
        assert got == {
            "fileSystemPath": path,
            "dataRepositoryPath": repo,
            "batchImportMetaDataOnCreate": True,
            "importedFileChunkSize": 1024.0,
            "deleteDataInFilesystem": False,
            "s3": {"autoImportPolicy": {"events": all_events}, "autoExportPolicy": {"events": all_events}},
        }
        assert fs.urn in dra.property_dependencies["fileSystemId"]


def test_association_events_follow_the_spec() -> None:
    links = [
        {**LINKS[0], "importEvents": ["NEW"], "exportEvents": [], "batchImportMetadataOnCreate": False},
        {**LINKS[1], "importEvents": [], "exportEvents": ["NEW", "CHANGED"], "importedFileChunkSizeMib": 4096},
    ]
    plan, _ = plan_of(persistent(dataRepositoryAssociations=links))
    datasets = plan.find(DRA, f"{N}-dra-datasets").inputs
    assert datasets["s3"] == {"autoImportPolicy": {"events": ["NEW"]}}
    assert datasets["batchImportMetaDataOnCreate"] is False
    checkpoints = plan.find(DRA, f"{N}-dra-checkpoints").inputs
    assert checkpoints["s3"] == {"autoExportPolicy": {"events": ["NEW", "CHANGED"]}}
    assert checkpoints["importedFileChunkSize"] == 4096.0


def test_key_grants_for_fsx_s3_role(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    plan, _ = p2
    grants = {r.name: r for r in plan.of_type("aws:kms/grant:Grant")}
    assert set(grants) == {f"{N}-s3-key-dataset", f"{N}-s3-key-checkpoint"}
    dras = {r.urn for r in plan.of_type(DRA)}
    for role, arn in (("dataset", "arn:aws:s3:::acme-datasets"), ("checkpoint", "arn:aws:s3:::acme-checkpoints")):
        g = grants[f"{N}-s3-key-{role}"]
        assert g.inputs["keyId"] == KEY_ARN
        assert g.inputs["constraints"] == [{"encryptionContextEquals": {"aws:s3:arn": arn}}]
        assert g.inputs["operations"] == [
            "Decrypt",
            "DescribeKey",
            "Encrypt",
            "GenerateDataKey",
            "ReEncryptFrom",
            "ReEncryptTo",
        ]
        assert dras <= set(g.dependencies)


def test_only_linked_buckets_get_grants() -> None:
    plan, _ = plan_of(persistent(dataRepositoryAssociations=[LINKS[1]]))
    assert names(plan, DRA) == {f"{N}-dra-checkpoints"}
    assert names(plan, "aws:kms/grant:Grant") == {f"{N}-s3-key-checkpoint"}


def test_data_retained_by_default(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    plan, _ = p2
    assert {r.name for r in plan if r.retain_on_delete} == {
        f"{N}-fs",
        f"{N}-dra-datasets",
        f"{N}-dra-checkpoints",
    }
    assert not any(r.protect for r in plan)


def test_prod_protects_file_system_and_links() -> None:
    plan, _ = plan_of(persistent(), protect=True)
    assert {r.name for r in plan if r.protect} == {f"{N}-fs", f"{N}-dra-datasets", f"{N}-dra-checkpoints"}


def test_allow_data_deletion() -> None:
    plan, _ = plan_of(persistent(), protect=True, allow_data_deletion=True)
    assert not any(r.retain_on_delete or r.protect for r in plan)
    assert plan.find(FS, f"{N}-fs").inputs["skipFinalBackup"] is True


def test_outputs(p2: tuple[Plan, dict[str, LustreStorage]]) -> None:
    _, made = p2
    fs = made["fs"]
    assert (fs.availability_zone, fs.storage_capacity_gib, fs.aggregate_throughput_mbps) == ("us-east-1a", 2400, 600.0)
    assert fs.subnet_id == "subnet-aaaa"


def test_az_without_subnet_is_an_error() -> None:
    with pytest.raises(Exception, match=r"no private subnet in \['us-east-1c'\]"):
        plan_of(persistent(), az="us-east-1c")


def test_kms_type_without_key_is_an_error() -> None:
    with pytest.raises(Exception, match="PERSISTENT_2 with KMS encryption needs kms_key_arn"):
        plan_of(persistent(), key=None)
