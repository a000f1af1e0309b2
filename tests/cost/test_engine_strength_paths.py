"""Mutation strength of the engine's resource handlers (gpucloud/cost/engine.py from `_Pricer.instance` on):
instances and spot requests, EC2 and spot fleets, reservations, FSx for Lustre, EKS, NAT, EIP, endpoints, KMS,
EBS, Karpenter NodePools and the module functions. Every expected figure is the list price from the shipped
snapshot / rate table (read below, never from the engine) times the quantity, worked by hand in a comment."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from engine_fixtures import NODEPOOL, SNAP, STACK, US, capacity, nodepool, od, res, spot_estimate, types_in

from gpucloud.catalog import get_catalog
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.cost.engine import UNKNOWN, classify
from gpucloud.fleet import labels, selection
from gpucloud.prices import rates
from gpucloud.prices.book import PriceBook, load_snapshot

SERVICE: dict[str, Any] = json.loads(rates.SERVICE_RATES_FILE.read_text())
PAGES = f"aws-pricing-pages: {SERVICE['sources']['aws-pricing-pages']['note']}"  # the shipped table's source
# An AWS (ISO-B) region the shipped service-rate table holds nothing for.
NOWHERE = "us-isob-east-1"


def service(item: str, region: str = "us-east-1") -> float:
    usd: float = SERVICE["regions"][region][item]["usd"]
    return usd


INSTANCE = "aws:ec2/instance:Instance"
SPOT_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
CR = "aws:ec2/capacityReservation:CapacityReservation"
FLEET = "aws:ec2/fleet:Fleet"
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
EKS = "aws:eks/cluster:Cluster"
NAT = "aws:ec2/natGateway:NatGateway"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
VOLUME = "aws:ebs/volume:Volume"
POOL = NODEPOOL


def rows(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(name, type, pricing, quantity, max_quantity, unit_price, monthly, monthly_ceiling) per item."""
    return [
        (i["name"], i["instance_type"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"],
         i["monthly"], i["monthly_ceiling"])
        for i in cost["items"]
    ]  # fmt: skip


def reasons(cost: dict[str, Any]) -> list[tuple[str, str]]:
    return [(u["urn"].rsplit("::", 1)[1], u["reason"]) for u in cost["unpriced"]]


def hourly(n: float, usd: float) -> float:
    return round(n * usd * 730, 2)


# --- instances and spot requests ---------------------------------------------------------------------------------


def test_instance_type_precedence_and_reasons() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.2xlarge", "instanceMarketOptions": {"marketType": "spot"}})
    lt_none = {**res(LT, "ltn", None), "inputs": None}
    own = res(
        INSTANCE,
        "own",
        {"instanceType": "g5.xlarge", "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]]},
    )
    empty_lt = res(INSTANCE, "empty", {"launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [lt_none["urn"]]})
    ext = res(INSTANCE, "ext", {"launchTemplate": {"id": "lt-0abc"}})
    unknown = res(INSTANCE, "unk", {"instanceType": UNKNOWN})
    number = res(INSTANCE, "num", {"instanceType": 5.0})
    cost = price_resources([lt, lt_none, own, empty_lt, ext, unknown, number], US)
    # The instance's own type wins over the template's; the template's market still applies (spot).
    s = spot_estimate("g5.xlarge")
    assert rows(cost) == [("own", "g5.xlarge", "spot", 1, 1, s, hourly(1, s), hourly(1, s))]
    assert reasons(cost) == [
        ("empty", "instanceType is unknown at preview"),
        ("ext", "instanceType is unknown at preview: launch template lt-0abc is not in this program, so its "
                "instance type is unknown"),
        ("unk", "instanceType is unknown at preview"),
        ("num", "instanceType is unknown at preview"),
    ]  # fmt: skip


def test_instance_market_from_inputs_then_template() -> None:
    block_lt = res(
        LT, "blt", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "capacity-block"}}
    )
    spot_lt = res(LT, "slt", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "spot"}})
    resources_ = [
        block_lt,
        spot_lt,
        res(INSTANCE, "a", {"launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [block_lt["urn"]]}),
        # The instance's own market options win over its template's.
        res(INSTANCE, "b",
            {"launchTemplate": {"id": UNKNOWN}, "instanceMarketOptions": {"marketType": "capacity-block"}},
            {"launchTemplate": [spot_lt["urn"]]}),
        res(INSTANCE, "c", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "other"}}),
        # A spot request is spot whatever its market options say.
        res(SPOT_REQUEST, "d", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "other"}}),
        res(SPOT_REQUEST, "e", {"instanceType": UNKNOWN}),
    ]  # fmt: skip
    cost = price_resources(resources_, US)
    block = SNAP["regions"]["us-east-1"]["p5.48xlarge"]["capacity_block"]["usd"]  # 41.528
    s = spot_estimate("p5.48xlarge")
    assert rows(cost) == [
        ("a", "p5.48xlarge", "capacity-block", 1, 1, block, hourly(1, block), hourly(1, block)),
        ("b", "p5.48xlarge", "capacity-block", 1, 1, block, hourly(1, block), hourly(1, block)),
        ("c", "p5.48xlarge", "on-demand", 1, 1, 55.04, hourly(1, 55.04), hourly(1, 55.04)),
        ("d", "p5.48xlarge", "spot", 1, 1, s, hourly(1, s), hourly(1, s)),
    ]
    assert [i["rate_source"] for i in cost["items"]] == [
        "aws-capacity-blocks",
        "aws-capacity-blocks",
        "aws-price-list",
        "aws-price-list+family-spot-discount",
    ]
    assert reasons(cost) == [("e", "instanceType is unknown at preview")]


