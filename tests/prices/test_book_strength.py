"""Price book edge paths the mutation run found untested: cache figures that are not prices, cache source names,
family-discount derivations, an instance type outside the catalog, refreshed non-availability and JSON output.
Family discounts are read from the shipped catalog; snapshot figures from the snapshot JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpucloud.catalog import get_catalog
from gpucloud.prices.book import Figure, PriceBook, RegionalRates, load_snapshot


def book(overlays: dict[str, Any]) -> PriceBook:
    return PriceBook(load_snapshot(), get_catalog(), overlays)


def test_refreshed_absence_unprices_every_market() -> None:
    r = book({"us-east-1": {"g5.xlarge": {"availability_zones": [], "price_date": "2026-11-01"}}}).rates(
        "g5.xlarge", "us-east-1"
    )
    gone = "g5.xlarge is not offered in us-east-1 (DescribeInstanceTypeOfferings, 2026-11-01)"
    reasons = dict.fromkeys(("on_demand", "spot", "capacity_block", "reserved_1y", "reserved_3y"), gone)
    assert r == RegionalRates("g5.xlarge", "us-east-1", None, None, None, None, None, reasons, None, ())


def test_type_outside_the_catalog_gets_no_family_derivations() -> None:
    r = book({"us-east-1": {"m7i.xlarge": {"on_demand_usd": 0.2016, "price_date": 20261101}}}).rates(
        "m7i.xlarge", "us-east-1"
    )
    assert r.instance_type == "m7i.xlarge"
    assert r.on_demand == Figure(0.2016, "price-cache", None)
    assert (r.spot, r.reserved_1y, r.reserved_3y) == (None, None, None)
    assert r.reasons["reserved_1y"] == "no reserved_1y rate or family discount for m7i.xlarge"
    assert r.reasons["reserved_3y"] == "no reserved_3y rate or family discount for m7i.xlarge"
    assert r.reasons["spot"] == (
        "no spot price for m7i.xlarge in us-east-1: refresh the spot price history "
        "(`gpucloud prices refresh --region us-east-1 --types m7i.xlarge`)"
    )


def test_cache_only_region_derives_commitments_from_the_family_discount() -> None:
    fam = get_catalog().families["g5"]
    cached = {"on_demand_usd": 1.2, "price_date": "2026-11-01", "price_source": "aws-price-list-api",
              "spot_stats": ["not", "a", "mapping"]}  # fmt: skip
    r = book({"mx-central-1": {"g5.xlarge": cached}}).rates("g5.xlarge", "mx-central-1")
    assert r.on_demand == Figure(1.2, "aws-price-list-api", "2026-11-01")
    src = "aws-price-list-api+family-discount"
    assert r.reserved_1y == Figure(round(1.2 * (1 - fam.reserved_1y), 6), src, "2026-11-01", True)
    assert r.reserved_3y == Figure(round(1.2 * (1 - fam.reserved_3y), 6), src, "2026-11-01", True)
    assert r.reserved_1y.usd == 0.756  # 1.2 x (1 - 0.37), g5's 1y discount
    assert r.spot_stats is None and "reserved_1y" not in r.reasons


def test_zero_and_boolean_cache_figures_fall_back_to_the_snapshot() -> None:
    r = book({"us-east-1": {"g5.xlarge": {"on_demand_usd": 0, "reserved_1y_usd": True}}}).rates(
        "g5.xlarge", "us-east-1"
    )
    assert r.on_demand == Figure(1.006, "vantage", "2026-01-21")
    assert r.reserved_1y == Figure(0.63378, "vantage", "2026-01-21")


def test_cache_source_names_each_api_only_when_all_parts_are_known() -> None:
    every = "aws-price-list-api+ec2-spot-price-history+ec2-capacity-block-offerings+ec2-offerings"
    r = book({"us-east-1": {"g5.xlarge": {"on_demand_usd": 2.0, "price_source": every}}}).rates(
        "g5.xlarge", "us-east-1"
    )
    assert r.on_demand == Figure(2.0, "aws-price-list-api", None)
    r = book({"us-east-1": {"g5.xlarge": {"on_demand_usd": 2.0, "price_source": "ec2-offerings"}}}).rates(
        "g5.xlarge", "us-east-1"
    )
    assert r.on_demand == Figure(2.0, "aws-price-list-api", None)
    r = book({"us-east-1": {"g5.xlarge": {"on_demand_usd": 2.0, "price_source": "manual-import"}}}).rates(
        "g5.xlarge", "us-east-1"
    )
    assert r.on_demand == Figure(2.0, "manual-import", None)


def test_capacity_block_only_type_repeats_the_on_demand_reason() -> None:
    r = book({}).rates("p5e.48xlarge", "us-east-1")
    reason = (
        "p5e.48xlarge in us-east-1: no On-Demand SKU in the us-east-1, us-east-2 or us-west-2 price feeds: "
        "sold through Capacity Blocks only"
    )
    assert (r.reasons["on_demand"], r.reasons["reserved_1y"], r.reasons["reserved_3y"], r.reasons["spot"]) == (
        reason, reason, reason, reason,
    )  # fmt: skip


def test_rates_are_memoised_and_json_lists_stats_and_zones() -> None:
    b = book({"us-east-1": {"g5.xlarge": {"availability_zones": ["us-east-1a"], "spot_stats": {"min": 0.3}}}})
    r = b.rates("g5.xlarge", "us-east-1")
    assert b.rates("g5.xlarge", "us-east-1") is r
    out = r.to_json()
    assert (out["instance_type"], out["region"]) == ("g5.xlarge", "us-east-1")
    assert out["unpriced"] == {"capacity_block": "g5.xlarge is not offered through Capacity Blocks"}
    assert (out["spot_stats"], out["availability_zones"]) == ({"min": 0.3}, ["us-east-1a"])
    bare = book({}).rates("p5e.48xlarge", "us-east-1").to_json()
    assert "spot_stats" not in bare and "availability_zones" not in bare
    assert bare["unpriced"]["on_demand"].startswith("p5e.48xlarge in us-east-1: no On-Demand SKU")


def test_reason_defaults_name_the_market() -> None:
    r = RegionalRates("g5.xlarge", "us-east-1", None, None, None, None, None, {"spot": "why"})
    assert (r.reason("spot"), r.reason("reserved_3y")) == ("why", "no reserved-3y rate for g5.xlarge")


def test_snapshot_from_a_path_and_its_commitment_basis(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"schema": "gpucloud.prices.snapshot/v1", "commitment_basis": {"reserved_1y": "x"}}))
    data = load_snapshot(path)
    b = PriceBook(data, get_catalog(), {})
    assert (b.commitment_basis, b.regions, b.sources) == ({"reserved_1y": "x"}, (), {})
    assert (
        PriceBook(load_snapshot(), get_catalog(), {})
        .commitment_basis["reserved_1y"]
        .startswith("1-year Standard Reserved Instance, No Upfront")
    )
