"""Prices per region and size: the shipped snapshot, the price book over it, and the engine pricing a plan in
its own region. Expected figures are read from the snapshot JSON file itself, not through the code under test."""

from __future__ import annotations

import json
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.catalog import get_catalog
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.prices.book import Figure, PriceBook, get_price_book, load_snapshot

REQUIRED_REGIONS = (
    "us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-north-1", "ap-northeast-1",
    "ap-southeast-2",
)  # fmt: skip
REQUIRED_FAMILIES = (
    "g4dn", "g5", "g6", "g6e", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "trn1", "trn1n", "trn2", "inf2",
)  # fmt: skip
CAPACITY_BLOCK_ONLY = {"p5e.48xlarge", "trn2.48xlarge"}
NG = "aws:eks/nodeGroup:NodeGroup"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("gpucloud.prices").joinpath("snapshot.json").read_text(encoding="utf-8")
    )
    return data


@pytest.fixture(scope="module")
def book() -> PriceBook:
    # No overlays: the shipped snapshot only, whatever the developer's price cache holds.
    return PriceBook(load_snapshot(), get_catalog(), overlays={})


def node_group(name: str, itype: str, desired: float = 1.0, maximum: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::{NG}::{name}",
        "type": NG,
        "name": name,
        "custom": True,
        "inputs": {"instanceTypes": [itype], "scalingConfig": {"desiredSize": desired, "maxSize": maximum}, **extra},
    }


# --- the snapshot ----------------------------------------------------------------------------------------------


def test_snapshot_covers_the_required_regions_and_dates_every_figure(raw: dict[str, Any]) -> None:
    assert set(REQUIRED_REGIONS) <= set(raw["regions"])
    assert raw["sources"]["vantage"]["as_of"] == "2026-01-21"
    assert raw["sources"]["aws-price-list"]["as_of"] == "2026-07-28"
    for region, table in raw["regions"].items():
        for itype, entry in table.items():
            for market in ("on_demand", "reserved_1y", "capacity_block"):
                if market in entry:
                    fig = entry[market]
                    assert fig["usd"] > 0, (region, itype, market)
                    assert raw["sources"][fig["source"]]["as_of"] or fig["source"] == "aws-capacity-blocks-pre2025"


def test_every_size_of_every_supported_family_is_priced_in_us_east_1(book: PriceBook) -> None:
    catalog = get_catalog()
    sizes = [s.instance_type for s in catalog if s.family in REQUIRED_FAMILIES]
    assert len(sizes) == 46
    unpriced = {t: book.rates(t, "us-east-1").reasons.get("on_demand") for t in sizes}
    unpriced = {t: r for t, r in unpriced.items() if r is not None}
    assert sorted(unpriced) == sorted(CAPACITY_BLOCK_ONLY)
    assert all("Capacity Blocks only" in r for r in unpriced.values())
    for t in CAPACITY_BLOCK_ONLY:
        assert book.rates(t, "us-east-1").capacity_block is not None


@pytest.mark.parametrize(
    ("itype", "usd", "source", "as_of"),
    [
        ("g5.2xlarge", 1.212, "vantage", "2026-01-21"),
        ("g6e.24xlarge", 15.06559, "vantage", "2026-01-21"),
        ("g4dn.16xlarge", 4.352, "vantage", "2026-01-21"),
        ("p5.48xlarge", 55.04, "aws-price-list", "2026-07-28"),
        ("inf2.24xlarge", 6.49063, "vantage", "2026-01-21"),
        ("trn1.2xlarge", 1.34375, "vantage", "2026-01-21"),
    ],
)
def test_us_east_1_sizes_formerly_unpriced(book: PriceBook, itype: str, usd: float, source: str, as_of: str) -> None:
    assert book.rates(itype, "us-east-1").on_demand == Figure(usd, source, as_of)


def test_eu_west_1_is_dearer_and_g6_is_not_sold_there(book: PriceBook, raw: dict[str, Any]) -> None:
    g5 = book.rates("g5.12xlarge", "eu-west-1")
    assert g5.on_demand == Figure(6.33167, "vantage", "2026-01-21")
    assert round(g5.on_demand.usd / book.rates("g5.12xlarge", "us-east-1").on_demand.usd - 1, 3) == 0.116  # type: ignore[union-attr]
    assert g5.reserved_1y == Figure(3.98895, "vantage", "2026-01-21")
    fam = get_catalog().family_pricing("g5")
    assert g5.reserved_3y == Figure(
        round(6.33167 * (1 - fam.reserved_3y), 6), "vantage+family-discount", "2026-01-21", True
    )
    assert g5.spot == Figure(
        round(6.33167 * (1 - fam.spot_discount), 6), "vantage+family-spot-discount", "2026-01-21", True
    )
    g6 = book.rates("g6.xlarge", "eu-west-1")
    assert "g6.xlarge" not in raw["regions"]["eu-west-1"]
    assert (g6.on_demand, g6.spot, g6.reserved_1y, g6.reserved_3y) == (None, None, None, None)
    assert g6.reasons["on_demand"].startswith("g6.xlarge has no price in eu-west-1 in the shipped snapshot")
    assert g6.reasons["spot"] == g6.reasons["on_demand"]


