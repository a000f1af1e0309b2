"""Where a pool's values could not be read (gpucloud.fleet.model.Pool.open): per field a reader may need on its
own, the resource the value sits on (the pool's own or the template it was read through) and the exact input
path, so a policy that needs only the maximum size is not undecided by an unknown desired size and a finding
names ``<template>.field``."""

from __future__ import annotations

from typing import Any

from gpucloud import fleet
from gpucloud.fleet import types as T
from gpucloud.fleet.model import Open
from gpucloud.fleet.paths import unknown_at
from gpucloud.fleet.values import UNKNOWN


def res(type_: str, name: str, inputs: dict[str, Any], **deps: Any) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:dev::p::{type_}::{name}",
        "type": type_,
        "name": name,
        "inputs": inputs,
        "propertyDependencies": {k: [v["urn"]] for k, v in deps.items()},
    }


def opened(*resources: dict[str, Any]) -> dict[str, Open]:
    found = {p.name: p for p in fleet.pools(resources)}
    return found[resources[-1]["name"]].open


def urn(r: dict[str, Any]) -> str:
    return str(r["urn"])


def test_unknown_at_names_the_first_unknown_part_of_a_path() -> None:
    assert unknown_at({"scalingConfig": UNKNOWN}, "scalingConfig.maxSize") == "scalingConfig"
    assert unknown_at({"scalingConfig": {"maxSize": UNKNOWN}}, "scalingConfig.maxSize") == "scalingConfig.maxSize"
    assert unknown_at({"scalingConfig": {"maxSize": 3}}, "scalingConfig.maxSize") is None
    assert unknown_at({}, "scalingConfig.maxSize") is None
    assert unknown_at({"a": [1, UNKNOWN]}, "a.1") == "a.1"
    assert unknown_at({"a": [1, UNKNOWN]}, "a.0") is None
    assert unknown_at({"a": [1]}, "a.5") is None


def test_node_group_open_values_name_their_exact_paths() -> None:
    ng = res(
        T.NODE_GROUP,
        "ng",
        {
            "instanceTypes": ["p5.48xlarge", UNKNOWN],
            "scalingConfig": {"desiredSize": UNKNOWN, "maxSize": 4.0},
            "capacityType": UNKNOWN,
            "subnetIds": UNKNOWN,
        },
    )
    assert opened(ng) == {
        "instance_types": Open(urn(ng), "instanceTypes.1"),
        "desired": Open(urn(ng), "scalingConfig.desiredSize"),
        "markets": Open(urn(ng), "capacityType"),
        "subnet_ids": Open(urn(ng), "subnetIds"),
    }
    # Only the desired size unknown: the maximum stays decided.
    only_desired = res(T.NODE_GROUP, "d", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": UNKNOWN}})
    assert opened(only_desired) == {"desired": Open(urn(only_desired), "scalingConfig.desiredSize")}
    whole = res(T.NODE_GROUP, "w", {"instanceTypes": ["g5.xlarge"], "scalingConfig": UNKNOWN})
    assert opened(whole) == {
        "desired": Open(urn(whole), "scalingConfig"),
        "max_size": Open(urn(whole), "scalingConfig"),
    }
    odd = res(T.NODE_GROUP, "odd", {"instanceTypes": ["g5.xlarge"], "capacityType": "SOMETIMES"})
    assert opened(odd) == {"markets": Open(urn(odd), "capacityType", "not an EKS capacity type")}


def test_a_value_read_through_the_template_names_the_template() -> None:
    tpl = res(T.LAUNCH_TEMPLATE, "tpl", {"instanceType": UNKNOWN})
    ng = res(T.NODE_GROUP, "ng", {"launchTemplate": {"id": UNKNOWN}}, launchTemplate=tpl)
    assert opened(tpl, ng) == {"instance_types": Open(urn(tpl), "instanceType")}
    asg = res(T.AUTOSCALING_GROUP, "asg", {"maxSize": 2.0, "launchTemplate": {"id": UNKNOWN}}, launchTemplate=tpl)
    assert opened(tpl, asg) == {"instance_types": Open(urn(tpl), "instanceType")}
    i = res(T.INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}}, launchTemplate=tpl)
    assert opened(tpl, i) == {"instance_types": Open(urn(tpl), "instanceType")}
    market_tpl = res(T.LAUNCH_TEMPLATE, "mt", {"instanceType": "p5.48xlarge", "instanceMarketOptions": UNKNOWN})
    i = res(T.INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}}, launchTemplate=market_tpl)
    assert opened(market_tpl, i) == {"markets": Open(urn(market_tpl), "instanceMarketOptions")}


