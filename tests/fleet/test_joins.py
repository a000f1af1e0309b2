"""gpucloud.fleet.joins: how a plan's resources become records and what each join finds (by URN: property
dependencies, else plain dependencies; templates also by literal name), with the reason when nothing is found."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from gpucloud.fleet import types as T
from gpucloud.fleet.joins import Index, Record, plan_region, record
from gpucloud.fleet.values import UNKNOWN


def rec(type_: str, name: str, inputs: dict[str, Any] | None = None, **kw: Any) -> Record:
    return Record(urn=f"urn:pulumi:dev::p::{type_}::{name}", type=type_, name=name, inputs=inputs or {}, **kw)


def test_record_from_a_mapping_reads_every_field_in_either_spelling() -> None:
    camel = record(
        {
            "urn": "u",
            "type": T.INSTANCE,
            "name": "i",
            "inputs": {"instanceType": "g5.xlarge"},
            "dependencies": ["d1", "d2"],
            "propertyDependencies": {"subnetId": ["s"], "launchTemplate": None},
            "provider": "urn:p::default",
        }
    )
    assert camel == Record(
        "u", T.INSTANCE, "i", {"instanceType": "g5.xlarge"}, ("d1", "d2"),
        {"subnetId": ("s",), "launchTemplate": ()}, "urn:p::default",
    )  # fmt: skip
    snake = record(
        {"urn": "u", "name": "i", "inputs": "not a map", "property_dependencies": {"a": ["b"]}, "provider": 3}
    )
    assert snake == Record("u", "", "i", {}, (), {"a": ("b",)}, None)
    odd = record({"urn": "u", "name": "i", "propertyDependencies": ["not", "a", "map"]})
    assert (odd.property_dependencies, odd.dependencies) == ({}, ())
    same = rec(T.SUBNET, "s")
    assert record(same) is same


def test_record_from_an_object_with_attributes() -> None:
    obj = SimpleNamespace(
        urn="u", type=T.SUBNET, name="s", inputs={"cidrBlock": "10.0.0.0/24"},
        dependencies=["v"], property_dependencies={"vpcId": ["v"]}, provider="urn:prov",
    )  # fmt: skip
    assert record(obj) == Record(
        "u", T.SUBNET, "s", {"cidrBlock": "10.0.0.0/24"}, ("v",), {"vpcId": ("v",)}, "urn:prov"
    )
    bare = SimpleNamespace(urn="u", type=T.SUBNET, name="s", inputs=None, dependencies=None,
                           property_dependencies=None, provider=None)  # fmt: skip
    assert record(bare) == Record("u", T.SUBNET, "s", {}, (), {}, None)


def test_referenced_uses_property_dependencies_else_plain_dependencies() -> None:
    lt, sg = rec(T.LAUNCH_TEMPLATE, "lt"), rec("aws:ec2/securityGroup:SecurityGroup", "sg")
    by_prop = rec(T.INSTANCE, "i", property_dependencies={"launchTemplate": (lt.urn, sg.urn, "urn:missing")})
    plain = rec(T.INSTANCE, "j", dependencies=(lt.urn, sg.urn))
    other_prop = rec(T.INSTANCE, "k", dependencies=(lt.urn,), property_dependencies={"tags": (lt.urn,)})
    index = Index([lt, sg, by_prop, plain, other_prop])
    assert index.referenced(by_prop, "launchTemplate", T.LAUNCH_TEMPLATE) == [lt]
    assert index.referenced(plain, "launchTemplate", T.LAUNCH_TEMPLATE) == [lt]
    # Property dependencies exist but none for this property: the plain ones are not consulted.
    assert index.referenced(other_prop, "launchTemplate", T.LAUNCH_TEMPLATE) == []


def test_launch_template_join_and_its_reasons() -> None:
    a = rec(T.LAUNCH_TEMPLATE, "a", {"name": "gpu-a"})
    b = rec(T.LAUNCH_TEMPLATE, "b")
    both = {"launchTemplate": (a.urn, b.urn)}
    users = {
        "dep": rec(T.INSTANCE, "dep", property_dependencies={"launchTemplate": (a.urn,)}),
        "none": rec(T.INSTANCE, "none", property_dependencies={"x": ()}),
        "ambiguous": rec(T.INSTANCE, "ambiguous", property_dependencies=both),
    }
    index = Index([a, b, *users.values()])
    lt = index.launch_template
    assert lt(users["dep"], "launchTemplate", None) == (a, None)
    assert lt(users["none"], "launchTemplate", None) == (None, None)
    assert lt(users["none"], "launchTemplate", {"name": "gpu-a"}) == (a, None)
    assert lt(users["none"], "launchTemplate", {"launchTemplateName": "b"}) == (b, None)  # the program's name
    assert lt(users["none"], "launchTemplate", {"name": "elsewhere"}) == (
        None, "launch template 'elsewhere' is not in this program, so its instance type is unknown"
    )  # fmt: skip
    assert lt(users["none"], "launchTemplate", {"launchTemplateId": "lt-1"}) == (
        None, "launch template lt-1 is not in this program, so its instance type is unknown"
    )  # fmt: skip
    assert lt(users["ambiguous"], "launchTemplate", {"id": UNKNOWN}) == (
        None, "the launch template is ambiguous (several in its dependencies)"
    )  # fmt: skip
    assert lt(users["none"], "launchTemplate", {"id": UNKNOWN, "name": UNKNOWN}) == (
        None, "the launch template could not be matched to a resource in this program"
    )  # fmt: skip
    # A name that is not a template's is not joined, even when a record of another type carries it.
    subnet = rec(T.SUBNET, "s", {"name": "gpu-s"})
    index = Index([subnet, users["none"]])
    assert index.launch_template(users["none"], "launchTemplate", {"name": "gpu-s"})[0] is None


def test_zones_of_the_joined_subnets() -> None:
    a, b = (
        rec(T.SUBNET, "a", {"availabilityZone": "us-east-1a"}),
        rec(T.SUBNET, "b", {"availabilityZone": "us-east-1b"}),
    )
    u = rec(T.SUBNET, "u", {"availabilityZone": UNKNOWN})
    two = rec(T.NODE_GROUP, "two", property_dependencies={"subnetIds": (a.urn, b.urn)})
    open_ = rec(T.NODE_GROUP, "open", property_dependencies={"subnetIds": (a.urn, u.urn)})
    none = rec(T.NODE_GROUP, "none", property_dependencies={"subnetIds": ()})
    index = Index([a, b, u, two, open_, none])
    assert index.zones(two, "subnetIds") == (frozenset({"us-east-1a", "us-east-1b"}), (a.urn, b.urn))
    assert index.zones(open_, "subnetIds") == (None, (a.urn, u.urn))
    assert index.zones(none, "subnetIds") == (None, ())


def test_provider_region_and_plan_region() -> None:
    west = Record("urn:pulumi:dev::p::pulumi:providers:aws::west", T.AWS_PROVIDER, "west", {"region": "us-west-2"})
    east = rec(T.AWS_PROVIDER, "default_6_0_0", {"region": "us-east-1"})
    no_region = rec(T.AWS_PROVIDER, "bare", {})
    on_west = rec(T.INSTANCE, "i", provider=f"{west.urn}::04da6b54-80e4-46f7-96ec-b56ff0331ba9")
    on_bare = rec(T.INSTANCE, "j", provider=no_region.urn)
    on_other = rec(T.INSTANCE, "k", provider="urn:pulumi:dev::p::pulumi:providers:kubernetes::k8s")
    index = Index([west, east, no_region, on_west, on_bare, on_other])
    assert index.region == "us-east-1"  # the default provider's
    assert index.provider_region(on_west) == "us-west-2"
    # A provider reference without the "::<id>" suffix is the provider's URN as it is.
    assert index.provider_region(rec(T.INSTANCE, "bare-ref", provider=west.urn)) == "us-west-2"
    assert index.provider_region(on_bare) == "us-east-1"
    assert index.provider_region(on_other) == "us-east-1"
    assert Index([west], region="eu-west-1").region == "eu-west-1"
    assert plan_region([west]) == "us-west-2"  # the only explicit provider's
    assert plan_region([west, rec(T.AWS_PROVIDER, "second", {"region": "eu-west-1"})]) is None
    assert plan_region([west, rec(T.AWS_PROVIDER, "same", {"region": "us-west-2"})]) == "us-west-2"
    assert plan_region([rec(T.INSTANCE, "x", {"region": "us-east-2"})]) is None
    assert plan_region([]) is None
