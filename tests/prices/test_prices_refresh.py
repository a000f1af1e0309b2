"""Price refresh: Price List API through botocore's Stubber (moto does not implement it), spot price history
from a moto server, the cache file, and the catalog/cost engine preferring it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpucloud import aws as aws_mod
from gpucloud.catalog import get_catalog
from gpucloud.cli import main
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.prices.book import Figure, get_price_book
from gpucloud.prices.cache import load_cache
from gpucloud.prices.refresh import on_demand_from_price_list, price_list_filters, refresh

NOW = datetime(2026, 8, 2, 9, 30, tzinfo=UTC)


def sku(instance_type: str, usd: str, usagetype: str = "BoxUsage:p5.48xlarge") -> str:
    return json.dumps(
        {
            "product": {
                "attributes": {"instanceType": instance_type, "usagetype": usagetype, "marketoption": "OnDemand"}
            },
            "terms": {
                "OnDemand": {
                    "ABC.JRTCKXETXF": {
                        "priceDimensions": {
                            "ABC.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "pricePerUnit": {"USD": usd},
                                "description": "x",
                            }
                        }
                    }
                }
            },
        }
    )


def with_reserved(doc: str, one_year: str, three_year: str) -> str:
    data = json.loads(doc)
    data["terms"]["Reserved"] = {
        f"R{i}": {
            "termAttributes": {"LeaseContractLength": term, "OfferingClass": cls, "PurchaseOption": option},
            "priceDimensions": {f"R{i}.D": {"unit": unit, "pricePerUnit": {"USD": usd}}},
        }
        for i, (term, cls, option, unit, usd) in enumerate(
            [
                ("1yr", "standard", "No Upfront", "Hrs", one_year),
                ("3yr", "standard", "No Upfront", "Hrs", three_year),
                ("1yr", "convertible", "No Upfront", "Hrs", "40.0"),
                ("3yr", "standard", "All Upfront", "Quantity", "500000"),
            ]
        )
    }
    return json.dumps(data)


class Ec2WithCapacityBlocks:
    """moto's EC2 (offerings, spot history) with DescribeCapacityBlockOfferings stubbed: moto does not implement
    it. The stub expects exactly the one-instance, one-day search for the next 8 weeks."""

    def __init__(self, moto_client: Any) -> None:
        self.moto = moto_client
        self.blocks = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
        self.stub = Stubber(self.blocks)
        offer = {"CapacityBlockOfferingId": "cb-1", "InstanceType": "p5.48xlarge", "AvailabilityZone": "us-east-1a",
                 "InstanceCount": 1, "CapacityBlockDurationHours": 24, "CurrencyCode": "USD"}  # fmt: skip
        self.stub.add_response(
            "describe_capacity_block_offerings",
            {"CapacityBlockOfferings": [{**offer, "UpfrontFee": "996.672"}, {**offer, "UpfrontFee": "1200.00"}]},
            {"InstanceType": "p5.48xlarge", "InstanceCount": 1, "CapacityDurationHours": 24,
             "StartDateRange": NOW, "EndDateRange": NOW + timedelta(weeks=8)},
        )  # fmt: skip
        self.stub.activate()

    def describe_capacity_block_offerings(self, **kwargs: Any) -> Any:
        return self.blocks.describe_capacity_block_offerings(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.moto, name)


def pricing_client(answers: dict[str, list[str]]) -> Any:
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    for itype, entries in answers.items():
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": entries},
            {"ServiceCode": "AmazonEC2", "Filters": price_list_filters(itype, "us-east-1"), "MaxResults": 100},
        )
    stub.activate()
    return client


def test_filters_are_the_documented_linux_on_demand_set() -> None:
    assert {f["Field"]: f["Value"] for f in price_list_filters("p5.48xlarge", "us-east-2")} == {
        "instanceType": "p5.48xlarge",
        "regionCode": "us-east-2",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
    }


def test_price_list_parsing_skips_non_box_usage() -> None:
    assert on_demand_from_price_list([sku("p5.48xlarge", "1.0", "HostUsage:p5"), sku("p5.48xlarge", "54.5")]) == 54.5
    assert on_demand_from_price_list([sku("p5.48xlarge", "0.0000")]) is None


def test_refresh_writes_cache_and_catalog_and_cost_prefer_it(
    aws_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "prices.json"
    pricing = pricing_client(
        {
            "p5.48xlarge": [with_reserved(sku("p5.48xlarge", "50.00"), "31.7", "21.1")],
            "g6e.24xlarge": [sku("g6e.24xlarge", "15.066")],
        }
    )

    ec2 = Ec2WithCapacityBlocks(boto3.client("ec2", region_name="us-east-1", endpoint_url=aws_env))

    def clients(service: str, region: str) -> Any:
        return pricing if service == "pricing" else ec2

    result = refresh("us-east-1", ["p5.48xlarge", "g6e.24xlarge"], clients=clients, now=NOW, cache_file=cache)
    # moto's spot history answers one row per offered AZ with the constant 0.00001.
    assert [(p["instance_type"], p["on_demand_usd"], p["spot_usd"], p["reserved_1y_usd"], p["reserved_3y_usd"],
             p["capacity_block_usd"]) for p in result["prices"]] == [
        ("p5.48xlarge", 50.0, 0.00001, 31.7, 21.1, round(996.672 / 24, 6)),
        ("g6e.24xlarge", 15.066, 0.00001, None, None, None),
    ]  # fmt: skip
    ec2.stub.assert_no_pending_responses()  # only p5.48xlarge is sold through Capacity Blocks
    data = load_cache(cache)
    assert data is not None and data["refreshed_at"] == "2026-08-02T09:30:00+00:00"
    entry = dict(data["regions"]["us-east-1"]["p5.48xlarge"])
    zones = entry.pop("availability_zones")
    stats = entry.pop("spot_stats")
    assert entry == {
        "on_demand_usd": 50.0,
        "reserved_1y_usd": 31.7,
        "reserved_3y_usd": 21.1,
        "spot_usd": 0.00001,
        "capacity_block_usd": 41.528,
        "price_date": "2026-08-02",
        "price_source": "aws-price-list-api+ec2-spot-price-history+ec2-capacity-block-offerings",
    }
    assert zones and all(z.startswith("us-east-1") for z in zones)
    assert (stats["min"], stats["max"], stats["samples"], stats["days"]) == (0.00001, 0.00001, len(zones), 1.0)
    assert sorted(stats["by_az"]) == zones
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_price_book.cache_clear()
    book = get_price_book()
    p5 = book.rates("p5.48xlarge", "us-east-1")
    assert p5.on_demand == Figure(50.0, "aws-price-list-api", "2026-08-02")
    assert p5.spot == Figure(0.00001, "ec2-spot-price-history", "2026-08-02")
    assert p5.capacity_block == Figure(41.528, "ec2-capacity-block-offerings", "2026-08-02")
    assert (p5.reserved_1y, p5.reserved_3y) == (
        Figure(31.7, "aws-price-list-api", "2026-08-02"),
        Figure(21.1, "aws-price-list-api", "2026-08-02"),
    )
    assert p5.spot_stats is not None and p5.spot_stats["samples"] == len(zones)
    assert book.rates("g6e.24xlarge", "us-east-1").on_demand.usd == 15.066  # type: ignore[union-attr]
    # The catalog stays a leaf: the refreshed cache does not change its shipped figures.
    assert get_catalog().get("p5.48xlarge").on_demand_usd == 55.04
    ng = {
        "urn": "urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::ng",
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": "ng",
        "inputs": {"instanceTypes": ["g6e.24xlarge"], "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}},
    }
    assert price_resources([ng], PricingOptions(region="us-east-1"))["monthly"] == round(15.066 * 730, 2)
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    get_price_book.cache_clear()
    assert get_price_book().rates("p5.48xlarge", "us-east-1").on_demand == Figure(55.04, "aws-price-list", "2026-07-28")
    get_price_book.cache_clear()


def test_corrupt_cache_is_ignored_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "prices.json"
    cache.write_text("{not json")
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_price_book.cache_clear()
    with pytest.warns(UserWarning, match="ignoring price cache"):
        on_demand = get_price_book().rates("p5.48xlarge", "us-east-1").on_demand
    assert on_demand is not None and on_demand.usd == 55.04
    get_price_book.cache_clear()


def test_cli_refresh_json(aws_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    cache = tmp_path / "c" / "prices.json"
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    pricing = pricing_client({"g5.xlarge": [sku("g5.xlarge", "1.006", "BoxUsage:g5.xlarge")]})

    def clients(service: str, region: str) -> Any:
        return pricing if service == "pricing" else boto3.client(service, region_name=region, endpoint_url=aws_env)  # type: ignore[call-overload]

    monkeypatch.setattr(aws_mod, "default_clients", clients)
    assert main(["prices", "refresh", "--types", "g5.xlarge", "--no-services", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cache_file"] == str(cache) and out["prices"][0]["on_demand_usd"] == 1.006
    assert main(["prices", "show", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["cache"]["regions"]["us-east-1"]["g5.xlarge"]["on_demand_usd"] == 1.006
    assert {"item": "NAT gateway", "usd": 0.045, "unit": "hour"}.items() <= shown["service_rates"][2].items()


def test_cli_refresh_bad_input_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(tmp_path / "p.json"))
    assert main(["prices", "refresh", "--region", "us-east-9"]) == 2
    assert "unknown AWS region 'us-east-9'" in capsys.readouterr().err
    assert main(["prices", "refresh", "--types", "p5.48xlarg"]) == 2
    assert "unknown instance type 'p5.48xlarg' (did you mean 'p5.48xlarge'" in capsys.readouterr().err
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    assert main(["prices", "refresh", "--types", "g5.xlarge"]) == 2
    assert "price cache is disabled" in capsys.readouterr().err


def test_cli_refresh_access_denied_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(tmp_path / "p.json"))
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    stub.add_client_error("get_products", "AccessDeniedException", "no pricing:GetProducts", 400)
    stub.activate()
    monkeypatch.setattr(aws_mod, "default_clients", lambda service, region: client)
    assert main(["prices", "refresh", "--types", "g5.xlarge"]) == 2
    err = capsys.readouterr().err
    assert "AWS denied GetProducts (AccessDeniedException: no pricing:GetProducts)" in err


def test_cli_show_rates_for_a_region(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    get_price_book.cache_clear()
    assert main(["prices", "show", "--region", "eu-west-1", "--types", "g5.12xlarge", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["snapshot"]["sources"]["vantage"]["as_of"] == "2026-01-21"
    (row,) = shown["rates"]
    assert (row["region"], row["on_demand"]["usd"], row["reserved_1y"]["usd"], row["capacity_block"]) == (
        "eu-west-1",
        6.33167,
        3.98895,
        None,
    )
    assert main(["prices", "show", "--region", "eu-west-1", "--types", "g5.12xlarg"]) == 2
    assert "--types: unknown instance type 'g5.12xlarg'" in capsys.readouterr().err
    get_price_book.cache_clear()
