"""Data sources answered plausibly: every data source pulumi_aws defines gets an answer its SDK accepts, built from
its result type; the availability zones per Region come from the shipped, sourced table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pulumi import _types

from gpucloud.plan import run_program
from gpucloud.plan.invoke_shapes import availability_zones, generic_answer, result_type, sdk_tokens
from gpucloud.plan.offline import OfflineAnswers

PROGRAMS = Path(__file__).parent / "programs"
TABLE = Path(__file__).resolve().parents[2] / "gpucloud" / "plan" / "availability_zones.json"


def test_program_with_lookups_plans_with_answers_that_echo_the_query() -> None:
    plan = run_program(PROGRAMS / "data_sources", "dev", timeout=60)
    assert plan.outputs == {
        "zoneName": "internal.example.com",
        "zones": ["us-east-2a", "us-east-2b", "us-east-2c"],
        "zoneIds": ["use2-az1", "use2-az2", "use2-az3"],
        "sgName": "default",
        "certDomain": "app.example.com",
    }
    # One subnet per zone: us-east-2 has three.
    assert sorted(r.name for r in plan.of_type("aws:ec2/subnet:Subnet")) == [
        "subnet-us-east-2a",
        "subnet-us-east-2b",
        "subnet-us-east-2c",
    ]
    record = plan.find("aws:route53/record:Record", "app")
    assert record.inputs["name"] == "app.example.com"
    assert record.inputs["records"] == ["app.example.com"]
    assert record.inputs["zoneId"].startswith("Z") and len(record.inputs["zoneId"]) == 14
    assert plan.warnings == [
        f"offline plan answered {token} from its SDK result type: values echo the query or are placeholders"
        for token in (
            "aws:route53/getZone:getZone",
            "aws:acm/getCertificate:getCertificate",
            "aws:ec2/getSecurityGroup:getSecurityGroup",
        )
    ]


def test_every_aws_data_source_gets_an_answer_its_result_type_accepts() -> None:
    from gpucloud.plan import lazy_sdk

    lazy_sdk.install()
    tokens = sdk_tokens("pulumi_aws")
    assert len(tokens) > 600
    refused = []
    for token in tokens:
        answer = generic_answer(token, {"name": "example"}, "us-east-2")
        cls = result_type(token)
        if answer is None or cls is None:
            refused.append(token)
            continue
        # What the SDK does with an invoke's result: build the result class, which checks every field's type.
        _types.output_type_from_dict(cls, answer)
        assert set(answer) == set(_types.output_type_types(cls)), token
    assert refused == []


def test_generic_answer_shapes() -> None:
    zone = generic_answer("aws:route53/getZone:getZone", {"name": "example.com", "privateZone": True}, "eu-west-1")
    assert zone is not None
    assert zone["name"] == "example.com"
    assert zone["privateZone"] is True
    assert zone["arn"] == "arn:aws:route53::123456789012:example.com"
    assert zone["vpcId"].startswith("vpc-") and len(zone["vpcId"]) == 21
    assert zone["nameServers"] == ["offline-name-server"]
    assert zone["tags"] == {}
    assert zone["resourceRecordSetCount"] == 0.0
    vpcs = generic_answer("aws:ec2/getVpcs:getVpcs", {}, "us-east-1")
    assert vpcs is not None
    (vpc_id,) = vpcs["ids"]
    assert vpc_id.startswith("vpc-") and len(vpc_id) == 21
    # Query arguments left out come back null, as the provider echoes them.
    assert vpcs["filters"] is None
    assert vpcs["region"] == "us-east-1"
    assert generic_answer("aws:nosuch/getThing:getThing", {}, "us-east-1") is None
    assert generic_answer("other:index/getThing:getThing", {}, "us-east-1") is None


@pytest.mark.parametrize(
    ("region", "names", "ids"),
    [
        ("us-east-2", ["us-east-2a", "us-east-2b", "us-east-2c"], ["use2-az1", "use2-az2", "use2-az3"]),
        ("ca-central-1", ["ca-central-1a", "ca-central-1b", "ca-central-1d"], ["cac1-az1", "cac1-az2", "cac1-az4"]),
        ("eu-west-2", ["eu-west-2a", "eu-west-2b", "eu-west-2c", "eu-west-2d"], [f"euw2-az{i}" for i in range(1, 5)]),
    ],
)
def test_zones_per_region(region: str, names: list[str], ids: list[str]) -> None:
    answer = OfflineAnswers(region).answer("aws:index/getAvailabilityZones:getAvailabilityZones", {})
    assert answer["names"] == names
    assert answer["zoneIds"] == ids


def test_us_east_1_has_six_zones_and_exclusions_apply() -> None:
    answers = OfflineAnswers("us-east-1")
    token = "aws:index/getAvailabilityZones:getAvailabilityZones"
    assert answers.answer(token, {})["names"] == [f"us-east-1{c}" for c in "abcdef"]
    left = answers.answer(token, {"excludeNames": ["us-east-1e"], "excludeZoneIds": ["use1-az1"]})
    assert left["names"] == ["us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"]
    one = answers.answer("aws:index/getAvailabilityZone:getAvailabilityZone", {"zoneId": "use1-az3"})
    assert (one["name"], one["zoneId"], one["region"], one["nameSuffix"]) == (
        "us-east-1c",
        "use1-az3",
        "us-east-1",
        "c",
    )
    assert answers.warnings == []


def test_region_missing_from_the_table_gets_three_zones_and_a_warning() -> None:
    answers = OfflineAnswers("us-gov-east-1")
    answer = answers.answer("aws:index/getAvailabilityZones:getAvailabilityZones", {})
    assert answer["names"] == ["us-gov-east-1a", "us-gov-east-1b", "us-gov-east-1c"]
    assert answers.warnings == [
        "availability zones of us-gov-east-1 are not in gpucloud/plan/availability_zones.json; the plan assumes three"
    ]


def test_zone_table_is_sourced_and_dated() -> None:
    table = json.loads(TABLE.read_text())
    assert "docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html" in table["source"]
    assert table["retrieved"] == "2026-12-01"
    assert len(table["regions"]["us-east-1"]) == 6
    assert len(table["regions"]["us-east-2"]) == 3
    assert availability_zones("us-west-2") == [
        ("us-west-2a", "usw2-az1"),
        ("us-west-2b", "usw2-az2"),
        ("us-west-2c", "usw2-az3"),
        ("us-west-2d", "usw2-az4"),
    ]