def test_instances_inside_reservations_and_root_volumes() -> None:
    cr = res(CR, "cr", {"instanceType": "g5.xlarge", "instanceCount": 1.0})
    cr_lt = res(CR, "crlt", {"instanceType": "g5.2xlarge", "instanceCount": 1.0})
    lt = res(
        LT,
        "lt",
        {"instanceType": "g5.2xlarge", "blockDeviceMappings": [{"ebs": {"volumeSize": 50.0, "volumeType": "io1"}}]},
        {"capacityReservationSpecification": [cr_lt["urn"]]},
    )
    in_cr = res(INSTANCE, "in", {"instanceType": "g5.xlarge"}, {"capacityReservationSpecification": [cr["urn"]]})
    via_lt = res(INSTANCE, "vialt", {"launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [lt["urn"]]})
    # A root block device on the instance replaces the template's mappings; no volumeType means gp2.
    own_root = res(INSTANCE, "root", {"launchTemplate": {"id": UNKNOWN}, "rootBlockDevice": {"volumeSize": 30.0}},
                   {"launchTemplate": [lt["urn"]]})  # fmt: skip
    no_size = res(INSTANCE, "nosize", {"instanceType": "t3.medium", "rootBlockDevice": {"volumeType": "gp3"}})
    cost = price_resources([cr, cr_lt, lt, in_cr, via_lt, own_root, no_size], US)
    g5x, g52x = od("g5.xlarge"), od("g5.2xlarge")
    assert rows(cost) == [
        # Each reservation is billed once, at On-Demand; the instances inside add nothing.
        ("cr", "g5.xlarge", "on-demand", 1, 1, g5x, hourly(1, g5x), hourly(1, g5x)),
        ("crlt", "g5.2xlarge", "on-demand", 1, 1, g52x, hourly(1, g52x), hourly(1, g52x)),
        # The template's io1 root volume: 50 GiB x $0.125 = $6.25.
        ("vialt root volume (io1)", None, "storage", 50, 50, 0.125, 6.25, 6.25),
        # The reservation is full, so this one is On-Demand; its own 30 GiB gp2 root: 30 x $0.10 = $3.
        ("root", "g5.2xlarge", "on-demand", 1, 1, g52x, hourly(1, g52x), hourly(1, g52x)),
        ("root root volume (gp2)", None, "storage", 30, 30, 0.1, 3.0, 3.0),
        ("nosize", "t3.medium", "on-demand", 1, 1, 0.0416, hourly(1, 0.0416), hourly(1, 0.0416)),
    ]
    without = price_resources([own_root, lt], PricingOptions(region="us-east-1", root_volumes=False))
    assert [i["name"] for i in without["items"]] == ["root"]


# --- EC2 Fleet, Spot Fleet ---------------------------------------------------------------------------------------


def overrides(*types: str) -> list[dict[str, Any]]:
    return [{"overrides": [{"instanceType": t} for t in types]}]


def test_ec2_fleet_shares_by_default_capacity_type() -> None:
    def fleet(name: str, tcs: Any, types: tuple[str, ...] = ("p5.48xlarge",)) -> dict[str, Any]:
        return res(FLEET, name, {"targetCapacitySpecification": tcs, "launchTemplateConfigs": overrides(*types)})

    cost = price_resources(
        [
            # 4 = 1 On-Demand + 1 spot + 2 more of the default type, a Capacity Block.
            fleet("cb", {"totalTargetCapacity": 4.0, "onDemandTargetCapacity": 1.0, "spotTargetCapacity": 1.0,
                         "defaultTargetCapacityType": "capacity-block"}),
            # An unrecognised default type fills the rest On-Demand; explicit shares beyond the total add no rest.
            fleet("odd", {"totalTargetCapacity": 3.0, "spotTargetCapacity": 1.0, "defaultTargetCapacityType": "x"}),
            fleet("over", {"totalTargetCapacity": 1.0, "onDemandTargetCapacity": 1.0, "spotTargetCapacity": 1.0}),
            # Spot by default and no explicit shares: all of it spot, none On-Demand.
            fleet("spot", {"totalTargetCapacity": 2.0, "defaultTargetCapacityType": "spot"}),
            # No default type: On-Demand; no explicit shares: all of it.
            fleet("plain", {"totalTargetCapacity": 2.0}, ("g4dn.12xlarge", "g5.xlarge")),
            fleet("unk", {"totalTargetCapacity": 2.0, "onDemandTargetCapacity": UNKNOWN}),
            fleet("unk2", {"totalTargetCapacity": 2.0, "spotTargetCapacity": UNKNOWN}),
            fleet("unk3", {"totalTargetCapacity": UNKNOWN}),
            res(FLEET, "none", {"launchTemplateConfigs": overrides("p5.48xlarge")}),
        ],
        US,
    )  # fmt: skip
    p5, s, block = 55.04, spot_estimate("p5.48xlarge"), 41.528
    g4 = od("g4dn.12xlarge")  # 3.912 > g5.xlarge's 1.006, though "g4dn" sorts first: the dearer type is priced
    assert rows(cost) == [
        ("cb", "p5.48xlarge", "on-demand", 1, 1, p5, hourly(1, p5), hourly(1, p5)),
        ("cb", "p5.48xlarge", "spot", 1, 1, s, hourly(1, s), hourly(1, s)),
        ("cb", "p5.48xlarge", "capacity-block", 2, 2, block, hourly(2, block), hourly(2, block)),
        ("odd", "p5.48xlarge", "on-demand", 2, 2, p5, hourly(2, p5), hourly(2, p5)),
        ("odd", "p5.48xlarge", "spot", 1, 1, s, hourly(1, s), hourly(1, s)),
        ("over", "p5.48xlarge", "on-demand", 1, 1, p5, hourly(1, p5), hourly(1, p5)),
        ("over", "p5.48xlarge", "spot", 1, 1, s, hourly(1, s), hourly(1, s)),
        ("spot", "p5.48xlarge", "spot", 2, 2, s, hourly(2, s), hourly(2, s)),
        ("plain", "g4dn.12xlarge", "on-demand", 2, 2, g4, hourly(2, g4), hourly(2, g4)),
    ]
    assert reasons(cost) == [(n, "targetCapacitySpecification is unknown at preview") for n in
                             ("unk", "unk2", "unk3", "none")]  # fmt: skip


def test_fleet_type_sources_and_reasons() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.2xlarge"})
    lt2 = res(LT, "lt2", {"instanceType": "g5.xlarge"})
    lt_unknown = res(LT, "ltu", {"instanceType": UNKNOWN})
    tcs = {"totalTargetCapacity": 1.0}

    def fleet(name: str, configs: Any, deps: list[str] | None = None) -> dict[str, Any]:
        inputs = {"targetCapacitySpecification": tcs, "launchTemplateConfigs": configs}
        return res(FLEET, name, inputs, {"launchTemplateConfigs": deps} if deps else None)

    cost = price_resources(
        [
            lt, lt2, lt_unknown,
            fleet("from-lt", UNKNOWN, [lt["urn"]]),
            # Overrides with a type win over the template; an attribute-based one next to it changes nothing.
            fleet("typed", [{"overrides": [{"instanceRequirements": {}}, {"instanceType": "g5.xlarge"}]}], [lt["urn"]]),
            # Types gpucloud cannot price are passed over for one it can.
            fleet("mixed", overrides("p9.48xlarge", UNKNOWN, "g6e.xlarge")),
            # p5e.48xlarge has no On-Demand or spot rate (Capacity Blocks only): it counts as $0 against g5.
            fleet("cb-only", overrides("p5e.48xlarge", "g5.xlarge")),
            # A CPU type has an On-Demand rate but no spot estimate: $0.2016 still beats the $0 of p5e.48xlarge.
            fleet("cpu", overrides("m7i.xlarge", "p5e.48xlarge")),
            # An unknown override names no type, so the template the configs depend on does.
            fleet("unk-override", overrides(UNKNOWN), [lt["urn"]]),
            fleet("abs", [{"overrides": [{"instanceRequirements": {"vcpuCount": {"min": 4.0}}}]},
                          {"overrides": [{"instanceType": "p9.48xlarge"}]}]),
            fleet("unpriced", overrides("p9.48xlarge")),
            fleet("lt-unknown", [], [lt_unknown["urn"]]),
            fleet("two-lts", [], [lt["urn"], lt2["urn"]]),
            fleet("bare", None),
        ],
        US,
    )  # fmt: skip
    assert [(i["name"], i["instance_type"], i["pricing"]) for i in cost["items"]] == [
        ("from-lt", "g5.2xlarge", "on-demand"),
        ("typed", "g5.xlarge", "on-demand"),
        ("mixed", "g6e.xlarge", "on-demand"),
        ("cb-only", "g5.xlarge", "on-demand"),
        ("cpu", "m7i.xlarge", "on-demand"),
        ("unk-override", "g5.2xlarge", "on-demand"),
    ]
    no_type = (
        "instance type unknown: no priced instance type in the fleet's specifications, overrides or launch template"
    )
    assert reasons(cost) == [
        ("abs", "instance type unknown: overrides use instanceRequirements (types are chosen at launch)"),
        ("unpriced", no_type),
        ("lt-unknown", no_type),
        ("two-lts", no_type),
        ("bare", no_type),
    ]


def test_spot_fleet_targets_and_type_sources() -> None:
    lt = res(LT, "lt", {"instanceType": "g5.2xlarge"})

    def sfr(name: str, inputs: dict[str, Any], deps: list[str] | None = None) -> dict[str, Any]:
        return res(SPOT_FLEET, name, inputs, {"launchTemplateConfigs": deps} if deps else None)

    cost = price_resources(
        [
            lt,
            # No On-Demand target: all of it is spot.
            sfr("all-spot", {"targetCapacity": 3.0, "launchTemplateConfigs": overrides("g4dn.12xlarge", "g5.xlarge")}),
            # On-Demand target above the total: the total, no spot.
            sfr("od", {"targetCapacity": 2.0, "onDemandTargetCapacity": 3.0,
                       "launchSpecifications": [{"instanceType": "g5.xlarge"}]}),
            sfr("split", {"targetCapacity": 4.0, "onDemandTargetCapacity": 1.0, "launchSpecifications": 3.0},
                [lt["urn"]]),
            sfr("even", {"targetCapacity": 2.0, "onDemandTargetCapacity": 2.0, "launchSpecifications": UNKNOWN},
                [lt["urn"]]),
            sfr("unk", {"targetCapacity": 2.0, "onDemandTargetCapacity": UNKNOWN}),
            sfr("none", {"targetCapacity": 2.0}),
        ],
        US,
    )  # fmt: skip
    s4 = spot_estimate("g4dn.12xlarge")  # the dearer of the two overrides
    g5x, g52, s52 = od("g5.xlarge"), od("g5.2xlarge"), spot_estimate("g5.2xlarge")
    assert rows(cost) == [
        ("all-spot", "g4dn.12xlarge", "spot", 3, 3, s4, hourly(3, s4), hourly(3, s4)),
        ("od", "g5.xlarge", "on-demand", 2, 2, g5x, hourly(2, g5x), hourly(2, g5x)),
        ("split", "g5.2xlarge", "on-demand", 1, 1, g52, hourly(1, g52), hourly(1, g52)),
        ("split", "g5.2xlarge", "spot", 3, 3, s52, hourly(3, s52), hourly(3, s52)),
        ("even", "g5.2xlarge", "on-demand", 2, 2, g52, hourly(2, g52), hourly(2, g52)),
    ]
    assert reasons(cost) == [
        ("unk", "targetCapacity is unknown at preview"),
        ("none", "instance type unknown: no priced instance type in the fleet's specifications, overrides or launch "
                 "template"),
    ]  # fmt: skip


# --- capacity reservations ---------------------------------------------------------------------------------------


def test_capacity_reservation_paths() -> None:
    cost = price_resources(
        [
            res(CR, "ok", {"instanceType": "g5.xlarge", "instanceCount": 2.0, "instancePlatform": "Linux/UNIX"}),
            res(CR, "unk-type", {"instanceType": UNKNOWN, "instanceCount": 2.0}),
            res(CR, "no-type", {"instanceCount": 2.0}),
            res(CR, "unk-count", {"instanceType": "g5.xlarge", "instanceCount": UNKNOWN}),
            res(CR, "win", {"instanceType": "g5.xlarge", "instanceCount": 1.0, "instancePlatform": "Windows"}),
            res(CR, "bad", {"instanceType": "p9.48xlarge", "instanceCount": 1.0}),
            res(CR, "cb-only", {"instanceType": "p5e.48xlarge", "instanceCount": 2.0}),
        ],
        US,
    )
    g = od("g5.xlarge")
    # Billed for both instances whether they run or not: 2 x 1.006 x 730 = 1468.76.
    assert rows(cost) == [("ok", "g5.xlarge", "on-demand", 2, 2, g, 1468.76, 1468.76)]
    no_od = SNAP["regions"]["us-east-1"]["p5e.48xlarge"]["no_on_demand"]
    assert [{k: v for k, v in u.items() if k != "urn"} for u in cost["unpriced"]] == [
        {"reason": "instanceType/instanceCount are unknown at preview"},
        {"reason": "instanceType/instanceCount are unknown at preview"},
        {"reason": "instanceType/instanceCount are unknown at preview"},
        {"reason": "instancePlatform 'Windows': only Linux/UNIX rates are in the catalog"},
        {"reason": "'p9.48xlarge' is not an EC2 instance type"},
        {"reason": f"p5e.48xlarge in us-east-1: {no_od}", "instance_type": "p5e.48xlarge", "market": "on-demand",
         "nodes": 2, "max_nodes": 2},
    ]  # fmt: skip
    assert [u["urn"].rsplit("::", 1)[1] for u in cost["unpriced"]] == [
        "unk-type", "no-type", "unk-count", "win", "bad", "cb-only"
    ]  # fmt: skip


# --- FSx for Lustre ----------------------------------------------------------------------------------------------


def test_lustre_tiers_defaults_and_reasons() -> None:
    def fs(name: str, **inputs: Any) -> dict[str, Any]:
        return res(LUSTRE, name, inputs)

    cost = price_resources(
        [
            fs("default", storageCapacity=1200.0),  # SCRATCH_1 SSD
            fs("p1", storageCapacity=2400.0, deploymentType="PERSISTENT_1", perUnitStorageThroughput=50.0,
               automaticBackupRetentionDays=0.0),  # no backups kept
            fs("unk-cap", storageCapacity=UNKNOWN),
            fs("unk-dep", storageCapacity=1200.0, deploymentType=UNKNOWN),
            fs("unk-storage", storageCapacity=1200.0, storageType=UNKNOWN),
            fs("unk-tput", storageCapacity=1200.0, deploymentType="PERSISTENT_1", perUnitStorageThroughput=UNKNOWN),
            fs("scratch-hdd", storageCapacity=1200.0, deploymentType="SCRATCH_2", storageType="HDD"),
        ],
        US,
    )  # fmt: skip
    scratch, p1 = service("fsx_lustre:SCRATCH_1:-:SSD"), service("fsx_lustre:PERSISTENT_1:50:SSD")  # per GiB-month
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"], i["unit"], i["monthly"],
             i["monthly_ceiling"], i["rate_source"], i["rate_as_of"]) for i in cost["items"]] == [
        ("default", "storage", 1200, 1200, scratch, "GiB-month", round(1200 * scratch, 2), round(1200 * scratch, 2),
         PAGES, "2025-06-01"),
        ("p1", "storage", 2400, 2400, p1, "GiB-month", round(2400 * p1, 2), round(2400 * p1, 2), PAGES, "2025-06-01"),
    ]  # fmt: skip
    assert reasons(cost) == [
        ("unk-cap", "storageCapacity/deploymentType are unknown at preview"),
        ("unk-dep", "storageCapacity/deploymentType are unknown at preview"),
        ("unk-storage", "storageCapacity/deploymentType are unknown at preview"),
        ("unk-tput", "PERSISTENT_1 needs perUnitStorageThroughput (MB/s/TiB) to be priced"),
        ("scratch-hdd", "no FSx for Lustre rate for SCRATCH_2 HDD"),
    ]