def test_capacity_block_rates_and_reasons(book: PriceBook) -> None:
    p5e = book.rates("p5e.48xlarge", "us-east-1")
    assert p5e.capacity_block == Figure(47.76, "aws-capacity-blocks", "2026-08-01")
    assert book.rates("p5.48xlarge", "us-east-2").capacity_block is None
    assert (
        "run `gpucloud prices refresh --region us-east-2`"
        in book.rates("p5.48xlarge", "us-east-2").reasons["capacity_block"]
    )
    assert book.rates("trn1.2xlarge", "us-east-1").reasons["capacity_block"] == (
        "trn1.2xlarge is not offered through Capacity Blocks"
    )


def test_unknown_region_is_unpriced_with_the_fix(book: PriceBook) -> None:
    r = book.rates("g5.xlarge", "mx-central-1")
    assert r.on_demand is None
    assert r.reasons["on_demand"] == (
        "the shipped price snapshot has no prices for region mx-central-1; "
        "run `gpucloud prices refresh --region mx-central-1`"
    )


def test_cache_overlay_wins_per_region_only() -> None:
    overlays = {"eu-west-1": {"g5.xlarge": {"on_demand_usd": 1.5, "spot_usd": 0.4, "price_date": "2026-11-01",
                                             "price_source": "aws-price-list-api", "reserved_1y_usd": 0.9,
                                             "capacity_block_usd": 2.0, "availability_zones": ["eu-west-1a"],
                                             "spot_stats": {"min": 0.3, "median": 0.4, "max": 0.5}}}}  # fmt: skip
    book = PriceBook(load_snapshot(), get_catalog(), overlays)
    eu = book.rates("g5.xlarge", "eu-west-1")
    assert eu.on_demand == Figure(1.5, "aws-price-list-api", "2026-11-01")
    assert eu.spot == Figure(0.4, "ec2-spot-price-history", "2026-11-01")
    assert (eu.reserved_1y, eu.capacity_block) == (
        Figure(0.9, "aws-price-list-api", "2026-11-01"),
        Figure(2.0, "ec2-capacity-block-offerings", "2026-11-01"),
    )
    assert eu.availability_zones == ("eu-west-1a",) and eu.spot_stats == {"min": 0.3, "median": 0.4, "max": 0.5}
    assert book.rates("g5.xlarge", "us-east-1").on_demand == Figure(1.006, "vantage", "2026-01-21")
    assert eu.to_json()["on_demand"] == {
        "usd": 1.5,
        "source": "aws-price-list-api",
        "as_of": "2026-11-01",
        "estimated": False,
    }
    with pytest.raises(ValueError, match="market 'od' is not one of"):
        eu.get("od")


def test_snapshot_schema_is_checked() -> None:
    with pytest.raises(ValueError, match=r"price snapshot schema 'x' is not 'gpucloud\.prices\.snapshot/v1'"):
        PriceBook({"schema": "x"}, get_catalog())


# --- the engine in the plan's region ---------------------------------------------------------------------------


def test_node_group_is_priced_at_its_regions_rate(raw: dict[str, Any]) -> None:
    for region in REQUIRED_REGIONS:
        entry = raw["regions"][region].get("g5.12xlarge")
        cost = price_resources([node_group("ng", "g5.12xlarge", 2.0, 3.0)], PricingOptions(region=region))
        if entry is None:
            assert cost["items"] == [] and cost["unpriced"][0]["reason"].startswith("g5.12xlarge has no price in")
            continue
        usd = entry["on_demand"]["usd"]
        (item,) = cost["items"]
        assert (item["region"], item["unit_price"], item["monthly"], item["monthly_ceiling"]) == (
            region,
            usd,
            round(2 * usd * 730, 2),
            round(3 * usd * 730, 2),
        )


def test_unsold_type_is_unpriced_never_borrowed() -> None:
    cost = price_resources([node_group("l4", "g6.xlarge")], PricingOptions(region="eu-west-1"))
    assert cost["items"] == [] and cost["monthly"] == 0
    assert cost["unpriced"][0]["reason"].startswith("g6.xlarge has no price in eu-west-1 in the shipped snapshot")


def test_region_comes_from_the_default_provider_else_us_east_1_with_a_warning() -> None:
    provider = {"urn": "urn:pulumi:s::p::pulumi:providers:aws::default_7_51_1", "type": "pulumi:providers:aws",
                "name": "default_7_51_1", "custom": True, "inputs": {"region": "eu-central-1"}}  # fmt: skip
    cost = price_resources([provider, node_group("ng", "g5.xlarge")])
    assert (cost["region"], cost["items"][0]["unit_price"], cost["warnings"]) == ("eu-central-1", 1.258, [])
    bare = price_resources([node_group("ng", "g5.xlarge")])
    assert bare["region"] == "us-east-1" and bare["items"][0]["unit_price"] == 1.006
    assert bare["warnings"] == [
        "the plan names no AWS region (aws:region config or an aws provider's region): priced at us-east-1, "
        "the AWS provider's fallback"
    ]


