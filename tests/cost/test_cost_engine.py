"""Cost arithmetic on hand-computed cases, over plain resource dicts (what the policy pack passes)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from engine_fixtures import STACK, res

from gpucloud.cost import PricingConfigError, PricingOptions, price_resources
from gpucloud.cost.engine import UNKNOWN

LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
CR = "aws:ec2/capacityReservation:CapacityReservation"


def lines(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            i["name"],
            i["instance_type"],
            i["pricing"],
            i["quantity"],
            i["max_quantity"],
            i["monthly"],
            i["monthly_ceiling"],
        )
        for i in cost["items"]
    ]


def test_contract_keys_exactly() -> None:
    cost = price_resources(
        [res(NG, "ng", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 1.0, "maxSize": 2.0}})]
    )
    assert list(cost) == [
        "currency",
        "hours_per_month",
        "region",
        "as_of",
        "monthly",
        "monthly_ceiling",
        "ceiling_unbounded",
        "unbounded",
        "items",
        "unpriced",
        "warnings",
    ]
    assert list(cost["items"][0]) == [
        "urn", "name", "type", "instance_type", "pricing", "quantity", "max_quantity", "unit_price", "unit", "monthly",
        "monthly_ceiling", "region", "rate_source", "rate_as_of", "rate_basis",
    ]  # fmt: skip
    assert cost["currency"] == "USD" and cost["hours_per_month"] == 730


def test_mixed_instances_policy_base_2_pct_25_desired_10_is_4_on_demand_6_spot() -> None:
    lt = res(LT, "lt", {"instanceType": "g6e.12xlarge"})
    asg = res(
        ASG,
        "asg",
        {
            "minSize": 0.0,
            "desiredCapacity": 10.0,
            "maxSize": 10.0,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 2.0, "onDemandPercentageAboveBaseCapacity": 25.0},
                "launchTemplate": {"launchTemplateSpecification": {"launchTemplateId": UNKNOWN}},
            },
        },
        {"mixedInstancesPolicy": [lt["urn"]]},
    )
    cost = price_resources([lt, asg], PricingOptions(root_volumes=False))
    od = 10.49264
    spot = od * (1 - 0.60)  # g6e family spot planning midpoint: 60% off
    assert lines(cost) == [
        ("asg", "g6e.12xlarge", "on-demand", 4, 4, round(4 * od * 730, 2), round(4 * od * 730, 2)),
        ("asg", "g6e.12xlarge", "spot", 6, 6, round(6 * spot * 730, 2), round(6 * spot * 730, 2)),
    ]
    assert cost["monthly"] == pytest.approx(round(4 * od * 730, 2) + round(6 * spot * 730, 2), abs=0.005)
    assert cost["unpriced"] == []


def test_mixed_rounds_on_demand_up_and_prices_first_priced_override() -> None:
    asg = res(
        ASG,
        "asg",
        {
            "minSize": 1.0,  # no desiredCapacity: AWS starts at minSize
            "maxSize": 7.0,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 50.0},
                # p5e.48xlarge has no On-Demand price (Capacity Blocks only), so g6e.48xlarge is priced.
                "launchTemplate": {"overrides": [{"instanceType": "p5e.48xlarge"}, {"instanceType": "g6e.48xlarge"}]},
            },
        },
    )
    cost = price_resources([asg])
    # desired 1: ceil(0.5) = 1 on-demand, 0 spot; max 7: ceil(3.5) = 4 on-demand, 3 spot.
    assert [(i["pricing"], i["quantity"], i["max_quantity"], i["instance_type"]) for i in cost["items"]] == [
        ("on-demand", 1, 4, "g6e.48xlarge"),
        ("spot", 0, 3, "g6e.48xlarge"),
    ]


def test_node_group_instance_type_from_launch_template_and_root_volumes() -> None:
    lt = res(
        LT,
        "gpu-lt",
        {
            "instanceType": "p5.48xlarge",
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 500.0, "volumeType": "gp3"}}],
        },
    )
    ng = res(
        NG,
        "train",
        {"scalingConfig": {"minSize": 0.0, "desiredSize": 2.0, "maxSize": 8.0}, "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]], "scalingConfig": []},
    )
    cost = price_resources([lt, ng])
    assert lines(cost) == [
        ("train", "p5.48xlarge", "on-demand", 2, 8, round(2 * 55.04 * 730, 2), round(8 * 55.04 * 730, 2)),
        ("train root volumes (gp3)", None, "storage", 1000, 4000, 80.0, 320.0),
    ]


def test_node_group_matches_launch_template_by_dependencies_without_property_dependencies() -> None:
    lt = res(LT, "lt", {"instanceType": "g6.xlarge"})
    ng = res(NG, "ng", {"scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}, "launchTemplate": {"id": UNKNOWN}})
    ng["dependencies"] = [lt["urn"]]
    del ng["propertyDependencies"]
    cost = price_resources([lt, ng])
    assert [(i["instance_type"], i["monthly"]) for i in cost["items"]] == [("g6.xlarge", round(0.8048 * 730, 2))]


def test_spot_node_group_uses_family_estimate_and_capacity_block_uses_cb_rate() -> None:
    spot = res(
        NG,
        "spot",
        {
            "capacityType": "SPOT",
            "instanceTypes": ["p5.48xlarge"],
            "scalingConfig": {"desiredSize": 1.0, "maxSize": 2.0},
        },
    )
    lt = res(LT, "cb-lt", {"instanceType": "p5en.48xlarge", "instanceMarketOptions": {"marketType": "capacity-block"}})
    cb = res(
        NG,
        "cb",
        {
            "capacityType": "CAPACITY_BLOCK",
            "scalingConfig": {"desiredSize": 4.0, "maxSize": 4.0},
            "launchTemplate": {"id": UNKNOWN},
        },
        {"launchTemplate": [lt["urn"]]},
    )
    cost = price_resources([spot, lt, cb])
    p5_spot = 55.04 * (1 - 0.535)
    assert [(i["name"], i["pricing"], i["unit_price"], i["monthly"]) for i in cost["items"]] == [
        ("spot", "spot", round(p5_spot, 6), round(p5_spot * 730, 2)),
        ("cb", "capacity-block", 54.92, round(4 * 54.92 * 730, 2)),
    ]


def test_refreshed_spot_price_wins_over_estimate() -> None:
    from gpucloud.catalog import get_catalog
    from gpucloud.prices.book import PriceBook, load_snapshot

    book = PriceBook(
        load_snapshot(),
        get_catalog(),
        {
            "us-east-1": {
                "p5.48xlarge": {"spot_usd": 20.0, "price_date": "2026-08-02", "price_source": "ec2-spot-price-history"}
            }
        },
    )
    ng = res(
        NG,
        "s",
        {
            "capacityType": "SPOT",
            "instanceTypes": ["p5.48xlarge"],
            "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0},
        },
    )
    cost = price_resources([ng], PricingOptions(region="us-east-1"), book=book)
    assert cost["items"][0]["unit_price"] == 20.0 and cost["monthly"] == 14600.0
    assert (cost["items"][0]["rate_source"], cost["items"][0]["rate_as_of"]) == ("ec2-spot-price-history", "2026-08-02")


def test_odcr_billed_once_nodes_inside_it_not_double_counted() -> None:
    cr = res(CR, "odcr", {"instanceType": "p5.48xlarge", "instanceCount": 2.0, "availabilityZone": "us-east-1a"})
    lt = res(
        LT,
        "lt",
        {
            "instanceType": "p5.48xlarge",
            "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": UNKNOWN}},
        },
        {"capacityReservationSpecification": [cr["urn"]]},
    )
    ng = res(
        NG,
        "ng",
        {"scalingConfig": {"desiredSize": 2.0, "maxSize": 5.0}, "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]]},
    )
    cost = price_resources([cr, lt, ng])
    rate = 55.04 * 730
    assert lines(cost) == [
        ("odcr", "p5.48xlarge", "on-demand", 2, 2, round(2 * rate, 2), round(2 * rate, 2)),
        ("ng", "p5.48xlarge", "on-demand", 0, 3, 0.0, round(3 * rate, 2)),
    ]


def test_commitment_covers_count_at_stated_discount_then_family_default() -> None:
    options = PricingOptions.from_config(
        {
            "commitments": [
                {"match": "p5", "kind": "ri", "term": "1y", "discount": 0.4, "count": 1},
                {"match": "g6e.12xlarge", "term": "3y"},
            ]
        }
    )
    p5 = res(NG, "p5", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"desiredSize": 2.0, "maxSize": 3.0}})
    g6e = res(NG, "g6e", {"instanceTypes": ["g6e.12xlarge"], "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}})
    cost = price_resources([p5, g6e], options)
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"]) for i in cost["items"]] == [
        ("p5", "reserved", 1, 1, round(55.04 * 0.6, 6)),
        ("p5", "on-demand", 1, 2, 55.04),
        ("g6e", "reserved", 1, 1, round(10.49264 * (1 - 0.635), 6)),  # catalog 3y default for g6e
    ]


def test_compute_savings_plan_sits_five_points_below_family_default() -> None:
    options = PricingOptions.from_config(
        {"commitments": [{"match": "p5", "kind": "compute-savings-plan", "term": "1y"}]}
    )
    ng = res(NG, "p5", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}})
    assert price_resources([ng], options)["items"][0]["unit_price"] == round(55.04 * (1 - 0.34), 6)


def test_pricing_config_errors_name_every_field() -> None:
    with pytest.raises(PricingConfigError) as err:
        PricingOptions.from_config(
            {"commitments": [{"match": "p5", "kind": "lease", "term": "5y", "discount": 1.5, "count": 0}]}
        )
    message = str(err.value)
    for fragment in (
        "commitments[0].kind: 'lease'",
        "commitments[0].term: '5y'",
        "commitments[0].discount: 1.5",
        "commitments[0].count: 0",
    ):
        assert fragment in message


def test_fsx_eks_nat_eip_endpoint_kms() -> None:
    resources = [
        res(
            "aws:fsx/lustreFileSystem:LustreFileSystem",
            "p2",
            {"storageCapacity": 2400.0, "deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": 250.0},
        ),
        res(
            "aws:fsx/lustreFileSystem:LustreFileSystem",
            "scratch",
            {"storageCapacity": 1200.0, "deploymentType": "SCRATCH_2"},
        ),
        res("aws:eks/cluster:Cluster", "std", {"version": "1.34", "upgradePolicy": {"supportType": "STANDARD"}}),
        res("aws:eks/cluster:Cluster", "ext", {"version": "1.29"}),
        res("aws:ec2/natGateway:NatGateway", "nat", {"subnetId": "s"}),
        res("aws:ec2/eip:Eip", "ip", {"domain": "vpc"}),
        res("aws:ec2/vpcEndpoint:VpcEndpoint", "ssm", {"vpcEndpointType": "Interface", "subnetIds": ["a", "b", "c"]}),
        res("aws:ec2/vpcEndpoint:VpcEndpoint", "s3", {"vpcEndpointType": "Gateway"}),
        res("aws:kms/key:Key", "key", {}),
    ]
    cost = price_resources(resources, PricingOptions(as_of=date(2026, 8, 1)))
    assert [(i["name"], i["pricing"], i["quantity"], i["unit"], i["monthly"]) for i in cost["items"]] == [
        ("p2", "storage", 2400, "GiB-month", 504.0),
        ("scratch", "storage", 1200, "GiB-month", 168.0),
        ("std", "fixed", 1, "hour", 73.0),
        ("ext", "fixed", 1, "hour", 438.0),
        ("nat", "fixed", 1, "hour", 32.85),
        ("ip", "fixed", 1, "hour", 3.65),
        ("ssm", "fixed", 3, "hour", 21.9),
        ("key", "fixed", 1, "month", 1.0),
    ]
    assert cost["unpriced"] == [
        {
            "urn": f"{STACK}$aws:ec2/natGateway:NatGateway::nat",
            "reason": "usage-billed: NAT data processing ($0.045/GB in us-east-1) depends on traffic",
            "unit": "GB",
        },
        {
            "urn": f"{STACK}$aws:ec2/vpcEndpoint:VpcEndpoint::ssm",
            "reason": "usage-billed: interface endpoint data processing is billed per GB",
            "unit": "GB",
        },
        {
            "urn": f"{STACK}$aws:kms/key:Key::key",
            "reason": "usage-billed: KMS requests beyond the free tier are billed per 10,000 requests",
            "unit": "requests",
        },
    ]


def test_eks_default_support_type_is_extended_only_after_standard_support_ends() -> None:
    cluster = res("aws:eks/cluster:Cluster", "c", {"version": "1.33"})
    before = price_resources([cluster], PricingOptions(as_of=date(2026, 7, 1)))
    after = price_resources([cluster], PricingOptions(as_of=date(2026, 8, 1)))
    assert (before["monthly"], after["monthly"]) == (73.0, 438.0)


def test_unknowns_and_unpriceable_go_to_unpriced_not_a_crash() -> None:
    resources = [
        res(
            NG,
            "unknown-size",
            {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"desiredSize": UNKNOWN, "maxSize": 4.0}},
        ),
        res(
            NG,
            "external-lt",
            {"scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}, "launchTemplate": {"id": "lt-0123456789abcdef0"}},
        ),
        res(
            NG,
            "no-od-price",
            {"instanceTypes": ["p5e.48xlarge"], "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}},
        ),
        res("aws:ec2/instance:Instance", "cpu", {"instanceType": "x2iedn.32xlarge"}),
        res("aws:s3/bucket:Bucket", "data", {}),
        res("aws:rds/instance:Instance", "db", {"instanceClass": "db.r6g.large"}),
        res(
            "aws:fsx/lustreFileSystem:LustreFileSystem",
            "p2",
            {"storageCapacity": 2400.0, "deploymentType": "PERSISTENT_2"},
        ),
        res("aws:iam/role:Role", "free", {}),
        res("aws:ec2/securityGroup:SecurityGroup", "sg", {}),
        {
            "urn": "urn:x::gpucloud:pools:GpuNodePool::pool",
            "type": "gpucloud:pools:GpuNodePool",
            "name": "pool",
            "inputs": {},
        },
    ]
    cost = price_resources(resources)
    assert cost["items"] == []
    reasons = {u["urn"].rsplit("::", 1)[-1]: u["reason"] for u in cost["unpriced"]}
    assert set(reasons) == {"unknown-size", "external-lt", "no-od-price", "cpu", "data", "db", "p2"}
    assert reasons["unknown-size"] == "scalingConfig.desiredSize/maxSize are unknown at preview"
    assert "lt-0123456789abcdef0 is not in this program" in reasons["external-lt"]
    assert "p5e.48xlarge in us-east-1: no On-Demand SKU" in reasons["no-od-price"]
    assert "gpucloud prices refresh --region us-east-1 --types x2iedn.32xlarge" in reasons["cpu"]
    assert reasons["data"].startswith("usage-billed: S3")
    assert reasons["db"] == "billed, no rate in gpucloud: RDS instances are billed per instance-hour plus storage"
    assert reasons["p2"] == "PERSISTENT_2 needs perUnitStorageThroughput (MB/s/TiB) to be priced"


def test_node_group_without_types_or_template_gets_eks_default_t3_medium() -> None:
    cost = price_resources([res(NG, "sys", {"scalingConfig": {"desiredSize": 2.0, "maxSize": 3.0}})])
    assert lines(cost) == [
        ("sys", "t3.medium", "on-demand", 2, 3, round(2 * 0.0416 * 730, 2), round(3 * 0.0416 * 730, 2))
    ]


def test_plain_asg_with_spot_launch_template_and_instance() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}})
    asg = res(
        ASG,
        "asg",
        {"desiredCapacity": 3.0, "maxSize": 6.0, "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]]},
    )
    inst = res(
        "aws:ec2/instance:Instance",
        "box",
        {"instanceType": "m7i.xlarge", "rootBlockDevice": {"volumeSize": 100.0, "volumeType": "gp3"}},
    )
    cost = price_resources([lt, asg, inst])
    g5_spot = 1.006 * (1 - 0.585)
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["monthly"]) for i in cost["items"]] == [
        ("asg", "spot", 3, 6, round(3 * g5_spot * 730, 2)),
        ("box", "on-demand", 1, 1, round(0.2016 * 730, 2)),
        ("box root volume (gp3)", "storage", 100, 100, 8.0),
    ]


FLEET = "aws:ec2/fleet:Fleet"
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"


def test_ec2_fleet_prices_its_target_at_the_dearest_named_type_per_market() -> None:
    fleet = res(
        FLEET,
        "fleet",
        {
            "targetCapacitySpecification": {
                "totalTargetCapacity": 10.0,
                "onDemandTargetCapacity": 2.0,
                "defaultTargetCapacityType": "spot",
            },
            "launchTemplateConfigs": [{"overrides": [{"instanceType": "g6e.xlarge"}, {"instanceType": "p5.48xlarge"}]}],
        },
    )
    cost = price_resources([fleet])
    assert [(i["pricing"], i["quantity"], i["max_quantity"], i["instance_type"]) for i in cost["items"]] == [
        ("on-demand", 2, 2, "p5.48xlarge"),
        ("spot", 8, 8, "p5.48xlarge"),
    ]


def test_ec2_fleet_falls_back_to_the_template_type_and_skips_attribute_based_overrides() -> None:
    lt = res(LT, "lt", {"instanceType": "g6e.12xlarge"})
    fleet = res(
        FLEET,
        "fleet",
        {"targetCapacitySpecification": {"totalTargetCapacity": 3.0}, "launchTemplateConfigs": [{"overrides": []}]},
        {"launchTemplateConfigs": [lt["urn"]]},
    )
    cost = price_resources([lt, fleet])
    assert [(i["pricing"], i["quantity"], i["instance_type"]) for i in cost["items"]] == [
        ("on-demand", 3, "g6e.12xlarge")
    ]
    abs_fleet = res(
        FLEET,
        "abs",
        {
            "targetCapacitySpecification": {"totalTargetCapacity": 3.0},
            "launchTemplateConfigs": [{"overrides": [{"instanceRequirements": {"acceleratorNames": ["h100"]}}]}],
        },
    )
    cost = price_resources([abs_fleet])
    assert cost["items"] == []
    assert [u["reason"] for u in cost["unpriced"]] == [
        "instance type unknown: overrides use instanceRequirements (types are chosen at launch)"
    ]


def test_spot_fleet_splits_on_demand_and_spot_targets() -> None:
    sfr = res(
        SPOT_FLEET,
        "sfr",
        {
            "targetCapacity": 4.0,
            "onDemandTargetCapacity": 1.0,
            "launchSpecifications": [{"instanceType": "p5.48xlarge"}],
        },
    )
    cost = price_resources([sfr])
    assert [(i["pricing"], i["quantity"], i["instance_type"]) for i in cost["items"]] == [
        ("on-demand", 1, "p5.48xlarge"),
        ("spot", 3, "p5.48xlarge"),
    ]
    unknown = res(SPOT_FLEET, "u", {"targetCapacity": UNKNOWN})
    assert [u["reason"] for u in price_resources([unknown])["unpriced"]] == ["targetCapacity is unknown at preview"]