def test_lustre_in_a_region_without_fsx_rates() -> None:
    fs = res(
        LUSTRE, "fs", {"storageCapacity": 1200.0, "deploymentType": "SCRATCH_2", "automaticBackupRetentionDays": 3.0}
    )
    cost = price_resources([fs], PricingOptions(region="af-south-1"))
    assert cost["items"] == []
    key = "fsx_lustre:SCRATCH_2:-:SSD"
    assert cost["unpriced"] == [
        {
            "urn": fs["urn"],
            "reason": "usage-billed: automatic daily backups kept 3 days are billed by backup storage (no af-south-1 "
            "rate in gpucloud's service rates, incremental after the first full backup)",
            "unit": "GB-month",
        },
        {
            "urn": fs["urn"],
            "reason": rates.missing_reason("af-south-1", key, "FSx for Lustre SCRATCH_2 SSD"),
            "unit": "GiB-month",
        },
    ]
    assert "(it holds us-east-1, us-east-2, us-west-2)" in cost["unpriced"][1]["reason"]


# --- EKS ---------------------------------------------------------------------------------------------------------


def eks(name: str, version: Any = None, support: Any = None, **extra: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = dict(extra)
    if version is not None:
        inputs["version"] = version
    if support is not None:
        inputs["upgradePolicy"] = {"supportType": support}
    return res(EKS, name, inputs)


def at(day: date) -> PricingOptions:
    return PricingOptions(region="us-east-1", as_of=day)


CALENDAR = rates.EKS_CALENDAR_SOURCE
EKS_SOURCE = rates.EKS_STANDARD.source  # aws.amazon.com/eks/pricing


def test_eks_items_carry_rate_sources() -> None:
    cost = price_resources(
        [eks("known", "1.35"), eks("future", "1.40"), eks("ancient", "1.20"), eks("unk-support", "1.29", UNKNOWN)],
        at(date(2026, 8, 1)),
    )
    # $0.10/h standard = $73 a month; $0.60/h extended = $438. 1.40 is newer than the calendar (standard),
    # 1.20 older than all of it (extended); an unknown supportType is EKS's default, EXTENDED.
    assert [(i["name"], i["quantity"], i["max_quantity"], i["unit_price"], i["unit"], i["monthly"],
             i["monthly_ceiling"], i["rate_source"], i["rate_as_of"]) for i in cost["items"]] == [
        ("known", 1, 1, 0.1, "hour", 73.0, 73.0, f"{EKS_SOURCE}; tier: {CALENDAR}", "2025-06-01"),
        ("future", 1, 1, 0.1, "hour", 73.0, 73.0, EKS_SOURCE, "2025-06-01"),
        ("ancient", 1, 1, 0.6, "hour", 438.0, 438.0, EKS_SOURCE, "2025-06-01"),
        ("unk-support", 1, 1, 0.6, "hour", 438.0, 438.0, f"{EKS_SOURCE}; tier: {CALENDAR}", "2025-06-01"),
    ]  # fmt: skip
    assert cost["warnings"] == []


def test_eks_unknown_versions_are_unpriced() -> None:
    cost = price_resources([eks("unk", UNKNOWN), eks("num", 1.3)], US)
    assert cost["items"] == []
    assert reasons(cost) == [
        ("unk", "version is unknown at preview, so standard vs extended support is unknown"),
        ("num", "version is unknown at preview, so standard vs extended support is unknown"),
    ]


@pytest.mark.parametrize(
    ("day", "warned"),
    [
        (date(2026, 9, 26), False),  # 1.31's extended support ends 2026-11-26: 61 days ahead
        (date(2026, 9, 27), True),  # 60 days ahead
        (date(2026, 11, 26), True),  # the last day of extended support
        (date(2026, 11, 27), False),  # past it: EKS has upgraded the cluster
    ],
)
def test_eks_extended_support_end_warning_window(day: date, warned: bool) -> None:
    cost = price_resources([eks("c", "1.31")], at(day))
    assert cost["monthly"] == 438.0
    expected = (
        "c: Kubernetes 1.31 leaves EKS extended support on 2026-11-26: EKS then upgrades the cluster automatically "
        f"({CALENDAR})"
    )
    assert cost["warnings"] == ([expected] if warned else [])


def test_eks_standard_policy_warns_of_the_automatic_upgrade() -> None:
    # 1.34 leaves standard support on 2026-12-02, 32 days after 2026-10-31.
    cost = price_resources([eks("c", "1.34", "STANDARD")], at(date(2026, 10, 31)))
    assert cost["monthly"] == 73.0
    assert cost["warnings"] == [
        "c: Kubernetes 1.34 leaves EKS standard support on 2026-12-02 (32 days after 2026-10-31): "
        f"upgradePolicy.supportType STANDARD: EKS upgrades the cluster automatically ({CALENDAR})"
    ]
    # Under STANDARD a version past its standard support is still billed at the standard rate.
    assert price_resources([eks("old", "1.29", "STANDARD")], at(date(2026, 8, 1)))["monthly"] == 73.0


def test_eks_without_a_version() -> None:
    cost = price_resources([eks("c", enabledClusterLogTypes=[])], US)
    (item,) = cost["items"]
    assert (item["pricing"], item["quantity"], item["max_quantity"], item["unit_price"], item["monthly"],
            item["monthly_ceiling"]) == (
        "fixed", 1, 6, 0.1, 73.0, 438.0,  # the ceiling at $0.60/h is 6 x the standard $0.10/h
    )  # fmt: skip
    assert item["rate_source"] == f"{EKS_SOURCE}; version: {rates.EKS_DEFAULT_VERSION_SOURCE}"
    assert item["rate_as_of"] == "2025-06-01"
    assert cost["unpriced"] == []
    assert cost["warnings"] == [
        f"c: no version given, so EKS picks its default version ({rates.EKS_DEFAULT_VERSION_SOURCE}); priced at "
        "the standard-support rate $0.1/h, ceiling at the extended rate $0.6/h once that version leaves standard "
        "support; pin `version`"
    ]
    unk_support = price_resources([eks("u", None, UNKNOWN)], US)
    assert unk_support["monthly_ceiling"] == 438.0 and len(unk_support["warnings"]) == 1
    std = price_resources([eks("s", None, "STANDARD")], US)
    assert (std["items"][0]["max_quantity"], std["monthly_ceiling"], std["warnings"]) == (1, 73.0, [])


def test_eks_log_types_reason_in_each_region() -> None:
    cluster = eks("c", "1.35", enabledClusterLogTypes=["api", "scheduler"])
    east = price_resources([cluster], US)
    assert east["unpriced"] == [
        {
            "urn": cluster["urn"],
            "reason": "usage-billed: control plane logs (api, scheduler) are billed by GB ingested into CloudWatch "
            "Logs ($0.5/GB ingested in us-east-1) and stored",
            "unit": "GB ingested",
        }
    ]
    assert NOWHERE not in SERVICE["regions"]
    elsewhere = price_resources([cluster], PricingOptions(region=NOWHERE, as_of=date(2026, 8, 1)))
    assert elsewhere["unpriced"][0]["reason"] == (
        "usage-billed: control plane logs (api, scheduler) are billed by GB ingested into CloudWatch Logs "
        f"(no {NOWHERE} rate in gpucloud's service rates) and stored"
    )
    assert elsewhere["monthly"] == 73.0  # one EKS list price in every region


# --- NAT, EIP, endpoints, KMS ------------------------------------------------------------------------------------


def published(source: str, as_of: str) -> dict[str, str | None]:
    """A published rate's provenance (issue 27): its source and date, no estimate rule."""
    return {"kind": "published", "source": source, "as_of": as_of, "rule": None}


def test_network_items_in_full() -> None:
    cost = price_resources(
        [
            res(NAT, "nat", {}),
            res("aws:ec2/eip:Eip", "ip", {}),
            res(ENDPOINT, "ep", {"vpcEndpointType": "Interface", "subnetIds": ["a", "b", "c"]}),
            res(ENDPOINT, "ep-unk", {"vpcEndpointType": "Interface", "subnetIds": UNKNOWN}),
            res(ENDPOINT, "kind-unk", {"vpcEndpointType": UNKNOWN, "subnetIds": ["a"]}),
        ],
        US,
    )
    base = {"type": None, "instance_type": None, "pricing": "fixed", "unit": "hour", "region": "us-east-1"}
    assert cost["items"] == [
        {**base, "urn": f"{STACK}${NAT}::nat", "name": "nat", "type": NAT, "quantity": 1, "max_quantity": 1,
         "unit_price": 0.045, "monthly": 32.85, "monthly_ceiling": 32.85, "rate_source": PAGES,
         "rate_as_of": "2025-06-01", "rate_basis": published(PAGES, "2025-06-01")},
        {**base, "urn": f"{STACK}$aws:ec2/eip:Eip::ip", "name": "ip", "type": "aws:ec2/eip:Eip", "quantity": 1,
         "max_quantity": 1, "unit_price": 0.005, "monthly": 3.65, "monthly_ceiling": 3.65,
         "rate_source": rates.PUBLIC_IPV4_HOUR.source, "rate_as_of": "2024-02-01",
         "rate_basis": published(rates.PUBLIC_IPV4_HOUR.source, "2024-02-01")},
        # $0.01 per AZ-hour x 3 subnets x 730 = $21.90
        {**base, "urn": f"{STACK}${ENDPOINT}::ep", "name": "ep", "type": ENDPOINT, "quantity": 3, "max_quantity": 3,
         "unit_price": 0.01, "monthly": 21.9, "monthly_ceiling": 21.9, "rate_source": PAGES,
         "rate_as_of": "2025-06-01", "rate_basis": published(PAGES, "2025-06-01")},
    ]  # fmt: skip
    assert cost["unpriced"] == [
        {"urn": f"{STACK}${NAT}::nat", "reason": "usage-billed: NAT data processing ($0.045/GB in us-east-1) depends "
         "on traffic", "unit": "GB"},
        {"urn": f"{STACK}${ENDPOINT}::ep", "reason": "usage-billed: interface endpoint data processing is billed per "
         "GB", "unit": "GB"},
        {"urn": f"{STACK}${ENDPOINT}::ep-unk", "reason": "Interface endpoint: type or subnets unknown at preview"},
        {"urn": f"{STACK}${ENDPOINT}::kind-unk", "reason": f"{UNKNOWN} endpoint: type or subnets unknown at preview"},
    ]  # fmt: skip


def test_network_items_in_a_region_without_their_rates() -> None:
    nat = res(NAT, "nat", {})
    ep = res(ENDPOINT, "ep", {"vpcEndpointType": "Interface", "subnetIds": ["a"]})
    assert NOWHERE not in SERVICE["regions"]
    cost = price_resources([nat, ep, res("aws:ec2/eip:Eip", "ip", {})], PricingOptions(region=NOWHERE))
    # The public IPv4 rate is one list price everywhere; NAT and endpoint hours are not held for the region.
    assert [i["name"] for i in cost["items"]] == ["ip"]
    assert cost["unpriced"] == [
        {"urn": nat["urn"], "reason": rates.missing_reason(NOWHERE, rates.NAT_GATEWAY_HOUR, "a NAT gateway"),
         "unit": "hour"},
        {"urn": nat["urn"], "reason": f"usage-billed: NAT data processing (no {NOWHERE} rate in gpucloud's service "
         "rates) depends on traffic", "unit": "GB"},
        {"urn": ep["urn"], "reason": rates.missing_reason(NOWHERE, rates.INTERFACE_ENDPOINT_AZ_HOUR,
                                                          "an interface endpoint"), "unit": "hour"},
    ]  # fmt: skip


def test_kms_keys_and_rotation() -> None:
    cost = price_resources(
        [
            res("aws:kms/key:Key", "k", {"enableKeyRotation": True}),
            res("aws:kms/key:Key", "text", {"enableKeyRotation": "true"}),  # not the boolean: no rotation priced
            res("aws:kms/externalKey:ExternalKey", "ext", {}),
            res("aws:kms/replicaExternalKey:ReplicaExternalKey", "rext", {}),
        ],
        US,
    )
    kms = rates.KMS_KEY_MONTH.source
    assert [(i["name"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"], i["unit"], i["monthly"],
             i["monthly_ceiling"], i["rate_source"], i["rate_as_of"]) for i in cost["items"]] == [
        ("k", "fixed", 1, 1, 1.0, "month", 1.0, 1.0, kms, "2025-06-01"),
        # $1 per key version a month; two rotations add two versions to the ceiling.
        ("k rotated key versions", "fixed", 0, 2, 1.0, "month", 0.0, 2.0, kms, "2025-06-01"),
        ("text", "fixed", 1, 1, 1.0, "month", 1.0, 1.0, kms, "2025-06-01"),
        ("ext", "fixed", 1, 1, 1.0, "month", 1.0, 1.0, kms, "2025-06-01"),
        ("rext", "fixed", 1, 1, 1.0, "month", 1.0, 1.0, kms, "2025-06-01"),
    ]  # fmt: skip
    assert [u["unit"] for u in cost["unpriced"]] == ["requests"] * 4
    assert {u["reason"] for u in cost["unpriced"]} == {
        "usage-billed: KMS requests beyond the free tier are billed per 10,000 requests"
    }


# --- EBS ---------------------------------------------------------------------------------------------------------


def test_ebs_volume_performance_thresholds() -> None:
    def vol(name: str, **inputs: Any) -> dict[str, Any]:
        return res(VOLUME, name, inputs)

    cost = price_resources(
        [
            vol("default", size=10.0),  # no type: gp2, 10 x $0.10 = $1
            vol("edge", size=10.0, type="gp3", iops=3001.0, throughput=126.0),  # one IOPS, one MB/s above
            vol("io1", size=10.0, type="io1", iops=100.0),  # $0.125/GiB, $0.065 per provisioned IOPS
            vol("io2-no-iops", size=10.0, type="io2"),
            vol("st1", size=500.0, type="st1", iops=500.0, throughput=500.0),  # throughput-optimised HDD, $0.045
            vol("unk-size", size=UNKNOWN, type="gp3"),
            vol("bad-type", size=10.0, type="gp9"),
        ],
        US,
    )
    assert [(i["name"], i["quantity"], i["max_quantity"], i["unit_price"], i["unit"], i["monthly"],
             i["monthly_ceiling"]) for i in cost["items"]] == [
        ("default", 10, 10, 0.1, "GiB-month", 1.0, 1.0),
        ("edge", 10, 10, 0.08, "GiB-month", 0.8, 0.8),
        ("edge gp3 IOPS above 3,000", 1, 1, 0.005, "IOPS-month", 0.01, 0.01),  # 0.005 rounds to 0.01
        ("edge gp3 throughput above 125 MB/s", 1, 1, 0.04, "MBps-month", 0.04, 0.04),
        ("io1", 10, 10, 0.125, "GiB-month", 1.25, 1.25),
        ("io1 io1 provisioned IOPS", 100, 100, 0.065, "IOPS-month", 6.5, 6.5),
        ("io2-no-iops", 10, 10, 0.125, "GiB-month", 1.25, 1.25),
        ("st1", 500, 500, 0.045, "GiB-month", 22.5, 22.5),
    ]  # fmt: skip
    assert {i["pricing"] for i in cost["items"]} == {"storage"}
    assert {i["rate_source"] for i in cost["items"]} == {PAGES}
    assert reasons(cost) == [
        ("unk-size", "size/type are unknown at preview (or the volume comes from a snapshot)"),
        ("bad-type", "size/type are unknown at preview (or the volume comes from a snapshot)"),
    ]


def test_ebs_in_a_region_without_the_type_or_its_iops_rate() -> None:
    io2 = res(VOLUME, "io2", {"size": 10.0, "type": "io2", "iops": 100.0})
    cost = price_resources([io2], PricingOptions(region="af-south-1"))
    # af-south-1's table holds no io2 storage rate: nothing is priced, and the IOPS are not reached.
    assert cost["unpriced"] == [
        {"urn": io2["urn"], "reason": rates.missing_reason("af-south-1", "ebs:io2", "EBS io2 storage"),
         "unit": "GiB-month"}
    ]  # fmt: skip
    gp3 = res(VOLUME, "gp3", {"size": 10.0, "type": "gp3", "iops": 4000.0})
    eu = price_resources([gp3], PricingOptions(region="eu-west-1"))
    eu_rates = SERVICE["regions"]["eu-west-1"]
    storage, iops = eu_rates["ebs:gp3"]["usd"], eu_rates["ebs_iops:gp3"]["usd"]
    assert [(i["name"], i["quantity"], i["unit_price"], i["region"]) for i in eu["items"]] == [
        ("gp3", 10, storage, "eu-west-1"),
        ("gp3 gp3 IOPS above 3,000", 1000, iops, "eu-west-1"),
    ]


def test_launch_template_volumes_by_node_count() -> None:
    mappings = [
        {"ebs": {"volumeSize": 100.0, "volumeType": "io2", "iops": 1000.0}},
        {"ebs": {"volumeSize": 20.0, "volumeType": "gp9"}},  # an unknown type is the EC2 default, gp2
        {"ebs": {"volumeSize": 0.0}},
        {"noDevice": ""},
    ]
    lt = res(LT, "lt", {"instanceType": "g5.xlarge", "blockDeviceMappings": mappings})
    ng = res(
        "aws:eks/nodeGroup:NodeGroup",
        "ng",
        {"scalingConfig": {"desiredSize": 2.0, "maxSize": 3.0}, "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]]},
    )
    cost = price_resources([lt, ng], US)
    assert [(i["name"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"]) for i in cost["items"]][
        1:
    ] == [
        ("ng root volumes (io2)", 200, 300, 25.0, 37.5),  # 100 GiB per node x $0.125
        ("ng root volumes io2 provisioned IOPS", 2000, 3000, 130.0, 195.0),  # 1000 IOPS per node x $0.065
        ("ng root volumes (gp2)", 40, 60, 4.0, 6.0),  # 20 GiB per node x $0.10
    ]


# --- Karpenter labels, requirements, limits ----------------------------------------------------------------------


def spec(itype: str) -> Any:
    return get_catalog().find(itype)


def _label(itype: str, key: str) -> str | None:
    s = spec(itype)
    return (labels.instance_labels(s) if s is not None else labels.type_labels(itype)).get(key)


@pytest.mark.parametrize(
    ("itype", "expected"),
    [
        # karpenter-provider-aws labels: memory in MiB, the GPU name EC2's (GpuInfo), GPU labels only on GPU types.
        ("g5.xlarge", ("g5", "xlarge", "g", "5", "1", "nvidia", "a10g", "4", "16384", "g5.xlarge")),
        ("g4dn.12xlarge", ("g4dn", "12xlarge", "g", "4", "4", "nvidia", "t4", "48", "196608", "g4dn.12xlarge")),
        ("g4ad.xlarge", ("g4ad", "xlarge", "g", "4", "1", "amd", "radeon-pro-v520", "4", "16384", "g4ad.xlarge")),
        ("p4d.24xlarge", ("p4d", "24xlarge", "p", "4", "8", "nvidia", "a100", "96", "1179648", "p4d.24xlarge")),
        ("inf2.xlarge", ("inf2", "xlarge", "inf", "2", None, None, None, "4", "16384", "inf2.xlarge")),
        ("m7i.xlarge", ("m7i", "xlarge", "m", "7", None, None, None, None, None, "m7i.xlarge")),
        # instanceTypeScheme needs a generation digit: no category or generation label without one.
        ("metal.large", ("metal", "large", None, None, None, None, None, None, None, "metal.large")),
    ],
)
def test_karpenter_labels(itype: str, expected: tuple[str | None, ...]) -> None:
    keys = ("instance-family", "instance-size", "instance-category", "instance-generation", "instance-gpu-count",
            "instance-gpu-manufacturer", "instance-gpu-name", "instance-cpu", "instance-memory")  # fmt: skip
    got = [_label(itype, f"karpenter.k8s.aws/{k}") for k in keys]
    assert (*got, _label(itype, "node.kubernetes.io/instance-type")) == expected


def test_karpenter_label_of_a_family_without_letters() -> None:
    # A family the category pattern cannot read has no category or generation label.
    assert _label("5x.large", "karpenter.k8s.aws/instance-category") is None
    assert _label("5x.large", "karpenter.k8s.aws/instance-generation") is None
    assert _label("5x.large", "karpenter.k8s.aws/instance-family") == "5x"


def _admits(itype: str, key: str, op: str, values: list[str]) -> bool:
    return selection.type_admits(itype, spec(itype), [(key, op, values)])


@pytest.mark.parametrize(
    ("op", "values", "g5_xlarge", "g5_12xlarge"),
    [
        # instance-cpu: g5.xlarge has 4 vCPU, g5.12xlarge 48.
        ("In", ["4"], True, False),
        ("NotIn", ["4"], False, True),
        ("Exists", [], True, True),
        ("DoesNotExist", [], False, False),
        ("Gt", ["4"], False, True),
        ("Lt", ["48"], True, False),
        ("Gte", ["48"], False, True),
        ("Gte", ["4"], True, True),
        ("Lte", ["4"], True, False),
        ("Lte", ["3"], False, False),
        ("Gt", [], True, True),  # no bound: the API refuses it, not evaluated, admitted
        ("Gt", ["many"], True, True),  # not a number: admitted (the ceiling errs high)
        ("Near", ["4"], True, True),  # an operator gpucloud does not know admits
    ],
)
def test_karpenter_match_operators(op: str, values: list[str], g5_xlarge: bool, g5_12xlarge: bool) -> None:
    key = "karpenter.k8s.aws/instance-cpu"
    assert _admits("g5.xlarge", key, op, values) is g5_xlarge
    assert _admits("g5.12xlarge", key, op, values) is g5_12xlarge


def test_karpenter_match_keys_it_cannot_evaluate() -> None:
    # m7i.xlarge has no catalog spec: its CPU and memory labels are undecided, so they admit it.
    for key in ("topology.kubernetes.io/zone", "kubernetes.io/os", "karpenter.sh/capacity-type",
                "gpucloud.io/pool", "example.com/team", "karpenter.k8s.aws/instance-cpu",
                "karpenter.k8s.aws/instance-memory"):  # fmt: skip
        assert _admits("m7i.xlarge", key, "In", ["nothing"]) is True
        assert _admits("m7i.xlarge", key, "DoesNotExist", []) is True
    # The architecture comes from the name (Graviton families carry a g after the generation).
    assert _admits("m7i.xlarge", "kubernetes.io/arch", "In", ["arm64"]) is False
    assert _admits("m7g.xlarge", "kubernetes.io/arch", "In", ["arm64"]) is True
    # A GPU label a type lacks: only NotIn and DoesNotExist admit it.
    gpu = "karpenter.k8s.aws/instance-gpu-count"
    assert [_admits("m7i.xlarge", gpu, op, ["1"]) for op in ("In", "NotIn", "Exists", "DoesNotExist", "Gt")] == [
        False,
        True,
        False,
        True,
        False,
    ]
    assert _admits("m7i.xlarge", "karpenter.k8s.aws/instance-family", "In", ["m7i"]) is True
    assert _admits("m7i.xlarge", "node.kubernetes.io/instance-type", "NotIn", ["m7i.xlarge"]) is False
    # Karpenter's aliases: the beta instance-type key is the stable one.
    assert _admits("m7i.xlarge", "beta.kubernetes.io/instance-type", "In", ["m5.large"]) is False


def test_karpenter_count_per_limit() -> None:
    g5 = spec("g5.xlarge")  # 4 vCPU, 16 GiB, 1 NVIDIA GPU
    count = selection.limit_nodes
    assert count({"cpu": "12"}, g5) == 3  # exactly 12 / 4, not 2.999...
    assert count({"cpu": "13"}, g5) == 3
    assert count({"memory": "48Gi"}, g5) == 3  # 48 GiB / 16 GiB
    assert count({"nvidia.com/gpu": "5"}, g5) == 5
    assert count({"cpu": "12", "memory": "32Gi", "nvidia.com/gpu": "9"}, g5) == 2  # the tightest
    assert count({"nvidia.com/gpu": "9", "cpu": "40"}, g5) == 9
    # Limits that do not bound this type: another vendor's device, a resource gpucloud does not read, a bad value.
    assert count({"amd.com/gpu": "2", "pods": "10", "cpu": "lots"}, g5) is None
    assert count({"aws.amazon.com/neuron": "4"}, spec("inf2.xlarge")) == 4
    assert count({"amd.com/gpu": "2"}, spec("g4ad.xlarge")) == 2
    # Each unusable limit is passed over, not the end of the list.
    assert count({"cpu": "lots", "memory": "32Gi"}, g5) == 2
    assert count({"amd.com/gpu": "2", "cpu": "8"}, g5) == 2
    assert count({"pods": "10", "cpu": "8"}, g5) == 2
    assert count({"nvidia.com/gpu": "2", "cpu": "8"}, None) is None
    assert count({}, g5) is None


def test_gpu_resource_names() -> None:
    found = [labels.accelerator_resource(spec(t)) for t in ("g5.xlarge", "g4ad.xlarge", "inf2.xlarge", "trn1.32xlarge")]
    assert found == ["nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuron"]


def test_classify_each_kind() -> None:
    assert [
        classify(t)
        for t in (
            INSTANCE,
            "aws:eks/addon:Addon",  # priced (Container Insights) though its prefix is free
            POOL,
            "aws:s3/bucket:Bucket",  # usage-billed though aws:s3/bucket is a free prefix
            "aws:rds/instance:Instance",
            "aws:alb/listener:Listener",
            "aws:iam/role:Role",
            "aws:foo/bar:Baz",
        )
    ] == ["priced", "priced", "priced", "usage", "billed-not-priced", "free", "free", "unclassified"]


# --- Karpenter NodePools -----------------------------------------------------------------------------------------


pool = nodepool


def karpenter_rows(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(i["instance_type"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"], i["rate_source"],
             i["rate_as_of"]) for i in cost["items"]]  # fmt: skip


def test_spot_only_and_mixed_pools() -> None:
    g5 = types_in("g5.xlarge", "g5.2xlarge")
    s = spot_estimate("g5.xlarge")
    # cpu 16: 4 x g5.xlarge (4 vCPU, $1.006 -> $4.024 an hour) beats 2 x g5.2xlarge (8 vCPU, $1.212 -> $2.424).
    spot_only = price_resources([pool("s", [capacity("spot"), g5], {"cpu": "16"}, 1)], US)
    assert karpenter_rows(spot_only) == [("g5.xlarge", "spot", 1, 4, s, "vantage+family-spot-discount", "2026-01-21")]
    both = price_resources([pool("b", [capacity("on-demand", "spot"), g5], {"cpu": "16"}, 1)], US)
    assert karpenter_rows(both) == [
        ("g5.xlarge", "spot", 1, 0, s, "vantage+family-spot-discount", "2026-01-21"),
        ("g5.xlarge", "on-demand", 0, 4, 1.006, "vantage", "2026-01-21"),
    ]
    assert both["warnings"] == [] and both["unpriced"] == []


def test_pool_expected_size_sources() -> None:
    g5 = [types_in("g5.xlarge")]
    note = {"gpucloud.io/expected-nodes": "3"}
    # spec.replicas wins over the annotation; an unknown replicas falls back to it; the limit caps both (cpu 8: 2).
    cases = [
        pool("r", g5, {"cpu": "20"}, 2.0, note),
        pool("a", g5, {"cpu": "20"}, UNKNOWN, note),
        pool("cap", g5, {"cpu": "8"}, 5.0),
        pool("x", g5, {"cpu": "20"}, None, UNKNOWN),
    ]
    assert [karpenter_rows(price_resources([p], US))[0][2:4] for p in cases] == [(2, 5), (3, 5), (2, 2), (0, 5)]
    assert price_resources([cases[3]], US)["warnings"] == [
        "x: Karpenter launches nodes for pending pods only and the NodePool states no expected size (spec.replicas or "
        "the gpucloud.io/expected-nodes annotation): expected cost 0, ceiling from limits"
    ]


def test_unbounded_cpu_pool_reason() -> None:
    cpu = price_resources([pool("c", [types_in("m7i.xlarge")], {"cpu": "16"}, 1)], US)
    reason = (
        "UNBOUNDED CEILING: Karpenter NodePool c sets no limits that bound m7i.xlarge (gpucloud holds no vCPU/memory "
        "figures for non-catalog types): it can launch nodes without end; set spec.limits (cpu, memory, nvidia.com/gpu)"
    )
    assert cpu["unbounded"] == [{"urn": f"{STACK}${POOL}::c", "reason": reason}]
    assert cpu["warnings"] == [reason] and cpu["ceiling_unbounded"] is True
    # The expected node is priced; nothing bounds the ceiling, and nothing is listed as unpriced either.
    assert karpenter_rows(cpu) == [("m7i.xlarge", "on-demand", 1, 0, 0.2016, PAGES, "2025-06-01")]
    assert cpu["unpriced"] == []
    no_limits = price_resources([pool("n", [types_in("m7i.xlarge")], UNKNOWN, 0)], US)
    assert no_limits["unbounded"][0]["reason"] == (
        "UNBOUNDED CEILING: Karpenter NodePool n sets no limits that bound m7i.xlarge: it can launch nodes without "
        "end; set spec.limits (cpu, memory, nvidia.com/gpu)"
    )
    assert no_limits["items"] == []


def test_pool_ties_keep_the_first_type_by_name() -> None:
    # g4dn.metal ($7.824, 8 GPUs) x 1 costs what g4dn.12xlarge ($3.912, 4 GPUs) x 2 does: the first name stays.
    tie = price_resources([pool("t", [types_in("g4dn.metal", "g4dn.12xlarge")], {"nvidia.com/gpu": "8"}, 0)], US)
    assert karpenter_rows(tie) == [("g4dn.12xlarge", "on-demand", 0, 2, 3.912, "vantage", "2026-01-21")]
    # m5.xlarge and m6i.xlarge list at $0.192 both; the expected node goes to the first.
    cheap = price_resources([pool("c", [types_in("m6i.xlarge", "m5.xlarge")], None, 1)], US)
    assert karpenter_rows(cheap) == [("m5.xlarge", "on-demand", 1, 0, 0.192, PAGES, "2025-06-01")]


def test_pool_passes_over_types_without_the_ceiling_rate() -> None:
    # p5e.48xlarge has no On-Demand rate (Capacity Blocks only); p5en.48xlarge, after it, bounds the ceiling.
    cost = price_resources([pool("p", [types_in("p5e.48xlarge", "p5en.48xlarge")], {"nvidia.com/gpu": "16"}, 1)], US)
    assert karpenter_rows(cost) == [("p5en.48xlarge", "on-demand", 1, 2, 63.296, "aws-price-list", "2026-07-28")]
    assert cost["unpriced"] == [] and cost["ceiling_unbounded"] is False


def test_pool_requirements_that_admit_nothing() -> None:
    gone = price_resources([pool("g", [types_in("g5.xlarge"), types_in("g6.xlarge")], {"cpu": "8"}, 1)], US)
    assert reasons(gone) == [
        ("g", "Karpenter NodePool admits no instance type gpucloud can price in us-east-1: no type matches the "
              "requirements")
    ]  # fmt: skip
    no_spec = price_resources([res(POOL, "e", {"metadata": {"name": "e"}})], US)
    # No requirements: every type gpucloud can price, bounded by nothing.
    assert no_spec["ceiling_unbounded"] is True and no_spec["items"] == []


def test_pool_capacity_types_and_requirement_values() -> None:
    reqs = [
        capacity("reserved", "spot", UNKNOWN),
        {"key": "karpenter.k8s.aws/instance-family", "operator": "Exists", "values": None},
        types_in("g5.xlarge", "g5.2xlarge"),
        {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": ["g5.xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]},  # not evaluated
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["1"]},
    ]
    cost = price_resources([pool("p", reqs, {"cpu": "16"}, 1)], US)
    s = spot_estimate("g5.2xlarge")
    # reserved bills On-Demand: the ceiling is On-Demand, the expected node spot; g5.xlarge is excluded.
    assert karpenter_rows(cost) == [
        ("g5.2xlarge", "spot", 1, 0, s, "vantage+family-spot-discount", "2026-01-21"),
        ("g5.2xlarge", "on-demand", 0, 2, 1.212, "vantage", "2026-01-21"),
    ]
    only_unknown = price_resources([pool("u", [capacity(UNKNOWN), types_in("g5.xlarge")], {"cpu": "4"}, 1)], US)
    assert karpenter_rows(only_unknown)[0][1] == "on-demand"  # Karpenter's default capacity type


def test_unpriceable_instances_list_their_node_and_market() -> None:
    od_box = res(INSTANCE, "od", {"instanceType": "x2iedn.32xlarge"})
    block = res(
        INSTANCE, "cb", {"instanceType": "p9.48xlarge", "instanceMarketOptions": {"marketType": "capacity-block"}}
    )
    spot = res(SPOT_REQUEST, "sp", {"instanceType": "p9.48xlarge"})
    cost = price_resources([od_box, block, spot], US)
    not_ec2 = "'p9.48xlarge' is not an EC2 instance type"
    assert [{k: v for k, v in u.items() if k != "urn"} for u in cost["unpriced"]] == [
        {"reason": "x2iedn.32xlarge is not in the gpucloud catalog or the cost rate table; run `gpucloud prices "
         "refresh --region us-east-1 --types x2iedn.32xlarge` to price it", "instance_type": "x2iedn.32xlarge",
         "market": "on-demand", "nodes": 1, "max_nodes": 1},
        {"reason": not_ec2, "instance_type": "p9.48xlarge", "market": "capacity-block", "nodes": 1, "max_nodes": 1},
        {"reason": not_ec2, "instance_type": "p9.48xlarge", "market": "spot", "nodes": 1, "max_nodes": 1},
    ]  # fmt: skip


def test_one_gpu_types_make_a_gpu_pool() -> None:
    cost = price_resources([pool("one", [types_in("g5.xlarge")], None, 0)], US)
    assert cost["unbounded"][0]["reason"].startswith("UNBOUNDED CEILING: Karpenter GPU NodePool one sets no limits")


def refreshed_spot(itype: str, usd: float) -> PriceBook:
    """The shipped prices plus one refreshed us-east-1 spot price (as `gpucloud prices refresh` writes it)."""
    refresh = {"spot_usd": usd, "price_date": "2026-08-02", "price_source": "ec2-spot-price-history"}
    return PriceBook(load_snapshot(), get_catalog(), {"us-east-1": {itype: refresh}})


def test_refreshed_spot_prices_carry_their_own_date() -> None:
    book = refreshed_spot("g5.xlarge", 0.4)
    spot_pool = pool("s", [capacity("spot"), types_in("g5.xlarge")], {"cpu": "8"}, 1)
    cost = price_resources([spot_pool], US, book=book)
    assert karpenter_rows(cost) == [("g5.xlarge", "spot", 1, 2, 0.4, "ec2-spot-price-history", "2026-08-02")]


def test_fleet_prices_a_spot_only_type_by_its_spot_rate() -> None:
    # p5e.48xlarge has no On-Demand rate; with a refreshed $30 spot price it is the dearest type named.
    book = refreshed_spot("p5e.48xlarge", 30.0)
    tcs = {"totalTargetCapacity": 2.0, "defaultTargetCapacityType": "spot"}
    fleet = res(
        FLEET,
        "f",
        {"targetCapacitySpecification": tcs, "launchTemplateConfigs": overrides("g5.xlarge", "p5e.48xlarge")},
    )
    cost = price_resources([fleet], US, book=book)
    assert rows(cost) == [("f", "p5e.48xlarge", "spot", 2, 2, 30.0, 43800.0, 43800.0)]  # 2 x $30 x 730


def test_pool_without_a_type_list_admits_the_cpu_rate_table() -> None:
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i"]}
    cost = price_resources([pool("m", [family], None, 1)], US)
    # Every m7i size in the CPU rate table; the expected node on the cheapest, m7i.large at $0.1008.
    assert karpenter_rows(cost) == [("m7i.large", "on-demand", 1, 0, 0.1008, PAGES, "2025-06-01")]
    assert cost["unbounded"][0]["reason"].startswith(
        "UNBOUNDED CEILING: Karpenter NodePool m sets no limits that bound m7i.2xlarge, m7i.4xlarge, m7i.large, "
        "m7i.xlarge: it can"
    )


def test_unknown_requirement_values_are_dropped() -> None:
    cost = price_resources([pool("u", [types_in(UNKNOWN, "p9.48xlarge")], {"cpu": "8"}, 1)], US)
    assert reasons(cost) == [
        ("u", "Karpenter NodePool admits no instance type gpucloud can price in us-east-1: 'p9.48xlarge' is not an "
              "EC2 instance type")
    ]  # fmt: skip


def test_spot_pool_ranks_types_by_spot_not_on_demand_rates() -> None:
    # A refreshed $0.10 spot price makes g6e.xlarge the cheapest spot node though its On-Demand rate ($1.861) is
    # above g5.xlarge's ($1.006); the ceiling (2 nodes each under cpu 8) is the dearer spot type, g5.xlarge.
    book = refreshed_spot("g6e.xlarge", 0.1)
    cost = price_resources([pool("s", [capacity("spot"), types_in("g5.xlarge", "g6e.xlarge")], {"cpu": "8"}, 1)], US,
                           book=book)  # fmt: skip
    s = spot_estimate("g5.xlarge")
    assert karpenter_rows(cost) == [
        ("g6e.xlarge", "spot", 1, 0, 0.1, "ec2-spot-price-history", "2026-08-02"),
        ("g5.xlarge", "spot", 0, 2, s, "vantage+family-spot-discount", "2026-01-21"),
    ]


def test_volume_performance_without_a_regional_rate_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = rates.region_rates

    def without_gp3_iops(region: str, cache_file: Any = None) -> dict[str, rates.Rate]:
        table = shipped(region, cache_file)
        table.pop("ebs_iops:gp3")
        return table

    # A table that holds gp3 storage and throughput but not gp3 IOPS (as a partial refresh could leave it).
    monkeypatch.setattr(rates, "region_rates", without_gp3_iops)
    vol = res(VOLUME, "v", {"size": 100.0, "type": "gp3", "iops": 4000.0, "throughput": 250.0})
    cost = price_resources([vol], US)
    assert [(i["name"], i["quantity"], i["monthly"]) for i in cost["items"]] == [
        ("v", 100, 8.0),  # 100 GiB x $0.08
        ("v gp3 throughput above 125 MB/s", 125, 5.0),  # 125 MB/s x $0.04
    ]
    assert cost["unpriced"] == [
        {
            "urn": vol["urn"],
            "reason": rates.missing_reason("us-east-1", "ebs_iops:gp3", "EBS gp3 IOPS above 3,000"),
            "unit": "IOPS-month",
        }
    ]
