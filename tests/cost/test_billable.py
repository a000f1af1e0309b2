"""Every resource type of the families gpucloud plans is priced, listed (usage or billed without a rate, with its
unit) or known free; the type list comes from the installed pulumi_aws SDK, not from gpucloud."""

from __future__ import annotations

import re
from functools import cache
from importlib import util
from pathlib import Path

import pytest

from gpucloud.cost import price_resources
from gpucloud.cost.billable import BILLED_NOT_PRICED, FREE_TYPES, USAGE_BILLED
from gpucloud.cost.engine import classify

FAMILIES = (
    "ec2", "ebs", "autoscaling", "eks", "fsx", "s3", "efs", "rds", "kms", "cloudwatch", "elb", "alb", "lb", "vpc",
    "ec2transitgateway", "ecr", "sqs",
)  # fmt: skip
# Resource classes carry @pulumi.type_token("aws:<module>/<camelCase>:<Name>"); enums are Capitalised.
_TOKEN = re.compile(r'@pulumi\.type_token\("(aws:([a-z0-9]+)/[a-z][A-Za-z0-9]*:[A-Za-z0-9]+)"\)')

# Billable on the AWS pricing page of each service: none of them may be classified free.
KNOWN_BILLABLE = {
    "aws:ec2/instance:Instance": "priced",
    "aws:ec2/spotInstanceRequest:SpotInstanceRequest": "priced",
    "aws:autoscaling/group:Group": "priced",
    "aws:eks/nodeGroup:NodeGroup": "priced",
    "aws:eks/cluster:Cluster": "priced",
    "aws:ec2/natGateway:NatGateway": "priced",
    "aws:ec2/eip:Eip": "priced",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "priced",
    "aws:ebs/volume:Volume": "priced",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "priced",
    "aws:kms/key:Key": "priced",
    "aws:kms/replicaKey:ReplicaKey": "priced",
    "aws:ec2/capacityReservation:CapacityReservation": "priced",
    "aws:ebs/snapshot:Snapshot": "usage",
    "aws:s3/bucket:Bucket": "usage",
    "aws:s3/bucketV2:BucketV2": "usage",
    "aws:efs/fileSystem:FileSystem": "usage",
    "aws:fsx/backup:Backup": "usage",
    "aws:cloudwatch/logGroup:LogGroup": "usage",
    "aws:cloudwatch/metricAlarm:MetricAlarm": "usage",
    "aws:cloudwatch/dashboard:Dashboard": "usage",
    "aws:sqs/queue:Queue": "usage",
    "aws:ecr/repository:Repository": "usage",
    "aws:eks/fargateProfile:FargateProfile": "usage",
    "aws:lb/loadBalancer:LoadBalancer": "billed-not-priced",
    "aws:alb/loadBalancer:LoadBalancer": "billed-not-priced",
    "aws:elb/loadBalancer:LoadBalancer": "billed-not-priced",
    "aws:rds/instance:Instance": "billed-not-priced",
    "aws:rds/cluster:Cluster": "billed-not-priced",
    "aws:rds/clusterInstance:ClusterInstance": "billed-not-priced",
    "aws:ec2transitgateway/vpcAttachment:VpcAttachment": "billed-not-priced",
    "aws:ec2/vpnConnection:VpnConnection": "billed-not-priced",
    "aws:fsx/ontapFileSystem:OntapFileSystem": "billed-not-priced",
    "aws:fsx/openZfsFileSystem:OpenZfsFileSystem": "billed-not-priced",
    "aws:fsx/windowsFileSystem:WindowsFileSystem": "billed-not-priced",
    "aws:ec2/dedicatedHost:DedicatedHost": "billed-not-priced",
}


@cache
def sdk_types(families: tuple[str, ...] = FAMILIES) -> frozenset[str]:
    spec = util.find_spec("pulumi_aws")
    assert spec is not None and spec.origin is not None
    root = Path(spec.origin).parent
    found: set[str] = set()
    for family in families:
        # Modules named like Python keywords get a trailing underscore (aws:lambda/... lives in lambda_/).
        folder = root / family if (root / family).is_dir() else root / f"{family}_"
        for path in folder.glob("*.py"):
            for match in _TOKEN.finditer(path.read_text(encoding="utf-8")):
                if match.group(2) == family:
                    found.add(match.group(1))
    return frozenset(found)


def test_sdk_type_list_is_read() -> None:
    types = sdk_types()
    assert "aws:ec2/instance:Instance" in types and "aws:rds/instance:Instance" in types
    assert "aws:ec2/InstanceType:InstanceType" not in types  # an enum, not a resource
    assert len(types) > 300


def test_every_sdk_type_of_the_planned_families_is_classified() -> None:
    assert sorted(t for t in sdk_types() if classify(t) == "unclassified") == []


@pytest.mark.parametrize(("type_", "expected"), sorted(KNOWN_BILLABLE.items()))
def test_known_billable_types_are_priced_or_listed(type_: str, expected: str) -> None:
    assert type_ in sdk_types()
    assert classify(type_) == expected


def test_tables_are_disjoint_and_name_real_types() -> None:
    usage, billed = set(USAGE_BILLED), set(BILLED_NOT_PRICED)
    assert usage & billed == set() and usage & FREE_TYPES == set() and billed & FREE_TYPES == set()
    tables = usage | billed | FREE_TYPES
    # Beside the planned families, the tables classify the services the foreign corpus uses (one non-AWS type).
    assert {t for t in tables if not t.startswith("aws:")} == {"docker:index/image:Image"}
    families = tuple(sorted({t.split(":")[1].split("/")[0] for t in tables if t.startswith("aws:")}))
    assert sorted({t for t in tables if t.startswith("aws:")} - sdk_types(families)) == []


def test_every_listed_type_reaches_the_unpriced_list_with_its_unit() -> None:
    listed = sorted(set(USAGE_BILLED) | set(BILLED_NOT_PRICED))
    resources = [
        {"urn": f"urn:pulumi:s::p::{t}::r{i}", "type": t, "name": f"r{i}", "custom": True, "inputs": {}}
        for i, t in enumerate(listed)
    ]
    cost = price_resources(resources)
    by_type = {u["urn"].split("::")[2]: u for u in cost["unpriced"]}
    assert sorted(by_type) == listed
    lb = by_type["aws:lb/loadBalancer:LoadBalancer"]
    assert lb["reason"] == "billed, no rate in gpucloud: load balancers are billed per hour plus LCU/NLCU usage"
    assert lb["unit"] == "hour + LCU-hour"
    assert by_type["aws:ebs/snapshot:Snapshot"] == {
        "urn": "urn:pulumi:s::p::aws:ebs/snapshot:Snapshot::r" + str(listed.index("aws:ebs/snapshot:Snapshot")),
        "reason": "usage-billed: EBS snapshots are billed by stored GB",
        "unit": "GB-month",
    }
    assert cost["items"] == []


def test_free_and_unknown_types() -> None:
    assert classify("aws:ec2/subnet:Subnet") == "free"
    assert classify("aws:iam/role:Role") == "free"
    assert classify("aws:sagemaker/endpoint:Endpoint") == "unclassified"
    cost = price_resources(
        [{"urn": "urn:x::aws:sagemaker/endpoint:Endpoint::e", "type": "aws:sagemaker/endpoint:Endpoint",
          "name": "e", "custom": True, "inputs": {}}]
    )  # fmt: skip
    assert cost["unpriced"] == [
        {
            "urn": "urn:x::aws:sagemaker/endpoint:Endpoint::e",
            "reason": "no price rule for aws:sagemaker/endpoint:Endpoint",
        }
    ]
