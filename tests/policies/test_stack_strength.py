"""The stack-policy relationship helpers (policies/gpucloud_policies/stack.py) on literal resources: types,
property dependencies by URN, subnet zones and literal references, each with the exact result expected."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pulumi_policy.proxy import unknown_checking_proxy

from gpucloud.guard.harness import UNKNOWN
from gpucloud.policies.gpucloud_policies.base import UnknownValueError
from gpucloud.policies.gpucloud_policies.stack import depends_on, linked, literal_refs, of_type, subnet_azs

SUBNET = "aws:ec2/subnet:Subnet"
VPC = "aws:ec2/vpc:Vpc"
SG = "aws:ec2/securityGroup:SecurityGroup"


def res(name: str, type_: str = SUBNET, props: Any = None, **links: Any) -> Any:
    return SimpleNamespace(
        urn=f"urn:pulumi:t::p::{type_}::{name}",
        name=name,
        resource_type=type_,
        props=unknown_checking_proxy(props or {}),
        property_dependencies=links.get("property_dependencies"),
        dependencies=links.get("dependencies"),
    )


def names(resources: list[Any]) -> list[str]:
    return [r.name for r in resources]


def test_of_type_keeps_the_order_and_every_listed_type() -> None:
    rs = [res("a"), res("v", VPC), res("b"), res("g", SG)]
    assert names(of_type(rs, SUBNET)) == ["a", "b"]
    assert names(of_type(rs, SG, VPC)) == ["v", "g"]
    assert of_type(rs) == []


def test_linked_follows_one_property_and_filters_by_type() -> None:
    vpc, sg, subnet = res("v", VPC), res("g", SG), res("s")
    r = res("lt", "aws:ec2/launchTemplate:LaunchTemplate", property_dependencies={"vpcId": [vpc, sg], "x": [subnet]})
    assert names(linked(r, "vpcId")) == ["v", "g"]
    assert names(linked(r, "vpcId", SG)) == ["g"]
    assert names(linked(r, "vpcId", SG, VPC)) == ["v", "g"]
    assert linked(r, "vpcId", SUBNET) == []
    assert linked(r, "missing") == []
    assert linked(res("bare"), "vpcId") == []
    assert linked(res("none", property_dependencies={"vpcId": None}), "vpcId") == []


def test_depends_on_by_property_or_by_any_dependency() -> None:
    vpc, other = res("v", VPC), res("o", VPC)
    r = res("s", property_dependencies={"vpcId": [vpc]}, dependencies=[other])
    assert depends_on(r, vpc, "vpcId") is True
    assert depends_on(r, other, "vpcId") is False
    assert depends_on(r, vpc, "cidrBlock") is False
    assert depends_on(r, other) is True
    assert depends_on(r, vpc) is False
    assert depends_on(res("bare"), vpc) is False
    assert depends_on(res("bare"), vpc, "vpcId") is False
    assert depends_on(res("none", property_dependencies={"vpcId": None}), vpc, "vpcId") is False


def test_subnet_azs_reads_the_zone_or_its_id_and_skips_unset() -> None:
    subnets = [
        res("a", props={"availabilityZone": "us-east-1a"}),
        res("b", props={"availabilityZoneId": "use1-az2"}),
        res("both", props={"availabilityZone": "us-east-1c", "availabilityZoneId": "use1-az9"}),
        res("dup", props={"availabilityZone": "us-east-1a"}),
        res("unset", props={}),
        res("empty", props={"availabilityZone": ""}),
    ]
    assert subnet_azs(subnets) == {"us-east-1a", "use1-az2", "us-east-1c"}
    assert subnet_azs([]) == set()


def test_subnet_azs_raises_on_an_unknown_zone() -> None:
    with pytest.raises(UnknownValueError):
        subnet_azs([res("a", props={"availabilityZone": "us-east-1a"}), res("u", props={"availabilityZone": UNKNOWN})])


def test_literal_refs_reads_strings_only() -> None:
    props = {"ids": ["sg-1", 7, "sg-2"], "one": "sg-3", "num": 5}
    assert literal_refs(props, "ids") == ["sg-1", "sg-2"]
    assert literal_refs(props, "one") == ["sg-3"]
    assert literal_refs(props, "num") == []
    assert literal_refs(props, "missing") == []
