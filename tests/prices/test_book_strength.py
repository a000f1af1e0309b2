"""Price book edge paths the mutation run found untested: cache figures that are not prices, cache source names,
family-discount derivations, an instance type outside the catalog, refreshed non-availability and JSON output.
Family discounts are read from the shipped catalog; snapshot figures from the snapshot JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from gpucloud.catalog import Catalog, get_catalog
from gpucloud.prices.book import Figure, PriceBook, RegionalRates, get_price_book, load_snapshot, region_rates
from gpucloud.prices.cache import write_cache


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


# A hand-written snapshot: each figure below is read from it, or derived from it with the shipped family discounts
# (g5: spot 0.585, 3y 0.635 off On-Demand; p5: 1y 0.39, 3y 0.635, spot 0.535).
TINY = {
    "schema": "gpucloud.prices.snapshot/v1",
    "sources": {"s1": {"as_of": "2026-01-01"}, "s2": {"note": "undated"}},
    "regions": {
        "us-east-1": {
            "g5.xlarge": {
                "on_demand": {"usd": 1, "source": "s1"},
                "capacity_block": {"usd": "2", "source": "s1"},
                "reserved_1y": {"usd": 0.5, "source": "s2"},
            },
            "p5.48xlarge": {"on_demand": {"usd": 50.0, "source": "unlisted"}, "capacity_block": ["x"]},
        }
    },
}


def test_snapshot_figures_their_sources_and_dates() -> None:
    b = PriceBook(TINY, get_catalog(), {})
    assert (b.regions, b.sources, b.commitment_basis) == (("us-east-1",), TINY["sources"], {})
    g5 = b.rates("g5.xlarge", "us-east-1")
    assert g5.on_demand == Figure(1.0, "s1", "2026-01-01")
    assert g5.reserved_1y == Figure(0.5, "s2", None)
    # 1 x (1 - 0.635) = 0.365 and 1 x (1 - 0.585) = 0.415, dated like the On-Demand figure they come from.
    assert g5.reserved_3y == Figure(0.365, "s1+family-discount", "2026-01-01", True)
    assert g5.spot == Figure(0.415, "s1+family-spot-discount", "2026-01-01", True)
    assert g5.capacity_block is None  # a string is not a rate
    assert g5.reasons == {"capacity_block": "g5.xlarge is not offered through Capacity Blocks"}
    p5 = b.rates("p5.48xlarge", "us-east-1")
    assert p5.on_demand == Figure(50.0, "unlisted", None)
    # 50 x (1 - 0.39) = 30.5, 50 x (1 - 0.635) = 18.25, 50 x (1 - 0.535) = 23.25.
    assert p5.reserved_1y == Figure(30.5, "unlisted+family-discount", None, True)
    assert p5.reserved_3y == Figure(18.25, "unlisted+family-discount", None, True)
    assert p5.spot == Figure(23.25, "unlisted+family-spot-discount", None, True)
    assert p5.reasons == {
        # The EC2 user guide lists p5.48xlarge Capacity Blocks in us-east-1 (gpucloud/catalog/capacity_blocks.json).
        "capacity_block": "no Capacity Block rate for p5.48xlarge in us-east-1 in the shipped snapshot (AWS lists "
        "p5.48xlarge Capacity Blocks in us-east-1); run `gpucloud prices refresh --region us-east-1` "
        "(DescribeCapacityBlockOfferings)"
    }
    assert (p5.spot_stats, p5.availability_zones) == (None, None)


def test_type_missing_from_a_priced_region_names_the_refresh_to_run() -> None:
    r = PriceBook(TINY, get_catalog(), {}).rates("g6.xlarge", "us-east-1")
    missing = (
        "g6.xlarge has no price in us-east-1 in the shipped snapshot (not sold there per its sources); "
        "run `gpucloud prices refresh --region us-east-1 --types g6.xlarge` to check"
    )
    assert (r.on_demand, r.spot, r.reserved_1y, r.reserved_3y, r.capacity_block) == (None,) * 5
    assert r.reasons == {
        "on_demand": missing,
        "capacity_block": "g6.xlarge is not offered through Capacity Blocks",
        "reserved_1y": missing,
        "reserved_3y": missing,
        "spot": missing,
    }


def test_overlay_for_another_region_leaves_this_one_alone() -> None:
    b = PriceBook(TINY, get_catalog(), {"eu-west-1": {"g5.xlarge": {"on_demand_usd": 9.0, "price_date": "d"}}})
    assert b.rates("g5.xlarge", "us-east-1").on_demand == Figure(1.0, "s1", "2026-01-01")


def test_spot_cache_figure_wins_over_the_family_discount() -> None:
    cached = {"spot_usd": 0.3, "price_date": "2026-11-01", "price_source": "ec2-spot-price-history"}
    r = PriceBook(TINY, get_catalog(), {"us-east-1": {"g5.xlarge": cached}}).rates("g5.xlarge", "us-east-1")
    assert r.spot == Figure(0.3, "ec2-spot-price-history", "2026-11-01")
    assert r.on_demand == Figure(1.0, "s1", "2026-01-01")


def test_type_not_sold_as_spot_gets_no_spot_figure() -> None:
    """A catalog in which g5.xlarge is not sold as spot: neither a cached spot price nor the family discount."""
    shipped = get_catalog()
    specs = [dataclasses.replace(s, spot=False) if s.instance_type == "g5.xlarge" else s for s in shipped]
    catalog = Catalog(specs, shipped.families.values())
    cached = {"spot_usd": 0.3, "price_date": "2026-11-01"}
    r = PriceBook(TINY, catalog, {"us-east-1": {"g5.xlarge": cached}}).rates("g5.xlarge", "us-east-1")
    assert r.spot is None
    assert r.reasons["spot"] == "g5.xlarge is not sold as spot"
    assert r.on_demand == Figure(1.0, "s1", "2026-01-01")


def test_region_rates_reads_the_shipped_book_and_the_configured_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    get_price_book.cache_clear()
    try:
        assert region_rates("g5.xlarge", "us-east-1").on_demand == Figure(1.006, "vantage", "2026-01-21")
        cache = tmp_path / "prices.json"
        write_cache("us-east-1", {"g5.xlarge": {"on_demand_usd": 1.1, "price_date": "2026-11-01"}}, "t0", cache)
        monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
        get_price_book.cache_clear()
        assert region_rates("g5.xlarge", "us-east-1").on_demand == Figure(1.1, "price-cache", "2026-11-01")
        assert get_price_book() is get_price_book()
    finally:
        get_price_book.cache_clear()


def test_family_derivations_round_to_six_decimals() -> None:
    cached = {"on_demand_usd": 1.2345678, "price_date": "2026-11-01", "price_source": "aws-price-list-api"}
    r = PriceBook(TINY, get_catalog(), {"mx-central-1": {"g5.xlarge": cached}}).rates("g5.xlarge", "mx-central-1")
    # 1.2345678 x 0.63 = 0.77777771, x 0.365 = 0.45061725, x 0.415 = 0.51234564 (g5: 1y 37 %, 3y 63.5 %, spot 58.5 %).
    assert (r.reserved_1y.usd, r.reserved_3y.usd, r.spot.usd) == (0.777778, 0.450617, 0.512346)  # type: ignore[union-attr]
