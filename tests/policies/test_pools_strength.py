"""policies/gpucloud_policies/pools.py: what a GPU pool is made of, per path, value by value.

Each test builds the resources as the engine shows them to a stack policy (proxied props, property dependencies
by URN) and pins the pool's exact instance types, size, purchase options, subnets and GPU figures, so a changed
join, a flipped condition or a dropped fallback in pools.py fails here (issue 13: mutation score).
"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpucloud.guard.harness import Res, options, stack_messages
from gpucloud.policies.gpucloud_policies.base import UnknownValueError
from gpucloud.policies.gpucloud_policies.pools import (
    SUBNET,
    Pool,
    efa_capable,
    efa_max,
    node_count,
    pools,
)

UNKNOWN = UNKNOWN_STRING_VALUE
NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
LC = "aws:ec2/launchConfiguration:LaunchConfiguration"
ASG = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"
SPOT_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
FLEET = "aws:ec2/fleet:Fleet"
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"


def res(type_: str, name: str, props: dict[str, Any], **deps: PolicyResource) -> PolicyResource:
    r = PolicyResource(
        type_,
        unknown_checking_proxy(props),
        f"urn:pulumi:dev::proj::{type_}::{name}",
        name,
        options(),
        None,
        None,
        list(deps.values()),
        {},
    )
    r.property_dependencies = {prop: [d] for prop, d in deps.items()}
    return r


def one(resources: list[PolicyResource]) -> Pool:
    found = pools(resources)
    assert len(found) == 1
    return found[0]


def p5_template(name: str = "tpl", **props: Any) -> PolicyResource:
    return res(LT, name, {"instanceType": "p5.48xlarge", **props})


def test_only_resources_that_start_nodes_are_pools() -> None:
    tpl = p5_template()
    subnet = res(SUBNET, "s", {"availabilityZone": "us-east-1a"})
    nodes = [
        res(NG, "ng", {"instanceTypes": ["g6.12xlarge"], "scalingConfig": {"maxSize": 3}}),
        res(ASG, "asg", {"maxSize": 2}, launchTemplate=tpl),
        res(FLEET, "fleet", {"targetCapacitySpecification": {"totalTargetCapacity": 4}}, launchTemplateConfigs=tpl),
        res(SPOT_FLEET, "sf", {"targetCapacity": 5, "launchSpecifications": [{"instanceType": "g5.xlarge"}]}),
        res(INSTANCE, "i", {"instanceType": "p4d.24xlarge"}),
        res(SPOT_REQUEST, "sr", {"instanceType": "g5.xlarge"}),
        res(RESERVATION, "cr", {"instanceType": "p5.48xlarge", "instanceCount": 6}),
    ]
    found = pools([tpl, subnet, *nodes])
    assert [(p.resource.name, p.instance_types, p.max_size) for p in found] == [
        ("ng", ["g6.12xlarge"], 3),
        ("asg", ["p5.48xlarge"], 2),
        ("fleet", ["p5.48xlarge"], 4),
        ("sf", ["g5.xlarge"], 5),
        ("i", ["p4d.24xlarge"], 1),
        ("sr", ["g5.xlarge"], 1),
        ("cr", ["p5.48xlarge"], 6),
    ]
    assert [p.launch_template.name if p.launch_template else None for p in found] == [
        None, "tpl", "tpl", None, None, None, None,
    ]  # fmt: skip
    assert [p.markets for p in found] == [
        ["on_demand"], ["on_demand"], ["on_demand"], ["spot"], ["on_demand"], ["spot"], ["on_demand"],
    ]  # fmt: skip


def test_the_template_decides_a_node_groups_types_even_when_its_own_are_unknown() -> None:
    tpl = p5_template()
    pool = one([tpl, res(NG, "ng", {"instanceTypes": [UNKNOWN], "scalingConfig": {"maxSize": 2}}, launchTemplate=tpl)])
    assert pool.error is None and pool.instance_types == ["p5.48xlarge"] and pool.known() is pool
    # A template that names no type leaves the node group's own types in charge.
    bare = res(LT, "bare", {})
    pool = one([bare, res(NG, "ng", {"instanceTypes": ["g6.12xlarge"]}, launchTemplate=bare)])
    assert pool.instance_types == ["g6.12xlarge"] and pool.launch_template is bare and pool.max_size is None


def test_an_asg_keeps_its_own_overrides_over_the_templates_type() -> None:
    tpl = p5_template()
    asg = res(
        ASG,
        "asg",
        {"maxSize": 2, "mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceType": "g6.12xlarge"}]}}},
        mixedInstancesPolicy=tpl,
    )
    pool = one([tpl, asg])
    assert pool.instance_types == ["g6.12xlarge"] and pool.launch_template is tpl


def test_an_asg_without_a_template_takes_its_launch_configuration() -> None:
    lc = res(LC, "lc", {"instanceType": "p4d.24xlarge", "spotPrice": "12.5"})
    pool = one([lc, res(ASG, "asg", {"maxSize": 3}, launchConfiguration=lc)])
    assert pool.instance_types == ["p4d.24xlarge"] and pool.markets == ["spot"] and pool.launch_template is None
    assert pool.max_gpus == 24 and pool.spot_gpus == 24
    # A node group does not read a launch configuration.
    ng = res(NG, "ng", {"instanceTypes": ["g5.xlarge"]}, launchConfiguration=lc)
    assert one([lc, ng]).markets == ["on_demand"] and one([lc, ng]).instance_types == ["g5.xlarge"]


def test_purchase_options_come_from_the_template_only_where_the_pool_has_none() -> None:
    spot_tpl = p5_template(instanceMarketOptions={"marketType": "spot"})
    assert one([spot_tpl, res(INSTANCE, "i", {}, launchTemplate=spot_tpl)]).markets == ["spot"]
    assert one([spot_tpl, res(ASG, "asg", {"maxSize": 1}, launchTemplate=spot_tpl)]).markets == ["spot"]
    # The pool's own choice wins: a node group's capacityType, an instance's own market options.
    ng = res(NG, "ng", {"scalingConfig": {"maxSize": 1}}, launchTemplate=spot_tpl)
    assert one([spot_tpl, ng]).markets == ["on_demand"]
    block_tpl = p5_template("block", instanceMarketOptions={"marketType": "capacity-block"})
    own = res(INSTANCE, "i", {"instanceMarketOptions": {"marketType": "spot"}}, launchTemplate=block_tpl)
    assert one([block_tpl, own]).markets == ["spot"]
    # Neither says: on-demand.
    bare = res(LT, "bare", {"instanceType": "p5.48xlarge"})
    assert one([bare, res(INSTANCE, "i", {}, launchTemplate=bare)]).markets == ["on_demand"]
    assert one([bare, res(ASG, "asg", {"maxSize": 1}, launchTemplate=bare)]).markets == ["on_demand"]


def test_subnets_are_joined_by_the_property_each_path_uses() -> None:
    a = res(SUBNET, "a", {"availabilityZone": "us-east-1a"})
    cases = [
        (res(NG, "ng", {"instanceTypes": ["g5.xlarge"], "subnetIds": [UNKNOWN, "subnet-1"]}, subnetIds=a), 2),
        (res(ASG, "asg", {"maxSize": 1, "vpcZoneIdentifiers": [UNKNOWN]}, vpcZoneIdentifiers=a), 1),
        (res(INSTANCE, "i", {"instanceType": "g5.xlarge", "subnetId": UNKNOWN}, subnetId=a), 0),
        (res(SPOT_REQUEST, "sr", {"instanceType": "g5.xlarge"}, subnetId=a), 0),
    ]
    for r, literal in cases:
        pool = one([a, r])
        assert (r.name, [s.name for s in pool.subnets], pool.subnet_count) == (r.name, ["a"], literal)
    # A capacity reservation has no subnets (CreateCapacityReservation takes an availability zone): nothing a
    # reservation's resource might pass as subnetIds is joined.
    pool = one([a, res(RESERVATION, "cr", {"instanceType": "g5.xlarge", "subnetIds": [UNKNOWN]}, subnetIds=a)])
    assert (pool.subnets, pool.subnet_count) == ([], 0)
    # The wrong property for the path joins nothing.
    pool = one([a, res(ASG, "asg", {"maxSize": 1, "subnetIds": ["x"]}, subnetIds=a)])
    assert pool.subnets == [] and pool.subnet_count == 0


def test_gpu_figures_of_a_pool() -> None:
    ng = res(NG, "ng", {"instanceTypes": ["g5.xlarge", "g6.12xlarge"], "scalingConfig": {"maxSize": 3}})
    pool = one([ng])
    assert (pool.gpus_per_node, pool.is_gpu, pool.max_gpus, pool.spot_gpus) == (4, True, 12, 0)
    cpu = one([res(NG, "cpu", {"instanceTypes": ["m5.large"], "scalingConfig": {"maxSize": 3}})])
    assert (cpu.gpus_per_node, cpu.is_gpu, cpu.max_gpus) == (0, False, 0)
    # No instance types and no template: EKS launches its default, t3.medium (the fleet's reading).
    empty = one([res(NG, "empty", {"scalingConfig": {"maxSize": 3}})])
    assert (empty.instance_types, empty.gpus_per_node, empty.is_gpu) == (["t3.medium"], 0, False)
    spot_props = {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 2}, "capacityType": "SPOT"}
    spot = one([res(NG, "spot", spot_props)])
    assert (spot.markets, spot.max_gpus, spot.spot_gpus) == (["spot"], 16, 16)
    # Mixed: 1 on-demand node, then half of the other 4 on spot = 2 spot nodes of 8 GPUs.
    tpl = p5_template()
    mixed = res(
        ASG,
        "mixed",
        {
            "maxSize": 5,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 1, "onDemandPercentageAboveBaseCapacity": 50}
            },
        },
        mixedInstancesPolicy=tpl,
    )
    pool = one([tpl, mixed])
    assert (pool.markets, pool.max_gpus, pool.spot_gpus) == (["on_demand", "spot"], 40, 16)
    assert Pool(resource=ng, instance_types=["p5.48xlarge"], max_size=None, launch_template=None).max_gpus == 0
    none_size = Pool(resource=mixed, instance_types=["p5.48xlarge"], max_size=None, launch_template=None)
    assert none_size.spot_gpus == 0


def test_efa_interfaces_come_from_the_template() -> None:
    tpl = p5_template(
        networkInterfaces=[
            {"interfaceType": "efa", "networkCardIndex": 0},
            {"interfaceType": "interface"},
            {"interfaceType": "efa-only", "networkCardIndex": 1},
            "not-a-map",
        ]
    )
    pool = one([tpl, res(NG, "ng", {"scalingConfig": {"maxSize": 2}}, launchTemplate=tpl)])
    assert pool.efa_interfaces() == [
        {"interfaceType": "efa", "networkCardIndex": 0},
        {"interfaceType": "efa-only", "networkCardIndex": 1},
    ]
    assert one([res(NG, "ng", {"instanceTypes": ["p5.48xlarge"]})]).efa_interfaces() == []


def test_an_unknown_value_makes_only_its_pool_undecided() -> None:
    tpl = res(LT, "tpl", {"instanceType": UNKNOWN})
    undecided = res(NG, "ng", {"scalingConfig": {"maxSize": 2}, "capacityType": "SPOT"}, launchTemplate=tpl)
    fine = res(NG, "fine", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"maxSize": 1}})
    bad, good = pools([tpl, undecided, fine])
    assert (bad.instance_types, bad.max_size, bad.launch_template, bad.markets) == ([], None, tpl, [])
    with pytest.raises(UnknownValueError) as caught:
        bad.known()
    # Read through the template, so the field names the template.
    assert caught.value.props == ["tpl", "instanceType"]
    assert bad.known_markets() == ["spot"]
    assert good.error is None and good.known_markets() == ["on_demand"] and good.known() is good


def test_known_markets_of_an_undecided_pool_read_the_template_or_default_to_on_demand() -> None:
    spot_tpl = p5_template(instanceMarketOptions={"marketType": "spot"})
    asg = res(ASG, "asg", {"maxSize": UNKNOWN}, launchTemplate=spot_tpl)
    pool = one([spot_tpl, asg])
    assert pool.error is not None and pool.known_markets() == ["spot"]
    lc = res(LC, "lc", {"instanceType": "p5.48xlarge", "spotPrice": "3"})
    pool = one([lc, res(ASG, "asg", {"maxSize": UNKNOWN}, launchConfiguration=lc)])
    assert pool.known_markets() == ["spot"]
    pool = one([res(ASG, "asg", {"maxSize": UNKNOWN})])
    assert pool.known_markets() == ["on_demand"]
    unknown_market = res(NG, "ng", {"instanceTypes": [UNKNOWN], "capacityType": UNKNOWN})
    with pytest.raises(UnknownValueError):
        one([unknown_market]).known_markets()


def test_efa_capability_and_interface_count_from_the_catalog() -> None:
    assert [efa_capable(t) for t in ("p5.48xlarge", "g6.12xlarge", "g5.xlarge", "m5.large", "zz.huge")] == [
        True, True, False, False, False,
    ]  # fmt: skip
    assert [efa_max(t) for t in ("p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "zz.huge")] == [32, 4, 0, 0]


def test_node_count() -> None:
    assert [node_count(v) for v in (3.0, "4", 2.7, None, "many", True)] == [3, 4, 2, 0, 0, 0]


def test_an_instance_in_a_subnet_created_alongside_is_decided() -> None:
    # Bug found by the mutation run: the instance's subnetId (unknown until the subnet exists) was read for a
    # subnet count, so every such instance was undecided for every pool policy (blocked under prod's config).
    subnet = Res(SUBNET, "a", {"availabilityZone": "us-east-1a"})
    big = Res(INSTANCE, "big", {"instanceType": "p5.48xlarge", "subnetId": UNKNOWN}, {"subnetId": ["a"]})
    cpu = Res(INSTANCE, "cpu", {"instanceType": "m5.large", "subnetId": UNKNOWN}, {"subnetId": ["a"]})
    found = stack_messages("gpu-count-cap", [subnet, cpu, big], {"maxGpusPerPool": 4, "unknowns": "block"})
    assert [name for name, _ in found] == ["big"] and "cannot be decided" not in found[0][1]


def test_joins_keep_only_the_resource_type_each_property_names() -> None:
    # Property dependencies name every resource an input was computed from, not only the template or subnet.
    sg = res("aws:ec2/securityGroup:SecurityGroup", "sg", {})
    vpc = res("aws:ec2/vpc:Vpc", "vpc", {})
    ng = res(NG, "ng", {"instanceTypes": ["g5.xlarge"], "subnetIds": [UNKNOWN]}, launchTemplate=sg, subnetIds=vpc)
    pool = one([sg, vpc, ng])
    assert pool.launch_template is None and pool.subnets == [] and pool.subnet_count == 1
    # An ASG joined to no template or configuration cannot say what it launches: undecided, on-demand.
    asg = one([sg, res(ASG, "asg", {"maxSize": 1}, launchConfiguration=sg)])
    assert asg.instance_types == [] and asg.markets == [] and asg.known_markets() == ["on_demand"]
    assert asg.error is not None and asg.error.props == ["launchTemplate"]


def test_an_instance_with_other_inputs_still_buys_as_its_template_says() -> None:
    spot_tpl = p5_template(instanceMarketOptions={"marketType": "spot"})
    instance = res(INSTANCE, "i", {"tags": {"Team": "ml"}, "ebsOptimized": True}, launchTemplate=spot_tpl)
    assert one([spot_tpl, instance]).markets == ["spot"]


def test_a_node_group_joins_its_template_by_literal_name() -> None:
    # Pulumi programs pass the template's name (launchTemplate={"name": tpl.name}); the fleet joins by it.
    tpl = res(LT, "tpl", {"name": "gpu-nodes", "instanceType": "p5.48xlarge"})
    ng = res(NG, "ng", {"launchTemplate": {"name": "gpu-nodes"}, "scalingConfig": {"maxSize": 2}})
    pool = one([tpl, ng])
    assert (pool.launch_template, pool.instance_types, pool.max_gpus) == (tpl, ["p5.48xlarge"], 16)


def test_an_unknown_desired_size_leaves_the_max_size_decided() -> None:
    ng = res(NG, "ng", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"desiredSize": UNKNOWN, "maxSize": 3}})
    pool = one([ng])
    assert pool.known() is pool and (pool.max_size, pool.max_gpus) == (3, 24)


def test_undecided_fields_name_where_they_were_read() -> None:
    cases = [
        (res(NG, "ng", {"instanceTypes": ["g5.xlarge", UNKNOWN]}), ["instanceTypes", "1"]),
        (res(NG, "ng", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"maxSize": UNKNOWN}}),
         ["scalingConfig", "maxSize"]),
        (res(ASG, "asg", {"maxSize": 1, "vpcZoneIdentifiers": UNKNOWN}, launchTemplate=p5_template()),
         ["vpcZoneIdentifiers"]),
        (res(INSTANCE, "i", {"instanceMarketOptions": {"marketType": UNKNOWN}}, launchTemplate=p5_template()),
         ["instanceMarketOptions", "marketType"]),
    ]  # fmt: skip
    for r, field_ in cases:
        with pytest.raises(UnknownValueError) as caught:
            one([d for d in r.dependencies] + [r]).known()
        assert caught.value.props == field_
    # Read through the template: named after it, as via() names it.
    tpl = p5_template(name="spot-tpl", instanceMarketOptions={"marketType": UNKNOWN})
    pool = one([tpl, res(INSTANCE, "i", {}, launchTemplate=tpl)])
    with pytest.raises(UnknownValueError) as caught:
        pool.known_markets()
    assert caught.value.props == ["spot-tpl", "instanceMarketOptions", "marketType"]
    # A template outside the program: the reason is the join's.
    pool = one([res(NG, "ext", {"launchTemplate": {"id": "lt-0abc"}, "scalingConfig": {"maxSize": 2}})])
    assert pool.error is not None and pool.error.props == ["launchTemplate"]
    assert pool.error.message == "launch template lt-0abc is not in this program, so its instance type is unknown"


def test_spot_share_of_fleets_from_the_market_split() -> None:
    tpl = p5_template()
    spot_default = {"totalTargetCapacity": 4, "onDemandTargetCapacity": 1, "defaultTargetCapacityType": "spot"}
    fleet = one([tpl, res(FLEET, "f", {"targetCapacitySpecification": spot_default}, launchTemplateConfigs=tpl)])
    assert (fleet.markets, fleet.max_gpus, fleet.spot_gpus) == (["on_demand", "spot"], 32, 24)
    od_default = {"totalTargetCapacity": 4, "spotTargetCapacity": 1}
    fleet = one([tpl, res(FLEET, "f", {"targetCapacitySpecification": od_default}, launchTemplateConfigs=tpl)])
    assert (fleet.markets, fleet.spot_gpus) == (["on_demand", "spot"], 8)
    sf = one(
        [tpl, res(SPOT_FLEET, "sf", {"targetCapacity": 5, "onDemandTargetCapacity": 2}, launchTemplateConfigs=tpl)]
    )
    assert (sf.markets, sf.max_gpus, sf.spot_gpus) == (["on_demand", "spot"], 40, 24)
    assert one([tpl, res(INSTANCE, "i", {}, launchTemplate=tpl)]).spot_gpus == 0
