"""Mutation strength of the engine's core (gpucloud/cost/engine.py up to `_Pricer._mixed`): the value helpers,
region choice, bookkeeping, rates, fleets, commitments, references and the group handlers. Every expected figure
is recomputed here from the shipped snapshot / rate table or worked out by hand in a comment."""

from __future__ import annotations

import json
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from engine_fixtures import SNAP, STACK, US, od, res, spot_estimate

from gpucloud.catalog import get_catalog
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.cost.pricer import UNKNOWN, _count, _num
from gpucloud.fleet.selection import quantity as _quantity

NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
LC = "aws:ec2/launchConfiguration:LaunchConfiguration"
CR = "aws:ec2/capacityReservation:CapacityReservation"
PROVIDER = "pulumi:providers:aws"
SHIPPED_RATES: dict[str, Any] = json.loads(
    resources.files("gpucloud.prices").joinpath("service_rates.json").read_text()
)


def provider(name: str, region: Any) -> dict[str, Any]:
    return {"urn": f"{STACK}${PROVIDER}::{name}", "type": PROVIDER, "name": name, "custom": True,
            "inputs": {} if region is None else {"region": region}}  # fmt: skip


def ng(name: str, itype: str, desired: float = 1.0, maximum: float = 1.0, **extra: Any) -> dict[str, Any]:
    return res(NG, name, {"instanceTypes": [itype], "scalingConfig": {"desiredSize": desired, "maxSize": maximum},
                          **extra})  # fmt: skip


def rows(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (i["name"], i["instance_type"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"])
        for i in cost["items"]
    ]


def reasons(cost: dict[str, Any]) -> list[str]:
    return [u["reason"] for u in cost["unpriced"]]


# --- module helpers ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, None),  # a bool is not a quantity, even though it is an int
        (0, 0.0),
        (0.5, 0.5),
        (2, 2.0),
        (-1, None),
        (float("inf"), None),
        ("0", 0.0),
        ("0.5", 0.5),
        ("-3", None),
        ("inf", None),
        ("0Gi", 0.0),
        ("0.5Gi", 2.0**29),  # half a gibibyte
        ("512Gi", 512 * 2.0**30),
        ("1000m", 1.0),  # 1000 millicores
        ("-1Gi", None),
        ("lots", None),
        ("xGi", None),
    ],
)
def test_quantity_parses_kubernetes_quantities(value: Any, expected: float | None) -> None:
    got = _quantity(value)
    assert got == expected
    if expected is not None:
        assert isinstance(got, float)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, None), (0.0, 0), (2.6, 3), ("3", 3), ("3.0", 3), ("abc", None), (-1.0, None), (float("inf"), None),
     (None, None), (UNKNOWN, None), ([1], None)],
)  # fmt: skip
def test_count_reads_whole_non_negative_sizes(value: Any, expected: int | None) -> None:
    got = _count(value)
    assert got == expected and type(got) is type(expected)


def test_num_keeps_whole_numbers_integers() -> None:
    assert [(_num(v), type(_num(v))) for v in (2.0, 3, 2.5)] == [(2, int), (3, int), (2.5, float)]


def test_region_of_the_default_provider_wins_over_an_explicit_one() -> None:
    # The default provider is listed first; an explicit provider in another region must not override it.
    cost = price_resources([provider("default_7_0_0", "us-west-2"), provider("eu", "eu-west-1"), ng("n", "g5.xlarge")])
    assert (cost["region"], cost["warnings"]) == ("us-west-2", [])


def test_region_of_the_only_explicit_provider_and_skipped_regions() -> None:
    # A default provider without a region (or with an unknown or empty one) does not count; the only explicit
    # provider with a region names it.
    for default in (None, UNKNOWN, ""):
        cost = price_resources([provider("default_7_0_0", default), provider("gpu", "us-west-2"), ng("n", "g5.xlarge")])
        assert (cost["region"], cost["warnings"]) == ("us-west-2", [])


def test_two_explicit_providers_in_different_regions_name_no_region() -> None:
    cost = price_resources([provider("a", "us-west-2"), provider("b", "eu-west-1"), ng("n", "g5.xlarge")])
    assert cost["region"] == "us-east-1"
    assert cost["warnings"][0].startswith("the plan names no AWS region")
    same = price_resources([provider("a", "us-west-2"), provider("b", "us-west-2"), ng("n", "g5.xlarge")])
    assert (same["region"], same["warnings"]) == ("us-west-2", [])


# --- commitments -------------------------------------------------------------------------------------------------


def test_commitment_on_a_type_outside_the_catalog_without_a_discount_costs_on_demand() -> None:
    # m7i.xlarge is priced from the CPU rate table and has no catalog family figure: 0 % off.
    options = PricingOptions.from_config({"commitments": [{"match": "m7i", "kind": "ri", "term": "1y"}]})
    cost = price_resources(
        [ng("sys", "m7i.xlarge")], PricingOptions(commitments=options.commitments, region="us-east-1")
    )
    assert rows(cost) == [("sys", "m7i.xlarge", "reserved", 1, 1, 0.2016)]


# --- mixed instances policies ------------------------------------------------------------------------------------


def mixed(name: str, desired: float, maximum: float, dist: dict[str, Any] | None, itype: str = "g5.xlarge") -> Any:
    policy: dict[str, Any] = {"launchTemplate": {"overrides": [{"instanceType": itype}]}}
    if dist is not None:
        policy["instancesDistribution"] = dist
    return res(ASG, name, {"desiredCapacity": desired, "maxSize": maximum, "mixedInstancesPolicy": policy})


def test_mixed_base_defaults_to_zero_and_percentage_to_100() -> None:
    # No onDemandBaseCapacity: base 0, so 0 % above base puts both desired nodes on spot.
    all_spot = price_resources([mixed("s", 2.0, 2.0, {"onDemandPercentageAboveBaseCapacity": 0.0})], US)
    assert rows(all_spot) == [("s", "g5.xlarge", "spot", 2, 2, spot_estimate("g5.xlarge"))]
    # No distribution at all: base 0 and 100 % On-Demand.
    all_od = price_resources([mixed("o", 2.0, 3.0, None)], US)
    assert rows(all_od) == [("o", "g5.xlarge", "on-demand", 2, 3, od("g5.xlarge"))]