def test_service_rates_outside_their_regions_are_listed_not_borrowed() -> None:
    nat = {"urn": "urn:x::aws:ec2/natGateway:NatGateway::nat", "type": "aws:ec2/natGateway:NatGateway",
           "name": "nat", "custom": True, "inputs": {}}  # fmt: skip
    eks = {"urn": "urn:x::aws:eks/cluster:Cluster::c", "type": "aws:eks/cluster:Cluster", "name": "c",
           "custom": True, "inputs": {"version": "1.35"}}  # fmt: skip
    scratch = {"urn": "urn:x::aws:fsx/lustreFileSystem:LustreFileSystem::fs",
               "type": "aws:fsx/lustreFileSystem:LustreFileSystem", "name": "fs", "custom": True,
               "inputs": {"storageCapacity": 1200.0, "deploymentType": "SCRATCH_2"}}  # fmt: skip
    sys_ng = node_group("sys", "m7i.xlarge")
    cost = price_resources([nat, eks, scratch, sys_ng], PricingOptions(region="eu-west-1", as_of=date(2026, 12, 1)))
    # eu-west-1's own rates (AWS pricing-page data): NAT 0.048 $/h x 730 = 35.04; m7i.xlarge 0.2247 $/h x 730 =
    # 164.031. FSx for Lustre SCRATCH_2 has no eu-west-1 figure: listed with the reason, not priced at us-east-1's.
    assert [(i["name"], i["unit_price"], i["monthly"]) for i in cost["items"]] == [
        ("nat", 0.048, 35.04),
        ("c", 0.1, 73.0),
        ("sys", 0.2247, 164.03),
    ]
    reasons = [u["reason"] for u in cost["unpriced"] if not u["reason"].startswith("usage-billed")]
    assert reasons == [
        "no eu-west-1 list price for FSx for Lustre SCRATCH_2 SSD in gpucloud's service rates (it holds us-east-1, "
        "us-east-2, us-west-2); not priced at another region's rate: run `gpucloud prices refresh --region "
        "eu-west-1` to fetch it from the AWS Price List"
    ]
    us = price_resources([sys_ng], PricingOptions(region="us-west-2"))
    assert us["items"][0]["unit_price"] == 0.2016


@pytest.fixture(scope="module")
def dev_in_eu_west_1() -> dict[str, Any]:
    from gpucloud.cost import price_plan
    from gpucloud.plan import run_program

    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    platform = dict(config["gpucloud:platform"])
    platform.update(region="eu-west-1", availabilityZones=["eu-west-1a", "eu-west-1b"])
    platform["storage"] = {
        **platform["storage"],
        "fsx": {**platform["storage"]["fsx"], "availabilityZone": "eu-west-1a"},
    }
    plan = run_program(root, "dev", config_overrides={"aws:region": "eu-west-1", "gpucloud:platform": platform})
    cost: dict[str, Any] = price_plan(plan)
    return cost


def test_dev_stack_copied_to_eu_west_1_is_priced_at_eu_west_1_rates(
    dev_in_eu_west_1: dict[str, Any], raw: dict[str, Any]
) -> None:
    cost = dev_in_eu_west_1
    assert cost["region"] == "eu-west-1"
    gpu_items = [i for i in cost["items"] if i["instance_type"] and i["instance_type"] in get_catalog()]
    assert gpu_items
    for item in gpu_items:
        od = raw["regions"]["eu-west-1"][item["instance_type"]]["on_demand"]["usd"]
        fam = get_catalog().family_pricing(item["instance_type"])
        expected = od if item["pricing"] == "on-demand" else round(od * (1 - fam.spot_discount), 6)
        assert (item["region"], item["unit_price"]) == ("eu-west-1", expected)
    # dev-l4 lists g6.12xlarge and g6.24xlarge first; g6 is not sold in eu-west-1, so g5.12xlarge is priced.
    assert {i["instance_type"] for i in gpu_items} >= {"g5.12xlarge"}
    assert any("overrides g6.12xlarge, g6.24xlarge have no usable price in eu-west-1" in w for w in cost["warnings"])
    # Region-varying service rates (NAT, EBS, FSx, CPU types) are eu-west-1's or listed, never us-east-1's.
    assert all(i["region"] == "eu-west-1" for i in cost["items"])
    assert not any(i["unit_price"] == 0.045 and i["unit"] == "hour" for i in cost["items"])
    nat = next(i for i in cost["items"] if i["name"] == "gpucloud-dev-net-nat-eu-west-1a")
    assert (nat["unit_price"], nat["monthly"]) == (0.048, 35.04)
    assert not any("list price for a NAT gateway" in u["reason"] for u in cost["unpriced"])
    assert any("no eu-west-1 list price for FSx for Lustre SCRATCH_2 SSD" in u["reason"] for u in cost["unpriced"])


def test_get_price_book_is_cached() -> None:
    assert get_price_book() is get_price_book()