def test_a_template_outside_the_program_is_open_with_its_reason() -> None:
    ng = res(T.NODE_GROUP, "ng", {"launchTemplate": {"name": "shared-gpu"}, "scalingConfig": {"maxSize": 2.0}})
    why = "launch template 'shared-gpu' is not in this program, so its instance type is unknown"
    assert opened(ng) == {"instance_types": Open(urn(ng), "launchTemplate", why)}
    i = res(T.INSTANCE, "i", {"launchTemplate": {"id": "lt-0abc"}})
    why = "launch template lt-0abc is not in this program, so its instance type is unknown"
    assert opened(i) == {"instance_types": Open(urn(i), "launchTemplate", why)}
    bare = res(T.INSTANCE, "bare", {})
    assert opened(bare) == {"instance_types": Open(urn(bare), "instanceType", "no instance type is given")}
    asg = res(T.AUTOSCALING_GROUP, "asg", {"maxSize": 2.0})
    assert opened(asg) == {
        "instance_types": Open(urn(asg), "launchTemplate", "no launch template or configuration names the type")
    }


def test_the_template_is_joined_by_its_literal_name() -> None:
    tpl = res(T.LAUNCH_TEMPLATE, "tpl", {"name": "gpu-nodes", "instanceType": "p5.48xlarge"})
    ng = res(T.NODE_GROUP, "ng", {"launchTemplate": {"name": "gpu-nodes"}, "scalingConfig": {"maxSize": 2.0}})
    pool = {p.name: p for p in fleet.pools([tpl, ng])}["ng"]
    assert (pool.launch_template, pool.instance_types, pool.open) == (urn(tpl), ("p5.48xlarge",), {})


def test_asg_fleet_and_reservation_open_values() -> None:
    tpl = res(T.LAUNCH_TEMPLATE, "tpl", {"instanceType": "g5.xlarge"})
    mip = {
        "launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateId": UNKNOWN},
            "overrides": [{"instanceType": "g5.xlarge"}, {"instanceType": UNKNOWN}],
        },
        "instancesDistribution": {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": UNKNOWN},
    }
    asg = res(
        T.AUTOSCALING_GROUP,
        "asg",
        {"maxSize": UNKNOWN, "minSize": 1.0, "mixedInstancesPolicy": mip, "vpcZoneIdentifiers": UNKNOWN},
        mixedInstancesPolicy=tpl,
    )
    dist = "mixedInstancesPolicy.instancesDistribution"
    assert opened(tpl, asg) == {
        "instance_types": Open(urn(asg), "mixedInstancesPolicy.launchTemplate.overrides.1.instanceType"),
        "max_size": Open(urn(asg), "maxSize"),
        "markets": Open(urn(asg), f"{dist}.onDemandPercentageAboveBaseCapacity"),
        "subnet_ids": Open(urn(asg), "vpcZoneIdentifiers"),
    }
    over = dict(mip, instancesDistribution={"onDemandPercentageAboveBaseCapacity": 150.0})
    asg = res(T.AUTOSCALING_GROUP, "a2", {"maxSize": 2.0, "mixedInstancesPolicy": over}, mixedInstancesPolicy=tpl)
    assert opened(tpl, asg)["markets"] == Open(urn(asg), dist, "not a valid instances distribution")
    tcs = {"totalTargetCapacity": UNKNOWN, "spotTargetCapacity": UNKNOWN}
    ec2_fleet = res(
        T.EC2_FLEET,
        "f",
        {"targetCapacitySpecification": tcs, "launchTemplateConfigs": [{"overrides": [{"instanceType": UNKNOWN}]}]},
        launchTemplateConfigs=tpl,
    )
    assert opened(tpl, ec2_fleet) == {
        "instance_types": Open(urn(ec2_fleet), "launchTemplateConfigs"),
        "max_size": Open(urn(ec2_fleet), "targetCapacitySpecification.totalTargetCapacity"),
        "markets": Open(urn(ec2_fleet), "targetCapacitySpecification.spotTargetCapacity"),
    }
    spot_fleet = res(
        T.SPOT_FLEET_REQUEST,
        "sf",
        {
            "targetCapacity": UNKNOWN,
            "onDemandTargetCapacity": UNKNOWN,
            "launchSpecifications": [{"instanceType": UNKNOWN}],
        },
    )
    assert opened(spot_fleet) == {
        "instance_types": Open(urn(spot_fleet), "launchTemplateConfigs"),
        "max_size": Open(urn(spot_fleet), "targetCapacity"),
        "markets": Open(urn(spot_fleet), "onDemandTargetCapacity"),
    }
    cr = res(T.CAPACITY_RESERVATION, "cr", {"instanceType": UNKNOWN, "instanceCount": UNKNOWN})
    assert opened(cr) == {"instance_types": Open(urn(cr), "instanceType"), "max_size": Open(urn(cr), "instanceCount")}
    cr = res(T.CAPACITY_RESERVATION, "cr2", {"instanceCount": 2.0})
    assert opened(cr) == {"instance_types": Open(urn(cr), "instanceType", "no instance type")}