def test_mixed_percentage_at_100_is_accepted_above_or_unknown_is_not() -> None:
    full = price_resources([mixed("f", 1.0, 1.0, {"onDemandPercentageAboveBaseCapacity": 100.0})], US)
    assert rows(full) == [("f", "g5.xlarge", "on-demand", 1, 1, od("g5.xlarge"))]
    bad = [
        mixed("p", 1.0, 1.0, {"onDemandPercentageAboveBaseCapacity": 101.0}),
        mixed("b", 1.0, 1.0, {"onDemandBaseCapacity": UNKNOWN, "onDemandPercentageAboveBaseCapacity": 50.0}),
        mixed("u", 1.0, 1.0, {"onDemandBaseCapacity": 1.0, "onDemandPercentageAboveBaseCapacity": UNKNOWN}),
    ]
    cost = price_resources(bad, US)
    assert cost["items"] == []
    assert reasons(cost) == ["instancesDistribution base/percentage are unknown at preview or out of range"] * 3


def test_mixed_skips_unknown_and_attribute_based_overrides_without_a_warning() -> None:
    # An unknown type or an instanceRequirements override is passed over silently; the next typed one is priced.
    policy = {"launchTemplate": {"overrides": [{"instanceType": UNKNOWN},
                                               {"instanceRequirements": {"vcpuCount": {"min": 4.0}}},
                                               {"instanceType": "g5.xlarge"}]}}  # fmt: skip
    asg = res(ASG, "m", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": policy})
    cost = price_resources([asg], US)
    assert rows(cost) == [("m", "g5.xlarge", "on-demand", 1, 1, od("g5.xlarge"))]
    assert cost["warnings"] == []
    only_unknown = res(ASG, "u", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": UNKNOWN}]}}})  # fmt: skip
    assert reasons(price_resources([only_unknown], US)) == [
        "instance type unknown: no instance type in the overrides or the launch template"
    ]


def test_mixed_warns_about_overrides_passed_over_for_want_of_a_price() -> None:
    policy = {"launchTemplate": {"overrides": [{"instanceType": "p5e.48xlarge"}, {"instanceType": "p9.x"},
                                               {"instanceType": "g5.xlarge"}]}}  # fmt: skip
    asg = res(ASG, "m", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": policy})
    cost = price_resources([asg], US)
    assert rows(cost) == [("m", "g5.xlarge", "on-demand", 1, 1, od("g5.xlarge"))]
    assert cost["warnings"] == [
        "m: overrides p5e.48xlarge, p9.x have no usable price in us-east-1; priced as g5.xlarge, the first "
        "override that has one"
    ]
    last = res(ASG, "l", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": "p5e.48xlarge"}, {"instanceType": "p9.x"}]}}})  # fmt: skip
    # The reason is the last override's.
    assert reasons(price_resources([last], US)) == ["instance type unknown: 'p9.x' is not an EC2 instance type"]


@pytest.mark.parametrize(
    ("weight", "nodes"),
    [
        (2.0, (2, 4)),  # ceil(4 / 2) = 2, ceil(8 / 2) = 4
        ("3", (2, 3)),  # ceil(4 / 3) = 2, ceil(8 / 3) = 3
        (UNKNOWN, (4, 8)),  # an unknown weight counts 1
        (0.0, (4, 8)),  # a zero weight cannot divide: one node per unit
    ],
)
def test_mixed_weighted_capacity_turns_units_into_nodes(weight: Any, nodes: tuple[int, int]) -> None:
    policy = {"launchTemplate": {"overrides": [{"instanceType": "g5.xlarge", "weightedCapacity": weight}]}}
    asg = res(ASG, "w", {"desiredCapacity": 4.0, "maxSize": 8.0, "mixedInstancesPolicy": policy})
    assert rows(price_resources([asg], US)) == [("w", "g5.xlarge", "on-demand", *nodes, od("g5.xlarge"))]


def test_mixed_weighted_spot_share_and_zero_weight_spot_share() -> None:
    # base 1, 50 % above: 5 units -> 1 + ceil(4 * 0.5) = 3 On-Demand units, 2 spot units; weight 2 -> 2 and 1 nodes.
    dist = {"onDemandBaseCapacity": 1.0, "onDemandPercentageAboveBaseCapacity": 50.0}
    policy = {"instancesDistribution": dist,
              "launchTemplate": {"overrides": [{"instanceType": "g5.xlarge", "weightedCapacity": 2.0}]}}  # fmt: skip
    asg = res(ASG, "w", {"desiredCapacity": 5.0, "maxSize": 5.0, "mixedInstancesPolicy": policy})
    s = spot_estimate("g5.xlarge")
    assert rows(price_resources([asg], US)) == [
        ("w", "g5.xlarge", "on-demand", 2, 2, od("g5.xlarge")),
        ("w", "g5.xlarge", "spot", 1, 1, s),
    ]
    zero = {"instancesDistribution": dist,
            "launchTemplate": {"overrides": [{"instanceType": "g5.xlarge", "weightedCapacity": 0.0}]}}  # fmt: skip
    asg0 = res(ASG, "z", {"desiredCapacity": 5.0, "maxSize": 5.0, "mixedInstancesPolicy": zero})
    assert rows(price_resources([asg0], US)) == [
        ("z", "g5.xlarge", "on-demand", 3, 3, od("g5.xlarge")),
        ("z", "g5.xlarge", "spot", 2, 2, s),
    ]


def test_mixed_base_larger_than_the_group_is_all_on_demand() -> None:
    # base 4 of desired 2: both On-Demand; max 6: 4 base + ceil(2 * 0.5) = 5 On-Demand, 1 spot.
    dist = {"onDemandBaseCapacity": 4.0, "onDemandPercentageAboveBaseCapacity": 50.0}
    cost = price_resources([mixed("b", 2.0, 6.0, dist)], US)
    assert rows(cost) == [
        ("b", "g5.xlarge", "on-demand", 2, 5, od("g5.xlarge")),
        ("b", "g5.xlarge", "spot", 0, 1, spot_estimate("g5.xlarge")),
    ]


def test_mixed_reads_the_launch_template_type_reservation_and_root_volumes() -> None:
    cr = res(CR, "cr", {"instanceType": "g5.xlarge", "instanceCount": 1.0})
    lt = res(LT, "lt", {"instanceType": "g5.xlarge", "blockDeviceMappings": [{"ebs": {"volumeSize": 100.0}}],
                        "capacityReservationSpecification": {"capacityReservationTarget": {}}},
             {"capacityReservationSpecification": [cr["urn"]]})  # fmt: skip
    dist = {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 50.0}
    policy = {"instancesDistribution": dist,
              "launchTemplate": {"launchTemplateSpecification": {"launchTemplateName": "lt"}}}  # fmt: skip
    asg = res(ASG, "asg", {"desiredCapacity": 4.0, "maxSize": 6.0, "mixedInstancesPolicy": policy},
              {"mixedInstancesPolicy": [lt["urn"]]})  # fmt: skip
    cost = price_resources([cr, lt, asg], US)
    g, s = od("g5.xlarge"), spot_estimate("g5.xlarge")
    # 4 units: 2 On-Demand (1 inside the reservation) and 2 spot; 6 units: 3 On-Demand (1 inside) and 3 spot.
    # Root volumes: 100 GiB gp2 (the EC2 default type) on all 4 / 6 nodes at $0.10/GiB-month.
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"]) for i in cost["items"]] == [
        ("cr", "on-demand", 1, 1, g),
        ("asg", "on-demand", 1, 2, g),
        ("asg", "spot", 2, 3, s),
        ("asg root volumes (gp2)", "storage", 400, 600, 0.1),
    ]


# --- rates for types outside the catalog -------------------------------------------------------------------------


def shipped_cpu(itype: str) -> tuple[float, str, str]:
    """The shipped table's On-Demand rate for a CPU type in us-east-1, with its source text and date."""
    entry = SHIPPED_RATES["regions"]["us-east-1"][f"cpu:{itype}"]
    origin = SHIPPED_RATES["sources"][entry["source"]]
    return entry["usd"], f"{entry['source']}: {origin['note']}", origin["as_of"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A refreshed price cache: m7i.xlarge (rate table type) with spot only, m7i.large with On-Demand, c6a.large
    (in no table) with both prices, c6a.xlarge with spot only."""
    path = tmp_path / "prices.json"
    refreshed = {"price_date": "2026-08-02", "price_source": "ec2-spot-price-history"}
    path.write_text(json.dumps({"schema": "gpucloud.prices/v1", "regions": {"us-east-1": {
        "m7i.xlarge": {"spot_usd": 0.09, **refreshed},
        "m7i.large": {"on_demand_usd": 0.112, "price_date": "2026-08-03", "price_source": "aws-price-list-api"},
        "c6a.large": {"on_demand_usd": 0.0765, "spot_usd": 0.03, "price_date": "2026-08-03",
                      "price_source": "aws-price-list-api"},
        "c6a.xlarge": {"spot_usd": 0.06, **refreshed},
    }}}))  # fmt: skip
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(path))
    return path


def sourced(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (i["instance_type"], i["pricing"], i["unit_price"], i["rate_source"], i["rate_as_of"]) for i in cost["items"]
    ]


def test_cpu_type_from_the_rate_table_carries_the_tables_source() -> None:
    usd, source, as_of = shipped_cpu("m7i.xlarge")
    cost = price_resources([ng("sys", "m7i.xlarge")], US)
    assert sourced(cost) == [("m7i.xlarge", "on-demand", usd, source, as_of)]


def test_cpu_type_without_a_table_rate_in_the_region_says_which_regions_have_one() -> None:
    cost = price_resources([ng("sys", "m7i.xlarge")], PricingOptions(region="us-isob-east-1"))
    assert reasons(cost)[0].startswith(
        "no us-isob-east-1 list price for m7i.xlarge On-Demand in gpucloud's service rates (it holds "
    )


def test_cached_cpu_prices(cache: Path) -> None:
    usd, source, as_of = shipped_cpu("m7i.xlarge")
    nodes = [
        ng("a", "m7i.xlarge"),
        ng("b", "m7i.xlarge", capacityType="SPOT"),
        ng("l", "m7i.large"),
        ng("c", "c6a.large"),
        ng("d", "c6a.large", capacityType="SPOT"),
        ng("e", "c6a.xlarge"),
        ng("f", "c6a.xlarge", capacityType="CAPACITY_BLOCK"),
    ]
    cost = price_resources(nodes, US)
    # The table's On-Demand rate keeps its own source, the refreshed spot price the refresh's; a cache-only type
    # carries the cache's for both.
    assert sourced(cost) == [
        ("m7i.xlarge", "on-demand", usd, source, as_of),
        ("m7i.xlarge", "spot", 0.09, "ec2-spot-price-history", "2026-08-02"),
        ("m7i.large", "on-demand", 0.112, "aws-price-list-api", "2026-08-03"),  # the refresh overrides the table
        ("c6a.large", "on-demand", 0.0765, "aws-price-list-api", "2026-08-03"),
        ("c6a.large", "spot", 0.03, "aws-price-list-api", "2026-08-03"),
    ]
    assert cost["unpriced"] == [
        {"urn": nodes[5]["urn"], "reason": "no On-Demand price for c6a.xlarge in us-east-1",
         "instance_type": "c6a.xlarge", "market": "on-demand", "nodes": 1, "max_nodes": 1},
        {"urn": nodes[6]["urn"], "reason": "c6a.xlarge is not offered through Capacity Blocks",
         "instance_type": "c6a.xlarge", "market": "capacity-block", "nodes": 1, "max_nodes": 1},
    ]  # fmt: skip


def test_mixed_all_spot_group_takes_an_override_with_only_a_spot_price(cache: Path) -> None:
    # 0 base and 0 % On-Demand: a spot price is enough, so c6a.xlarge (spot only) is the first usable override.
    spot_only = {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 0.0}
    overrides = {"overrides": [{"instanceType": "c6a.xlarge"}, {"instanceType": "g5.xlarge"}]}
    group = res(
        ASG,
        "s",
        {
            "desiredCapacity": 2.0,
            "maxSize": 3.0,
            "mixedInstancesPolicy": {"instancesDistribution": spot_only, "launchTemplate": overrides},
        },
    )
    cost = price_resources([group], US)
    assert (rows(cost), cost["warnings"]) == ([("s", "c6a.xlarge", "spot", 2, 3, 0.06)], [])
    # Any On-Demand share needs an On-Demand price: c6a.xlarge is passed over for g5.xlarge.
    for dist in ({"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 50.0},
                 {"onDemandBaseCapacity": 1.0, "onDemandPercentageAboveBaseCapacity": 0.0}):  # fmt: skip
        mixed_group = res(ASG, "m", {"desiredCapacity": 2.0, "maxSize": 2.0,
                                     "mixedInstancesPolicy": {"instancesDistribution": dist,
                                                              "launchTemplate": overrides}})  # fmt: skip
        cost = price_resources([mixed_group], US)
        assert {i["instance_type"] for i in cost["items"]} == {"g5.xlarge"}
        assert cost["warnings"] == [
            "m: overrides c6a.xlarge have no usable price in us-east-1; priced as g5.xlarge, the first override "
            "that has one"
        ]


# --- fleets: reservations and commitments ------------------------------------------------------------------------


def test_nodes_fill_each_reservation_in_turn_and_the_rest_is_on_demand() -> None:
    # Two ODCRs of 1 and 2 p5.48xlarge; a third with an unknown count holds no known room.
    crs = [res(CR, f"cr{i}", {"instanceType": "p5.48xlarge", "instanceCount": n}) for i, n in ((1, 1.0), (2, 2.0))]
    unknown = res(CR, "cr3", {"instanceType": "p5.48xlarge", "instanceCount": UNKNOWN})
    lt = res(LT, "lt", {"instanceType": "p5.48xlarge"},
             {"capacityReservationSpecification": [unknown["urn"], crs[0]["urn"], crs[1]["urn"]]})  # fmt: skip
    group = res(NG, "ng", {"scalingConfig": {"desiredSize": 2.0, "maxSize": 5.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    # A second group on the same template finds the reservations' room already used by the first.
    other = res(NG, "ng2", {"scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    cost = price_resources([*crs, unknown, lt, group, other], US)
    p5 = od("p5.48xlarge")
    # ng: desired 2 fills cr1 (1) and 1 of cr2; max 5 fills 1 + 2, leaving 0 / 2 On-Demand. ng2: cr2 has 1 desired
    # slot left (0 at max sizes), so 0 desired / 1 max On-Demand.
    assert [(i["name"], i["quantity"], i["max_quantity"], i["unit_price"]) for i in cost["items"]] == [
        ("cr1", 1, 1, p5),
        ("cr2", 2, 2, p5),
        ("ng", 0, 2, p5),
        ("ng2", 0, 1, p5),
    ]
    assert reasons(cost) == ["instanceType/instanceCount are unknown at preview"]


def test_commitments_cover_in_order_and_name_their_source() -> None:
    options = PricingOptions.from_config(
        {
            "commitments": [
                {"match": "g5.xlarge", "kind": "savings-plan", "term": "1y", "discount": 0.3, "count": 1},
                {"match": "g6", "kind": "ri", "term": "1y", "count": 5},
                {"match": "g5", "kind": "ri", "term": "3y"},
            ]
        }
    )
    opts = PricingOptions(commitments=options.commitments, region="us-east-1")
    cost = price_resources([ng("a", "g5.xlarge", 3.0, 4.0), ng("b", "g5.xlarge", 0.0, 2.0)], opts)
    g = od("g5.xlarge")
    three_y = round(g * (1 - get_catalog().family_pricing("g5").reserved_3y), 6)
    # a: 1 node at the stated 30 % off (count 1), the g6 commitment does not match, the rest at the g5 3y figure.
    # b: the first commitment's count is used up; the 3y one (no count) covers its 0 / 2.
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"], i["rate_source"])
            for i in cost["items"]] == [
        ("a", "reserved", 1, 1, round(g * 0.7, 6), "commitment discount given in gpucloud:pricing"),
        ("a", "reserved", 2, 3, three_y, "vantage+3y ri"),
        ("b", "reserved", 0, 2, three_y, "vantage+3y ri"),
    ]  # fmt: skip


def test_a_group_sized_zero_is_not_priced() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.xlarge", "blockDeviceMappings": [{"ebs": {"volumeSize": 100.0}}]})
    group = res(NG, "z", {"scalingConfig": {"desiredSize": 0.0, "maxSize": 0.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    for nodes in (group, ng("p", "p5e.48xlarge", 0.0, 0.0)):
        cost = price_resources([lt, nodes], US)
        assert (cost["items"], cost["unpriced"]) == ([], [])


def test_root_volumes_of_a_group_at_zero_desired_count_in_the_ceiling() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.xlarge", "blockDeviceMappings": [
        {"ebs": {"volumeSize": 100.0, "volumeType": "gp3"}},
        {"ebs": {"volumeSize": 50.0, "volumeType": "magnetic"}},  # not an EBS API type: the gp2 default
        {"ebs": {"volumeSize": 0.0}}, {"ebs": {"volumeSize": UNKNOWN}}, {"ebs": None},
        {"deviceName": "/dev/sdb"}]})  # fmt: skip
    group = res(NG, "g", {"scalingConfig": {"desiredSize": 0.0, "maxSize": 2.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    cost = price_resources([lt, group], US)
    # gp3 $0.08 and gp2 $0.10 per GiB-month (us-east-1); 2 nodes at most.
    assert [
        (i["name"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"]) for i in cost["items"]
    ] == [
        ("g", 0, 2, 0.0, round(2 * od("g5.xlarge") * 730, 2)),
        ("g root volumes (gp3)", 0, 200, 0.0, 16.0),
        ("g root volumes (gp2)", 0, 100, 0.0, 10.0),
    ]
    off = price_resources([lt, group], PricingOptions(region="us-east-1", root_volumes=False))
    assert [i["name"] for i in off["items"]] == ["g"]


# --- service rates -----------------------------------------------------------------------------------------------


def test_nat_gateway_outside_the_rate_table_is_listed_with_both_reasons() -> None:
    # us-isob-east-1 (an isolated partition) is in no region of the shipped rate table.
    nat = res("aws:ec2/natGateway:NatGateway", "nat", {})
    cost = price_resources([nat], PricingOptions(region="us-isob-east-1"))
    assert cost["items"] == []
    hourly, per_gb = cost["unpriced"]
    # The wording of the missing-rate reason belongs to gpucloud.prices.rates; here: region, item, fix and unit.
    assert (hourly["urn"], hourly["unit"]) == (nat["urn"], "hour")
    assert hourly["reason"].startswith(
        "no us-isob-east-1 list price for a NAT gateway in gpucloud's service rates (it holds "
    )
    assert hourly["reason"].endswith(
        "run `gpucloud prices refresh --region us-isob-east-1` to fetch it from the AWS Price List"
    )
    assert per_gb == {
        "urn": nat["urn"],
        "reason": "usage-billed: NAT data processing (no us-isob-east-1 rate in gpucloud's service rates) depends on "
        "traffic",
        "unit": "GB",
    }
    west = price_resources([nat], PricingOptions(region="us-west-2"))
    item = west["items"][0]
    entry = SHIPPED_RATES["regions"]["us-west-2"]["nat_gateway_hour"]
    origin = SHIPPED_RATES["sources"][entry["source"]]
    assert (item["rate_source"], item["rate_as_of"]) == (f"{entry['source']}: {origin['note']}", origin["as_of"])
    # $0.045/hour x 730 hours; fixed items have the same quantity and ceiling.
    assert (item["region"], item["unit"], item["quantity"], item["max_quantity"], item["unit_price"]) == (
        "us-west-2", "hour", 1, 1, 0.045)  # fmt: skip
    assert (item["monthly"], item["monthly_ceiling"], item["instance_type"], item["type"]) == (
        32.85, 32.85, None, "aws:ec2/natGateway:NatGateway")  # fmt: skip
    assert (
        west["unpriced"][0]["reason"] == "usage-billed: NAT data processing ($0.045/GB in us-west-2) depends on traffic"
    )


# --- which resources are priced ----------------------------------------------------------------------------------


def test_only_custom_resources_are_priced_and_unknown_types_are_listed() -> None:
    component = {**ng("comp", "g5.xlarge"), "custom": False}
    no_flag = {k: v for k, v in ng("flagless", "g5.xlarge").items() if k != "custom"}
    odd = [
        {"urn": "urn:a", "type": "gpucloud:pools:GpuNodePool", "name": "pool", "inputs": {}},  # a component
        {"urn": "urn:b", "type": "plain", "name": "b", "inputs": {}},  # no module part: not a resource
        {"urn": "urn:c", "type": "acme/thing", "name": "c", "inputs": {}},
        {"urn": "urn:d", "type": "aws:newsvc/widget:Widget", "name": "d"},
        {"urn": "urn:e", "type": "pulumi:providers:kubernetes", "name": "k8s", "custom": "yes"},
    ]
    cost = price_resources([component, no_flag, *odd], US)
    assert [i["name"] for i in cost["items"]] == ["flagless"]
    assert cost["unpriced"] == [
        {"urn": "urn:c", "reason": "no price rule for acme/thing"},
        {"urn": "urn:d", "reason": "no price rule for aws:newsvc/widget:Widget"},
    ]


# --- launch templates and references -----------------------------------------------------------------------------


def group_on(name: str, spec: Any, deps: dict[str, list[str]] | None = None, **scaling: float) -> dict[str, Any]:
    sizes = {"desiredSize": 1.0, "maxSize": 1.0, **scaling}
    return res(NG, name, {"scalingConfig": sizes, "launchTemplate": spec}, deps)


def test_launch_template_found_by_name_or_resource_name() -> None:
    by_input = res(LT, "lt-a", {"name": "gpu-template", "instanceType": "g5.2xlarge"})
    by_resource = res(LT, "lt-b", {"instanceType": "g6.xlarge"})
    groups = [
        group_on("n1", {"name": "gpu-template"}),
        group_on("n2", {"launchTemplateName": "lt-b", "id": "lt-0123"}),
        group_on("n3", {"name": "elsewhere"}),
        group_on("n4", {"launchTemplateId": "lt-0abc"}),
        group_on("n5", {"name": UNKNOWN, "id": UNKNOWN}),
    ]
    cost = price_resources([by_input, by_resource, *groups], US)
    assert rows(cost) == [
        ("n1", "g5.2xlarge", "on-demand", 1, 1, od("g5.2xlarge")),
        ("n2", "g6.xlarge", "on-demand", 1, 1, od("g6.xlarge")),
    ]
    assert reasons(cost) == [
        "instance type unknown: launch template 'elsewhere' is not in this program, so its instance type is unknown",
        "instance type unknown: launch template lt-0abc is not in this program, so its instance type is unknown",
        "instance type unknown: the launch template could not be matched to a resource in this program",
    ]


def test_launch_template_reference_rules() -> None:
    a = res(LT, "a", {"instanceType": "g5.xlarge"})
    b = res(LT, "b", {"instanceType": "g6.xlarge"})
    cr = res(CR, "cr", {"instanceType": "g5.xlarge", "instanceCount": UNKNOWN})
    ambiguous = group_on("amb", {"id": UNKNOWN}, {"launchTemplate": [a["urn"], b["urn"]]})
    # The property's own dependencies name only the reservation; the template must not be taken from elsewhere.
    other_prop = group_on("prop", {"id": UNKNOWN}, {"launchTemplate": [cr["urn"]], "scalingConfig": [a["urn"]]})
    # Property dependencies that say nothing about launchTemplate: no fallback to the plain dependency list.
    silent = {**group_on("silent", {"id": UNKNOWN}, {"scalingConfig": []}), "dependencies": [a["urn"]]}
    # Without property dependencies, the plain dependencies count, filtered by type.
    plain = {**group_on("plain", {"id": UNKNOWN}), "propertyDependencies": None,
             "dependencies": [cr["urn"], b["urn"], "urn:not-in-plan"]}  # fmt: skip
    named = group_on("named", {"name": "b"}, {"launchTemplate": [a["urn"], b["urn"]]})
    cost = price_resources([a, b, cr, ambiguous, other_prop, silent, plain, named], US)
    assert rows(cost) == [
        ("plain", "g6.xlarge", "on-demand", 1, 1, od("g6.xlarge")),
        ("named", "g6.xlarge", "on-demand", 1, 1, od("g6.xlarge")),
    ]
    assert reasons(cost) == [
        "instanceType/instanceCount are unknown at preview",
        "instance type unknown: the launch template is ambiguous (several in its dependencies)",
        "instance type unknown: the launch template could not be matched to a resource in this program",
        "instance type unknown: the launch template could not be matched to a resource in this program",
    ]


# --- node groups ---------------------------------------------------------------------------------------------------


def test_node_group_sizes_capacity_types_and_instance_types() -> None:
    lt = res(LT, "lt", {"instanceType": "g6.xlarge", "blockDeviceMappings": [{"ebs": {"volumeSize": 20.0}}]})
    lt_unknown = res(LT, "ltu", {"instanceType": UNKNOWN})
    groups = [
        res(NG, "max-unknown", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 1.0}}),
        ng("cap", "g5.xlarge", capacityType="RESERVED"),
        ng("cap-unknown", "g5.xlarge", capacityType=UNKNOWN),
        ng("type-unknown", UNKNOWN),
        res(NG, "list-unknown", {"instanceTypes": UNKNOWN, "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}}),
        # The listed type wins over the template's; the template still brings its root volumes.
        res(NG, "listed", {"instanceTypes": ["g5.xlarge", "g6.xlarge"], "launchTemplate": {"id": UNKNOWN},
                           "scalingConfig": {"desiredSize": 1.0, "maxSize": 2.0}}, {"launchTemplate": [lt["urn"]]}),
        res(NG, "empty-list", {"instanceTypes": [], "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}}),
        res(NG, "lt-unknown", {"launchTemplate": {"id": UNKNOWN}, "scalingConfig": {"desiredSize": 1.0,
                               "maxSize": 1.0}}, {"launchTemplate": [lt_unknown["urn"]]}),
        res(NG, "lt-spec-unknown", {"launchTemplate": UNKNOWN, "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}}),
        ng("cb", "g5.xlarge", capacityType="CAPACITY_BLOCK"),
    ]  # fmt: skip
    cost = price_resources([lt, lt_unknown, *groups], US)
    # 20 GiB gp2 root volumes on 1 / 2 nodes at $0.10 per GiB-month.
    assert [r[:5] for r in rows(cost)] == [
        ("listed", "g5.xlarge", "on-demand", 1, 2),
        ("listed root volumes (gp2)", None, "storage", 20, 40),
        ("empty-list", "t3.medium", "on-demand", 1, 1),
    ]
    assert reasons(cost) == [
        "scalingConfig.desiredSize/maxSize are unknown at preview",
        "capacityType 'RESERVED' is unknown at preview or not ON_DEMAND/SPOT/CAPACITY_BLOCK",
        f"capacityType {UNKNOWN!r} is unknown at preview or not ON_DEMAND/SPOT/CAPACITY_BLOCK",
        "instance type is unknown at preview (instanceTypes / launch template instanceType)",
        "instance type is unknown at preview (instanceTypes / launch template instanceType)",
        "instance type is unknown at preview (instanceTypes / launch template instanceType)",
        # An unknown launchTemplate block: the type is unknown (the engine used to say "unknown: None").
        "instance type is unknown at preview (instanceTypes / launch template instanceType)",
        "g5.xlarge is not offered through Capacity Blocks",
    ]
    assert cost["unpriced"][-1] == {"urn": groups[-1]["urn"], "reason": reasons(cost)[-1],
                                    "instance_type": "g5.xlarge", "market": "capacity-block", "nodes": 1,
                                    "max_nodes": 1}  # fmt: skip


def test_capacity_block_only_type_is_priced_on_its_block_rate_with_its_source() -> None:
    cost = price_resources([ng("cb", "p5e.48xlarge", 2.0, 2.0, capacityType="CAPACITY_BLOCK")], US)
    block = SNAP["regions"]["us-east-1"]["p5e.48xlarge"]["capacity_block"]
    assert sourced(cost) == [("p5e.48xlarge", "capacity-block", block["usd"], block["source"], "2026-08-01")]
    # 2 nodes x the hourly block rate x 730 hours.
    assert cost["monthly"] == round(2 * block["usd"] * 730, 2)
    eu = price_resources([ng("cb", "p5e.48xlarge", capacityType="CAPACITY_BLOCK")], PricingOptions(region="eu-west-1"))
    assert reasons(eu) == [
        # The older Capacity Blocks pricing page lists p5e.48xlarge blocks in us-east-2 only (capacity_blocks.json).
        "no Capacity Block rate for p5e.48xlarge in eu-west-1 in the shipped snapshot (p5e.48xlarge Capacity Blocks "
        "in eu-west-1 are undecided: the sources list it in us-east-2); run `gpucloud prices refresh "
        "--region eu-west-1` (DescribeCapacityBlockOfferings)"
    ]


# --- Auto Scaling groups -------------------------------------------------------------------------------------------


def test_auto_scaling_group_sizes_and_launch_configurations() -> None:
    lc = res(LC, "lc", {"instanceType": "g5.xlarge", "spotPrice": ""})  # an empty spot price buys On-Demand
    lc_spot = res(LC, "lcs", {"instanceType": "g5.xlarge", "spotPrice": "0.5"})
    dep = {"launchConfiguration": [lc["urn"]]}
    groups = [
        res(ASG, "zero", {"desiredCapacity": 0.0, "minSize": 2.0, "maxSize": 3.0}, dep),
        res(ASG, "min", {"minSize": 2.0, "maxSize": 3.0}, dep),
        res(ASG, "min-unknown", {"minSize": UNKNOWN, "maxSize": 3.0}, dep),
        res(ASG, "spot", {"desiredCapacity": 1.0, "maxSize": 1.0}, {"launchConfiguration": [lc_spot["urn"]]}),
        res(ASG, "nolc", {"desiredCapacity": 1.0, "maxSize": 1.0}, {"launchConfiguration": [], "x": [lc["urn"]]}),
    ]
    cost = price_resources([lc, lc_spot, *groups], US)
    assert [r[:5] for r in rows(cost)] == [
        ("zero", "g5.xlarge", "on-demand", 0, 3),
        ("min", "g5.xlarge", "on-demand", 2, 3),
        ("spot", "g5.xlarge", "spot", 1, 1),
    ]
    assert reasons(cost) == [
        "desiredCapacity/minSize/maxSize are unknown at preview",
        "no launch template or launch configuration found for the group",
    ]


def test_auto_scaling_group_launch_template_markets_reservations_and_volumes() -> None:
    cr = res(CR, "cr", {"instanceType": "p5.48xlarge", "instanceCount": 1.0})
    cb = res(LT, "cb", {"instanceType": "p5en.48xlarge", "instanceMarketOptions": {"marketType": "capacity-block"}})
    odcr = res(LT, "odcr", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "other"},
                            "blockDeviceMappings": [{"ebs": {"volumeSize": 200.0, "volumeType": "gp3"}}]},
               {"capacityReservationSpecification": [cr["urn"]]})  # fmt: skip
    groups = [
        res(ASG, "cbg", {"desiredCapacity": 2.0, "maxSize": 2.0, "launchTemplate": {"id": UNKNOWN}},
            {"launchTemplate": [cb["urn"]]}),
        res(ASG, "odg", {"desiredCapacity": 2.0, "maxSize": 3.0, "launchTemplate": {"id": UNKNOWN}},
            {"launchTemplate": [odcr["urn"]]}),
    ]  # fmt: skip
    cost = price_resources([cr, cb, odcr, *groups], US)
    block = SNAP["regions"]["us-east-1"]["p5en.48xlarge"]["capacity_block"]["usd"]
    p5 = od("p5.48xlarge")
    # odg: 1 of 2 (and of 3) nodes inside the 1-instance reservation; 200 GiB gp3 on 2 / 3 nodes at $0.08.
    assert [r[:6] for r in rows(cost)] == [
        ("cr", "p5.48xlarge", "on-demand", 1, 1, p5),
        ("cbg", "p5en.48xlarge", "capacity-block", 2, 2, block),
        ("odg", "p5.48xlarge", "on-demand", 1, 2, p5),
        ("odg root volumes (gp3)", None, "storage", 400, 600, 0.08),
    ]


def test_mixed_default_distribution_keeps_a_large_group_all_on_demand() -> None:
    # 100 % above a base of 0: all 101 nodes On-Demand (101 x 100 / 100 = 101 exactly), none on spot.
    cost = price_resources([mixed("big", 101.0, 120.0, None)], US)
    assert rows(cost) == [("big", "g5.xlarge", "on-demand", 101, 120, od("g5.xlarge"))]


def test_stated_region_and_date_win_over_the_plans() -> None:
    plan = [provider("default_7_0_0", "eu-west-1"), ng("n", "g5.xlarge", 2.0, 2.0)]
    cost = price_resources(plan, PricingOptions(region="us-west-2", as_of=date(2026, 8, 1)))
    assert (cost["region"], cost["as_of"], cost["warnings"]) == ("us-west-2", "2026-08-01", [])
    item = cost["items"][0]
    assert (item["region"], item["unit_price"]) == ("us-west-2", od("g5.xlarge", "us-west-2"))
    # Whole-number quantities stay integers in the output (JSON 2, not 2.0).
    assert [type(item[k]) for k in ("quantity", "max_quantity")] == [int, int]
    assert price_resources(plan)["region"] == "eu-west-1"


def test_each_market_names_the_source_and_date_of_its_own_figure() -> None:
    snap = SNAP["regions"]["us-east-1"]["p5.48xlarge"]
    dated = {name: src["as_of"] for name, src in SNAP["sources"].items()}
    nodes = [ng("od", "p5.48xlarge"), ng("cb", "p5.48xlarge", capacityType="CAPACITY_BLOCK"),
             ng("g5", "g5.xlarge")]  # fmt: skip
    cost = price_resources(nodes, US)
    od_src, cb_src = snap["on_demand"]["source"], snap["capacity_block"]["source"]
    g5_src = SNAP["regions"]["us-east-1"]["g5.xlarge"]["on_demand"]["source"]
    assert sourced(cost) == [
        ("p5.48xlarge", "on-demand", snap["on_demand"]["usd"], od_src, dated[od_src]),
        ("p5.48xlarge", "capacity-block", snap["capacity_block"]["usd"], cb_src, dated[cb_src]),
        ("g5.xlarge", "on-demand", od("g5.xlarge"), g5_src, dated[g5_src]),
    ]


def test_root_volume_provisioned_iops_scale_with_nodes() -> None:
    lt = res(LT, "lt", {"blockDeviceMappings": [{"ebs": {"volumeSize": 100.0, "volumeType": "gp3", "iops": 4000.0}},
                                                "not-a-mapping", {"ebs": "not-a-mapping"}]})  # fmt: skip
    group = res(NG, "ng", {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 2.0, "maxSize": 3.0},
                           "launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [lt["urn"]]})  # fmt: skip
    cost = price_resources([lt, group], US)
    # gp3 includes 3,000 IOPS: 1,000 above it per node at $0.005/IOPS-month; 100 GiB at $0.08/GiB-month per node.
    assert [(i["name"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"]) for i in cost["items"]][
        1:
    ] == [
        ("ng root volumes (gp3)", 200, 300, 16.0, 24.0),
        ("ng root volumes gp3 IOPS above 3,000", 2000, 3000, 10.0, 15.0),
    ]


def test_malformed_or_dangling_dependencies_do_not_break_the_lookup() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.xlarge"})
    dangling = group_on("dangling", {"id": UNKNOWN}, {"launchTemplate": ["urn:not-in-plan", lt["urn"]]})
    listed = {**group_on("listed", {"id": UNKNOWN}), "propertyDependencies": [lt["urn"]]}
    cost = price_resources([lt, dangling, listed], US)
    assert rows(cost) == [("dangling", "g5.xlarge", "on-demand", 1, 1, od("g5.xlarge"))]
    assert reasons(cost) == [
        "instance type unknown: the launch template could not be matched to a resource in this program"
    ]


def test_nodes_all_inside_a_reservation_add_nothing_even_without_an_on_demand_price() -> None:
    # p5e.48xlarge has no On-Demand price; both nodes sit in the reservation, which carries the (unpriced) bill.
    cr = res(CR, "cr", {"instanceType": "p5e.48xlarge", "instanceCount": 2.0})
    lt = res(LT, "lt", {"instanceType": "p5e.48xlarge"}, {"capacityReservationSpecification": [cr["urn"]]})
    group = res(NG, "ng", {"scalingConfig": {"desiredSize": 2.0, "maxSize": 2.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    cost = price_resources([cr, lt, group], US)
    assert cost["items"] == []
    assert [u["urn"] for u in cost["unpriced"]] == [cr["urn"]]


def test_usage_billed_and_billed_but_unrated_types_are_listed_with_their_unit() -> None:
    bucket = res("aws:s3/bucket:Bucket", "data", {})
    db = res("aws:rds/instance:Instance", "db", {"instanceClass": "db.r6g.large"})
    free = res("aws:rds/parameterGroup:ParameterGroup", "pg", {})  # in the free-type list: no entry at all
    cost = price_resources([bucket, db, free], US)
    assert cost["unpriced"] == [
        {"urn": bucket["urn"], "unit": "GB-month",
         "reason": "usage-billed: S3 is billed by stored GB, requests and transfer, not by the bucket"},
        {"urn": db["urn"], "unit": "instance-hour",
         "reason": "billed, no rate in gpucloud: RDS instances are billed per instance-hour plus storage"},
    ]  # fmt: skip


def test_reservations_are_known_before_any_group_is_priced() -> None:
    # The group comes first in the plan; its node still lands in the reservation listed after it.
    cr = res(CR, "cr", {"instanceType": "g5.xlarge", "instanceCount": 1.0})
    lt = res(LT, "lt", {"instanceType": "g5.xlarge"}, {"capacityReservationSpecification": [cr["urn"]]})
    group = res(NG, "ng", {"scalingConfig": {"desiredSize": 1.0, "maxSize": 2.0}, "launchTemplate": {"id": UNKNOWN}},
                {"launchTemplate": [lt["urn"]]})  # fmt: skip
    cost = price_resources([group, lt, cr], US)
    assert [(i["name"], i["quantity"], i["max_quantity"]) for i in cost["items"]] == [("ng", 0, 1), ("cr", 1, 1)]


# Issue 27 provenance: the spot rate is the family's planning spot discount, the 3-year rate its planning RI discount.
SPOT_RULE = "spot estimate: On-Demand x (1 - the family's planning spot discount), not a price"
G5_3Y_RULE = (
    "commitment estimate: On-Demand x (1 - family g5's planning 3y discount, gpucloud/catalog/instances.json families)"
)


def test_a_priced_item_in_full() -> None:
    options = PricingOptions.from_config({"commitments": [{"match": "g5", "term": "3y", "count": 1}]})
    group = ng("gpu", "g5.xlarge", 3.0, 5.0, capacityType="SPOT")
    reserved = ng("res", "g5.xlarge", 2.0, 2.0)
    cost = price_resources([group, reserved], PricingOptions(commitments=options.commitments, region="us-east-1"))
    s = spot_estimate("g5.xlarge")
    three_y = round(od("g5.xlarge") * (1 - get_catalog().family_pricing("g5").reserved_3y), 6)
    base = {"type": NG, "instance_type": "g5.xlarge", "unit": "hour", "region": "us-east-1"}
    assert cost["items"] == [
        {**base, "urn": group["urn"], "name": "gpu", "pricing": "spot", "quantity": 3, "max_quantity": 5,
         "unit_price": s, "monthly": round(3 * s * 730, 2), "monthly_ceiling": round(5 * s * 730, 2),
         "rate_source": "vantage+family-spot-discount", "rate_as_of": "2026-01-21",
         "rate_basis": {"kind": "estimate", "source": "vantage+family-spot-discount", "as_of": "2026-01-21",
                        "rule": SPOT_RULE}},
        {**base, "urn": reserved["urn"], "name": "res", "pricing": "reserved", "quantity": 1, "max_quantity": 1,
         "unit_price": three_y, "monthly": round(three_y * 730, 2), "monthly_ceiling": round(three_y * 730, 2),
         "rate_source": "vantage+3y ri", "rate_as_of": "2026-01-21",
         "rate_basis": {"kind": "estimate", "source": "vantage+3y ri", "as_of": "2026-01-21", "rule": G5_3Y_RULE},
         "commitment": {"kind": "ri", "term": "3y", "match": "g5"}},
        {**base, "urn": reserved["urn"], "name": "res", "pricing": "on-demand", "quantity": 1, "max_quantity": 1,
         "unit_price": od("g5.xlarge"), "monthly": 734.38, "monthly_ceiling": 734.38,
         "rate_source": "vantage", "rate_as_of": "2026-01-21",
         "rate_basis": {"kind": "published", "source": "vantage", "as_of": "2026-01-21", "rule": None}},
    ]  # fmt: skip
    # 3 x 0.41749 x 730 = 914.3031 and 5 x 0.41749 x 730 = 1523.8385, rounded to cents.
    assert (cost["items"][0]["monthly"], cost["items"][0]["monthly_ceiling"]) == (914.3, 1523.84)


def test_a_catalog_of_the_callers_own_is_priced_from_the_shipped_snapshot() -> None:
    from gpucloud.catalog import Catalog

    cost = price_resources([ng("n", "g5.xlarge", capacityType="SPOT")], US, catalog=Catalog.load())
    assert rows(cost) == [("n", "g5.xlarge", "spot", 1, 1, spot_estimate("g5.xlarge"))]


def test_a_counted_commitment_is_shared_out_separately_at_desired_and_at_max_sizes() -> None:
    options = PricingOptions.from_config({"commitments": [{"match": "g5", "term": "3y", "count": 3}]})
    opts = PricingOptions(commitments=options.commitments, region="us-east-1")
    cost = price_resources([ng("a", "g5.xlarge", 1.0, 3.0), ng("b", "g5.xlarge", 3.0, 3.0)], opts)
    # 3 instances covered. Desired sizes: a takes 1, b the other 2 (its 3rd node On-Demand). Max sizes: a takes all
    # 3, so b's 3 are On-Demand.
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"]) for i in cost["items"]] == [
        ("a", "reserved", 1, 3),
        ("b", "reserved", 2, 0),
        ("b", "on-demand", 1, 3),
    ]
    uncounted = PricingOptions.from_config({"commitments": [{"match": "g5", "term": "3y"}]})
    scaled_in = price_resources([ng("c", "g5.xlarge", 0.0, 1.0)], PricingOptions(commitments=uncounted.commitments))
    assert [(i["pricing"], i["quantity"], i["max_quantity"]) for i in scaled_in["items"]] == [("reserved", 0, 1)]


def test_unpriced_nodes_carry_their_type_market_and_counts() -> None:
    unknown, cpu_spot = ng("u", "p9.x", 1.0, 2.0), ng("s", "m7i.xlarge", 2.0, 3.0, capacityType="SPOT")
    cost = price_resources([unknown, cpu_spot], US)
    assert cost["unpriced"] == [
        {"urn": unknown["urn"], "reason": "'p9.x' is not an EC2 instance type", "instance_type": "p9.x",
         "market": "on-demand", "nodes": 1, "max_nodes": 2},
        {"urn": cpu_spot["urn"], "reason": "no spot price for m7i.xlarge in us-east-1: CPU spot prices are not "
         "estimated; run `gpucloud prices refresh --region us-east-1 --types m7i.xlarge`",
         "instance_type": "m7i.xlarge", "market": "spot", "nodes": 2, "max_nodes": 3},
    ]  # fmt: skip


def test_a_reservation_keeps_the_room_the_first_group_left() -> None:
    cr = res(CR, "cr", {"instanceType": "g5.xlarge", "instanceCount": 3.0})
    lt = res(LT, "lt", {"instanceType": "g5.xlarge"}, {"capacityReservationSpecification": [cr["urn"]]})
    groups = [
        res(NG, n, {"scalingConfig": {"desiredSize": size, "maxSize": size}, "launchTemplate": {"id": UNKNOWN}},
            {"launchTemplate": [lt["urn"]]})
        for n, size in (("one", 1.0), ("three", 3.0))
    ]  # fmt: skip
    cost = price_resources([cr, lt, *groups], US)
    # 3 reserved: "one" uses 1, "three" the remaining 2, so 1 of its nodes is On-Demand.
    assert [(i["name"], i["quantity"], i["max_quantity"]) for i in cost["items"]] == [("cr", 3, 3), ("three", 1, 1)]
