"""Price refresh edge paths, all through botocore's Stubber (no moto server, so each test runs in milliseconds):
Price List documents with missing parts, paginated answers, spot history statistics, Capacity Block offerings
and their error codes, availability, and how refresh() assembles the cache entry and its result.

Response and request field names are botocore's `pricing` (2017-10-15) and `ec2` (2016-11-15) models: GetProducts
answers ``PriceList`` (JSON strings) and ``NextToken``; DescribeSpotPriceHistory rows carry ``AvailabilityZone``,
``InstanceType``, ``SpotPrice`` (a string) and ``Timestamp``; DescribeInstanceTypeOfferings rows ``InstanceType``,
``LocationType`` and ``Location``; DescribeCapacityBlockOfferings offerings ``UpfrontFee`` (a string),
``CurrencyCode`` and ``CapacityBlockDurationHours``. The Stubber rejects any other field. Every expected figure is
worked out by hand in a comment."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from gpucloud.prices.cache import load_cache
from gpucloud.prices.refresh import (
    fetch_availability,
    fetch_capacity_blocks,
    fetch_price_list,
    fetch_service_rates,
    fetch_spot,
    on_demand_from_price_list,
    price_list_filters,
    refresh,
    reserved_from_price_list,
    service_filters,
    service_item,
)

NOW = datetime(2026, 8, 2, 9, 30, tzinfo=UTC)
BOX = {"attributes": {"usagetype": "BoxUsage:g5.xlarge"}}


def client(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")  # type: ignore[call-overload]


def on_demand_term(*dimensions: dict[str, Any]) -> dict[str, Any]:
    return {"T": {"priceDimensions": {f"T.{i}": d for i, d in enumerate(dimensions)}}}


def reserved_term(length: str, cls: str, option: str, *dimensions: dict[str, Any]) -> dict[str, Any]:
    return {
        "termAttributes": {"LeaseContractLength": length, "OfferingClass": cls, "PurchaseOption": option},
        "priceDimensions": {f"D{i}": d for i, d in enumerate(dimensions)},
    }


def hrs(usd: str) -> dict[str, Any]:
    return {"unit": "Hrs", "pricePerUnit": {"USD": usd}}


def box_doc(
    itype: str, on_demand: str | None = None, one_year: str | None = None, three_year: str | None = None
) -> str:
    terms: dict[str, Any] = {}
    if on_demand is not None:
        terms["OnDemand"] = on_demand_term(hrs(on_demand))
    reserved = {}
    if one_year is not None:
        reserved["R1"] = reserved_term("1yr", "standard", "No Upfront", hrs(one_year))
    if three_year is not None:
        reserved["R3"] = reserved_term("3yr", "standard", "No Upfront", hrs(three_year))
    if reserved:
        terms["Reserved"] = reserved
    return json.dumps({"product": {"attributes": {"usagetype": f"BoxUsage:{itype}"}}, "terms": terms})


# --- Price List parsing ---------------------------------------------------------------------------------------------


def test_price_list_filters_are_term_match_filters_in_order() -> None:
    assert price_list_filters("g5.xlarge", "eu-west-1") == [
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "g5.xlarge"},
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "eu-west-1"},
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "licenseModel", "Value": "No License required"},
        {"Type": "TERM_MATCH", "Field": "marketoption", "Value": "OnDemand"},
    ]


def test_reserved_rates_read_standard_no_upfront_hourly_terms_only() -> None:
    host = {
        "product": {"attributes": {"usagetype": "HostUsage:g5"}},
        "terms": {"Reserved": {"H": reserved_term("1yr", "standard", "No Upfront", hrs("9.0"))}},
    }
    terms = {
        "A": {"priceDimensions": {"A0": hrs("8.0")}},  # no termAttributes: not a Standard RI
        "B": {
            "termAttributes": {
                "LeaseContractLength": "1yr",
                "OfferingClass": "standard",
                "PurchaseOption": "No Upfront",
            }
        },  # no priceDimensions
        # A dimension without a price, the hourly rate, then an empty price (not a rate, whatever comes later).
        "C": reserved_term("1yr", "standard", "No Upfront", {"unit": "Hrs"}, hrs("0.634"), hrs("")),
        "G": reserved_term(
            "3yr", "standard", "No Upfront", hrs("0.4256"), {"unit": "Quantity", "pricePerUnit": {"USD": "3000"}}
        ),
        # After the real ones, so that letting any of these through would overwrite them:
        "D": reserved_term("3yr", "standard", "Partial Upfront", hrs("0.2")),
        "E": reserved_term("3yr", "convertible", "No Upfront", hrs("0.5")),
        "F": reserved_term("5yr", "standard", "No Upfront", hrs("0.1")),
    }
    docs: list[Any] = [json.dumps(host), {}, {"product": BOX}, {"product": BOX, "terms": {"Reserved": terms}}]
    assert reserved_from_price_list(docs) == {"1yr": 0.634, "3yr": 0.4256}
    assert reserved_from_price_list([{"product": BOX, "terms": {"OnDemand": on_demand_term(hrs("1.0"))}}]) == {}


def test_on_demand_rate_is_the_first_hourly_positive_box_usage_price() -> None:
    docs: list[Any] = [
        {},
        {"product": {"attributes": {"usagetype": "HostUsage:g5"}}, "terms": {"OnDemand": on_demand_term(hrs("9.0"))}},
        {"product": BOX},
        {"product": BOX, "terms": {"OnDemand": {"T": {}}}},
        {
            "product": BOX,
            "terms": {
                "OnDemand": on_demand_term(
                    {"unit": "Hrs"},
                    hrs(""),
                    hrs("0"),
                    {"unit": "Quantity", "pricePerUnit": {"USD": "5.0"}},
                    hrs("0.85"),
                    hrs("2.0"),
                )
            },
        },
    ]
    assert on_demand_from_price_list(docs) == 0.85
    assert on_demand_from_price_list([json.dumps(docs[-1])]) == 0.85
    assert on_demand_from_price_list([{"product": BOX, "terms": {"Reserved": {}}}]) is None


def test_service_item_tolerates_documents_without_parts() -> None:
    assert service_item({}) is None
    assert service_item({"product": {}}) is None
    assert service_item({"product": {"attributes": {"usagetype": "EU-NatGateway-Hours"}}}) is None
    nat = {
        "product": {"attributes": {"usagetype": "EU-NatGateway-Hours"}},
        "terms": {
            "OnDemand": {"T": {}, "U": {"priceDimensions": {"U0": {"unit": "Hrs"}, "U1": hrs(""), "U2": hrs("0.048")}}}
        },
    }
    assert service_item(nat) == ("nat_gateway_hour", 0.048)
    # Storage in "GB-month" as well as "GB-Mo"; an EBS SKU with no volumeApiName is not a volume type.
    gb_month = {"unit": "GB-month", "pricePerUnit": {"USD": "0.08"}}
    gp3 = {
        "product": {"attributes": {"usagetype": "EBS:VolumeUsage.gp3", "volumeApiName": "gp3"}},
        "terms": {"OnDemand": on_demand_term(gb_month)},
    }
    assert service_item(gp3) == ("ebs:gp3", 0.08)
    assert service_item({**gp3, "product": {"attributes": {"usagetype": "EBS:VolumeUsage.gp3"}}}) is None
    # Lustre needs storage type, throughput and a GB-Mo price; with any missing it is not an item.
    lustre = {"fileSystemType": "Lustre", "storageType": "SSD", "throughputCapacity": "125"}
    gb_mo = on_demand_term({"unit": "GB-Mo", "pricePerUnit": {"USD": "0.145"}})
    assert service_item({"product": {"attributes": lustre}, "terms": {"OnDemand": gb_mo}}) == (
        "fsx_lustre:PERSISTENT_2:125:SSD",
        0.145,
    )
    for missing in ("storageType", "throughputCapacity", "fileSystemType"):
        attrs = {k: v for k, v in lustre.items() if k != missing}
        assert service_item({"product": {"attributes": attrs}, "terms": {"OnDemand": gb_mo}}) is None
    # gp3 throughput: 45.056 $/GiBps-month / 1024 = 0.044 $/MBps-month; 45.0561 / 1024 = 0.04399990... -> 0.044.
    tput = {
        "product": {"attributes": {"usagetype": "EBS:VolumeP-Throughput.gp3"}},
        "terms": {"OnDemand": on_demand_term({"unit": "GiBps-mo", "pricePerUnit": {"USD": "45.0561"}})},
    }
    assert service_item(tput) == ("ebs_throughput:gp3", 0.044)


class FakePricing:
    """A pricing client whose GetProducts pages hold already-parsed documents (botocore marks PriceList items
    `jsonvalue`) or no PriceList at all."""

    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages

    def get_paginator(self, name: str) -> Any:
        assert name == "get_products"
        return self

    def paginate(self, **kwargs: Any) -> Any:
        return (
            self.pages
            if kwargs["ServiceCode"] == "AmazonEC2" and kwargs["Filters"][1]["Value"] == "NAT Gateway"
            else [{}]
        )


def test_fetch_service_rates_reads_parsed_documents_and_keeps_the_first_match() -> None:
    nat = {
        "product": {"attributes": {"usagetype": "EU-NatGateway-Hours"}},
        "terms": {"OnDemand": on_demand_term(hrs("0.048"))},
    }
    later = {**nat, "terms": {"OnDemand": on_demand_term(hrs("0.5"))}}
    found = fetch_service_rates(FakePricing([{"PriceList": [nat, later]}, {}]), "eu-west-1", [])
    assert found == {"nat_gateway_hour": 0.048}


def test_service_filters_lead_with_the_region() -> None:
    assert service_filters("ap-northeast-1", ()) == [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "ap-northeast-1"}
    ]


# --- GetProducts through the Stubber --------------------------------------------------------------------------------


def stub_pages(stub: Stubber, operation: str, answers: list[dict[str, Any]], params: dict[str, Any]) -> None:
    """One stubbed call per answer, chained by NextToken "page1", "page2", ... as the API pages them."""
    for i, answer in enumerate(answers):
        page = dict(answer)
        if i + 1 < len(answers):
            page["NextToken"] = f"page{i + 1}"
        stub.add_response(operation, page, {**params, "NextToken": f"page{i}"} if i else params)


def stub_products(stub: Stubber, itype: str, region: str, pages: list[list[str] | None]) -> None:
    # None: an answer without PriceList.
    answers = [{"FormatVersion": "aws_v1", **({} if e is None else {"PriceList": e})} for e in pages]
    params = {"ServiceCode": "AmazonEC2", "Filters": price_list_filters(itype, region), "MaxResults": 100}
    stub_pages(stub, "get_products", answers, params)


def test_fetch_price_list_follows_pages_and_omits_types_without_a_price() -> None:
    pricing = client("pricing")
    stub = Stubber(pricing)
    host = json.dumps({"product": {"attributes": {"usagetype": "HostUsage:g5"}}, "terms": {}})
    stub_products(stub, "g5.xlarge", "eu-west-1", [[host], [box_doc("g5.xlarge", "1.123", "0.7075", "0.4853")]])
    stub_products(stub, "g6.xlarge", "eu-west-1", [None])
    stub_products(stub, "g6e.xlarge", "eu-west-1", [[box_doc("g6e.xlarge", None, "1.2")]])
    stub.activate()
    found = fetch_price_list(pricing, "eu-west-1", ["g5.xlarge", "g6.xlarge", "g6e.xlarge"])
    stub.assert_no_pending_responses()
    assert found == {"g5.xlarge": {"1yr": 0.7075, "3yr": 0.4853, "on_demand": 1.123}, "g6e.xlarge": {"1yr": 1.2}}


# --- EC2: spot history, availability, Capacity Blocks ---------------------------------------------------------------


def spot_row(itype: str, az: str, price: str, hours_ago: float) -> dict[str, Any]:
    return {
        "InstanceType": itype,
        "AvailabilityZone": az,
        "ProductDescription": "Linux/UNIX",
        "SpotPrice": price,
        "Timestamp": NOW - timedelta(hours=hours_ago),
    }


def stub_spot(stub: Stubber, types: list[str], lookback: timedelta, pages: list[list[dict[str, Any]] | None]) -> None:
    answers = [{} if rows is None else {"SpotPriceHistory": rows} for rows in pages]
    params = {
        "InstanceTypes": types,
        "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": NOW - lookback,
        "EndTime": NOW,
    }
    stub_pages(stub, "describe_spot_price_history", answers, params)


def test_fetch_spot_takes_each_azs_latest_price_and_window_statistics() -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    pages: list[list[dict[str, Any]] | None] = [
        None,  # a page without SpotPriceHistory
        [
            spot_row("g5.xlarge", "us-east-1a", "0.5000001", 2),
            spot_row("g5.xlarge", "us-east-1a", "0.40", 1),
            spot_row("g5.xlarge", "us-east-1b", "0.60", 1),
        ],
        [
            spot_row("g5.xlarge", "us-east-1b", "0.70", 3),
            spot_row("g5.xlarge", "us-east-1c", "0.0", 0.5),
            spot_row("g5.xlarge", "us-east-1d", "0.4512347", 0.5),
            spot_row("g6.xlarge", "us-east-1a", "0.3", 4),
            spot_row("g6.xlarge", "us-east-1a", "0.35", 4),  # the same time: the first row answered stands
        ],
    ]
    stub_spot(stub, ["g5.xlarge", "g6.xlarge"], timedelta(hours=8), pages)
    stub.activate()
    found = fetch_spot(ec2, ["g5.xlarge", "g6.xlarge"], NOW, timedelta(hours=8))
    stub.assert_no_pending_responses()
    # g5: latest per AZ a 0.40 (1 h ago beats 2 h), b 0.60 (1 h beats 3 h), d 0.4512347; c's zero is no price.
    # Median of 0.40, 0.4512347, 0.60 = 0.4512347 -> 0.451235. Samples 0.5000001, 0.40, 0.60, 0.70, 0.4512347:
    # min 0.40, median 0.5000001 -> 0.5, max 0.70, 5 samples, 8 h = 0.333 days.
    # g6: two samples, median (0.3 + 0.35) / 2 = 0.325.
    assert found == {
        "g5.xlarge": {
            "spot_usd": 0.451235,
            "by_az": {"us-east-1a": 0.4, "us-east-1b": 0.6, "us-east-1d": 0.4512347},
            "stats": {"min": 0.4, "median": 0.5, "max": 0.7, "samples": 5, "days": 0.333},
        },
        "g6.xlarge": {
            "spot_usd": 0.3,
            "by_az": {"us-east-1a": 0.3},
            "stats": {"min": 0.3, "median": 0.325, "max": 0.35, "samples": 2, "days": 0.333},
        },
    }
    assert list(found["g5.xlarge"]["by_az"]) == ["us-east-1a", "us-east-1b", "us-east-1d"]


def test_fetch_spot_default_window_is_one_day() -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    stub_spot(stub, ["g5.xlarge"], timedelta(days=1), [[spot_row("g5.xlarge", "us-east-1a", "0.41", 20)]])
    stub.activate()
    assert fetch_spot(ec2, ["g5.xlarge"], NOW)["g5.xlarge"]["stats"]["days"] == 1.0


def test_fetch_availability_lists_sorted_zones_per_requested_type() -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    row = {"LocationType": "availability-zone"}
    stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [{**row, "InstanceType": "g5.xlarge", "Location": "us-east-1c"}],
            "NextToken": "page1",
        },
        {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": ["g5.xlarge", "p5.48xlarge"]}],
        },
    )
    # A page with no offerings at all, then the rest.
    stub.add_response(
        "describe_instance_type_offerings",
        {"NextToken": "page2"},
        {
            "LocationType": "availability-zone",
            "NextToken": "page1",
            "Filters": [{"Name": "instance-type", "Values": ["g5.xlarge", "p5.48xlarge"]}],
        },
    )
    stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {**row, "InstanceType": "g5.xlarge", "Location": "us-east-1a"},
                {**row, "InstanceType": "g5.xlarge", "Location": "us-east-1c"},
                {**row, "InstanceType": "g6.xlarge", "Location": "us-east-1b"},
            ]
        },
        {
            "LocationType": "availability-zone",
            "NextToken": "page2",
            "Filters": [{"Name": "instance-type", "Values": ["g5.xlarge", "p5.48xlarge"]}],
        },
    )
    stub.activate()
    assert fetch_availability(ec2, ["g5.xlarge", "p5.48xlarge"]) == {
        "g5.xlarge": ["us-east-1a", "us-east-1c"],
        "p5.48xlarge": [],
    }
    stub.assert_no_pending_responses()


def block(fee: str | None, hours: int | None = 24, currency: str | None = "USD") -> dict[str, Any]:
    offer: dict[str, Any] = {"CapacityBlockOfferingId": "cb-1", "InstanceCount": 1, "AvailabilityZone": "us-east-1a"}
    if fee is not None:
        offer["UpfrontFee"] = fee
    if hours is not None:
        offer["CapacityBlockDurationHours"] = hours
    if currency is not None:
        offer["CurrencyCode"] = currency
    return offer


def stub_blocks(stub: Stubber, itype: str, offers: list[dict[str, Any]] | str | None) -> None:
    params = {
        "InstanceType": itype,
        "InstanceCount": 1,
        "CapacityDurationHours": 24,
        "StartDateRange": NOW,
        "EndDateRange": NOW + timedelta(weeks=8),
    }
    if isinstance(offers, str):
        stub.add_client_error("describe_capacity_block_offerings", offers, "no blocks", 400, expected_params=params)
    elif offers is None:
        stub.add_response("describe_capacity_block_offerings", {}, params)
    else:
        offers = [{**o, "InstanceType": itype} for o in offers]
        stub.add_response("describe_capacity_block_offerings", {"CapacityBlockOfferings": offers}, params)


def test_fetch_capacity_blocks_cheapest_usd_hourly_rate_and_skipped_error_codes() -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    # p5: 996.672 / 24 = 41.528; 1900.8 / 48 h = 39.6 (the cheapest); EUR, no fee and a zero fee are no USD rate.
    stub_blocks(
        stub,
        "p5.48xlarge",
        [block("996.672"), block("1900.8", 48), block("96", currency="EUR"), block(None), block("0")],
    )
    stub_blocks(stub, "p4d.24xlarge", "InvalidParameterValue")
    stub_blocks(stub, "p4de.24xlarge", "Unsupported")
    stub_blocks(stub, "trn1.32xlarge", "InvalidParameter")
    # p5e: no currency code is USD, no duration is the 24 h asked for: 950.4 / 24 = 39.6 beats 1000 / 24.
    stub_blocks(stub, "p5e.48xlarge", [block("1000.00"), block("950.4", hours=None, currency=None)])
    # p5en: 1000.0001 / 24 = 41.66667083... -> 41.666671 (6 decimals).
    stub_blocks(stub, "p5en.48xlarge", [block("1000.0001")])
    stub_blocks(stub, "trn2.48xlarge", [])
    stub_blocks(stub, "p6-b200.48xlarge", None)  # an answer without CapacityBlockOfferings
    # Any positive fee is a rate: 0.48 / 24 = 0.02.
    stub_blocks(stub, "p5.4xlarge", [block("0.48")])
    stub.activate()
    types = [
        "p5.48xlarge",
        "p4d.24xlarge",
        "p4de.24xlarge",
        "trn1.32xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "trn2.48xlarge",
        "p6-b200.48xlarge",
        "p5.4xlarge",
    ]
    assert fetch_capacity_blocks(ec2, types, NOW) == {
        "p5.48xlarge": 39.6,
        "p5e.48xlarge": 39.6,
        "p5en.48xlarge": 41.666671,
        "p5.4xlarge": 0.02,
    }
    stub.assert_no_pending_responses()


class Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def describe_capacity_block_offerings(self, **kwargs: Any) -> Any:
        raise self.exc


def test_fetch_capacity_blocks_raises_an_error_without_a_code() -> None:
    exc = ClientError({}, "DescribeCapacityBlockOfferings")
    with pytest.raises(ClientError) as err:
        fetch_capacity_blocks(Failing(exc), ["p5.48xlarge"], NOW)
    assert err.value is exc


def test_fetch_capacity_blocks_raises_other_errors() -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    stub_blocks(stub, "p5.48xlarge", "UnauthorizedOperation")
    stub.activate()
    with pytest.raises(ClientError, match="UnauthorizedOperation"):
        fetch_capacity_blocks(ec2, ["p5.48xlarge"], NOW)


# --- refresh() ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("days", [0, -1, 90.5, 91])
def test_refresh_rejects_a_spot_window_outside_the_api_range(days: float, tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        refresh("us-east-1", ["g5.xlarge"], clients=lambda s, r: None, spot_days=days, cache_file=tmp_path / "p")
    assert str(err.value) == f"spot_days: {days!r} must be more than 0 and at most 90"


def test_refresh_accepts_the_longest_spot_window(tmp_path: Path) -> None:
    ec2 = client("ec2")
    stub = Stubber(ec2)
    stub_spot(stub, ["g5.xlarge"], timedelta(days=90), [[spot_row("g5.xlarge", "us-east-1a", "0.41", 20)]])
    stub.activate()
    pricing = client("pricing")
    pstub = Stubber(pricing)
    stub_products(pstub, "g5.xlarge", "us-east-1", [[]])
    pstub.activate()
    result = refresh(
        "us-east-1",
        ["g5.xlarge"],
        clients=lambda s, r: pricing if s == "pricing" else ec2,
        now=NOW,
        cache_file=tmp_path / "p.json",
        spot_days=90,
        capacity_blocks=False,
        availability=False,
    )
    (row,) = result["prices"]
    assert (row["spot_usd"], row["spot_by_az"], row["spot_stats"]["days"]) == (0.41, {"us-east-1a": 0.41}, 90.0)
    # Spot only: the entry names the spot API alone.
    data = load_cache(tmp_path / "p.json")
    assert data is not None
    assert data["regions"]["us-east-1"]["g5.xlarge"]["price_source"] == "ec2-spot-price-history"


def test_refresh_without_ec2_markets_asks_ec2_nothing(tmp_path: Path) -> None:
    pricing = client("pricing")
    stub = Stubber(pricing)
    stub_products(stub, "g5.xlarge", "us-east-1", [[box_doc("g5.xlarge", "1.006")]])
    stub.activate()
    asked: list[tuple[str, str]] = []

    def clients(service: str, region: str) -> Any:
        asked.append((service, region))
        return pricing

    result = refresh(
        "us-east-1",
        ["g5.xlarge"],
        clients=clients,
        now=NOW,
        cache_file=tmp_path / "p.json",
        spot=False,
        capacity_blocks=False,
        availability=False,
    )
    assert asked == [("pricing", "us-east-1")]
    assert result == {
        "region": "us-east-1",
        "refreshed_at": "2026-08-02T09:30:00+00:00",
        "cache_file": str(tmp_path / "p.json"),
        "commitment_basis": "Standard Reserved Instance, No Upfront, Linux, shared tenancy (hourly)",
        "prices": [
            {
                "instance_type": "g5.xlarge",
                "on_demand_usd": 1.006,
                "reserved_1y_usd": None,
                "reserved_3y_usd": None,
                "spot_usd": None,
                "spot_by_az": {},
                "spot_stats": None,
                "capacity_block_usd": None,
                "availability_zones": None,
            },
        ],
        "missing_on_demand": [],
        "not_offered": [],
        "service_rates": {},
    }


def test_refresh_of_an_unoffered_type_records_only_its_absence(tmp_path: Path) -> None:
    """eu-west-1 has no p5.48xlarge AZ here: no price, no Capacity Block query result, an empty zone list."""
    pricing = client("pricing")
    pstub = Stubber(pricing)
    stub_products(pstub, "p5.48xlarge", "eu-west-1", [[]])
    stub_products(pstub, "g5.xlarge", "eu-west-1", [[box_doc("g5.xlarge", "1.123")]])
    pstub.activate()
    ec2 = client("ec2")
    stub = Stubber(ec2)
    stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {"InstanceType": "g5.xlarge", "LocationType": "availability-zone", "Location": "eu-west-1b"}
            ]
        },
        {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": ["p5.48xlarge", "g5.xlarge"]}],
        },
    )
    # Capacity Blocks are asked for the catalog's Capacity Block types only (p5.48xlarge, not g5.xlarge).
    stub_blocks(stub, "p5.48xlarge", "Unsupported")
    stub.activate()
    asked: list[tuple[str, str]] = []

    def clients(service: str, region: str) -> Any:
        asked.append((service, region))
        return pricing if service == "pricing" else ec2

    cache = tmp_path / "p.json"
    result = refresh("eu-west-1", ["p5.48xlarge", "g5.xlarge"], clients=clients, now=NOW, cache_file=cache, spot=False)
    stub.assert_no_pending_responses()
    assert asked == [("pricing", "us-east-1"), ("ec2", "eu-west-1")]
    assert (result["missing_on_demand"], result["not_offered"]) == (["p5.48xlarge"], ["p5.48xlarge"])
    assert [(p["instance_type"], p["availability_zones"]) for p in result["prices"]] == [
        ("p5.48xlarge", []),
        ("g5.xlarge", ["eu-west-1b"]),
    ]
    data = load_cache(cache)
    assert data is not None and data["refreshed_at"] == "2026-08-02T09:30:00+00:00"
    assert data["regions"]["eu-west-1"] == {
        "g5.xlarge": {
            "on_demand_usd": 1.123,
            "availability_zones": ["eu-west-1b"],
            "price_date": "2026-08-02",
            "price_source": "aws-price-list-api",
        },
        "p5.48xlarge": {"availability_zones": [], "price_date": "2026-08-02", "price_source": "ec2-offerings"},
    }


def test_refresh_with_capacity_blocks_on_but_no_eligible_type_asks_no_offerings(tmp_path: Path) -> None:
    pricing = client("pricing")
    pstub = Stubber(pricing)
    stub_products(pstub, "g5.xlarge", "us-east-1", [[]])
    pstub.activate()
    ec2 = client("ec2")
    Stubber(ec2).activate()  # nothing queued: any EC2 call fails the test
    result = refresh(
        "us-east-1",
        ["g5.xlarge"],
        clients=lambda s, r: pricing if s == "pricing" else ec2,
        now=NOW,
        cache_file=tmp_path / "p.json",
        spot=False,
        availability=False,
    )
    assert (result["cache_file"], result["missing_on_demand"]) == (None, ["g5.xlarge"])
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    ("step", "what", "operation"),
    [
        ("pricing", "price refresh (Price List API)", "GetProducts"),
        ("services", "price refresh (Price List API, service rates)", "GetProducts"),
        ("spot", "price refresh (spot price history)", "DescribeSpotPriceHistory"),
        ("availability", "price refresh (instance type offerings)", "DescribeInstanceTypeOfferings"),
        ("capacity_blocks", "price refresh (Capacity Block offerings)", "DescribeCapacityBlockOfferings"),
    ],
)
def test_refresh_names_the_step_aws_denied(step: str, what: str, operation: str, tmp_path: Path) -> None:
    """Each step runs alone (the EC2 client is made for any one of them) and a denial names that step."""
    from gpucloud.aws import AwsAccessError

    pricing, ec2 = client("pricing"), client("ec2")
    pstub, stub = Stubber(pricing), Stubber(ec2)
    if step == "pricing":
        pstub.add_client_error("get_products", "AccessDeniedException", "no pricing:GetProducts", 400)
    else:
        stub_products(pstub, "p5.48xlarge", "us-east-1", [[]])
        if step == "services":
            pstub.add_client_error("get_products", "AccessDeniedException", "no pricing:GetProducts", 400)
        else:
            method = {"spot": "describe_spot_price_history", "availability": "describe_instance_type_offerings",
                      "capacity_blocks": "describe_capacity_block_offerings"}[step]  # fmt: skip
            stub.add_client_error(method, "UnauthorizedOperation", "not allowed", 403)
    pstub.activate()
    stub.activate()
    flags = {k: k == step for k in ("spot", "availability", "capacity_blocks", "services")}
    with pytest.raises(AwsAccessError) as err:
        refresh("us-east-1", ["p5.48xlarge"], clients=lambda s, r: pricing if s == "pricing" else ec2, now=NOW,
                cache_file=tmp_path / "p.json", **flags)  # fmt: skip
    assert str(err.value).startswith(f"{what}: AWS denied {operation} (")


def test_refresh_defaults_to_now_in_utc_and_a_fractional_spot_window(tmp_path: Path) -> None:
    """A type outside the catalog (m7i.large) is never asked for Capacity Blocks; half a day of spot history."""
    pricing, ec2 = client("pricing"), client("ec2")
    pstub, stub = Stubber(pricing), Stubber(ec2)
    stub_products(pstub, "m7i.large", "us-east-1", [[box_doc("m7i.large", "0.1008", "0.0635")]])
    pstub.activate()
    before = datetime.now(UTC)
    stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
    stub.activate()
    result = refresh("us-east-1", ["m7i.large"], clients=lambda s, r: pricing if s == "pricing" else ec2,
                     cache_file=tmp_path / "p.json", spot_days=0.5, availability=False)  # fmt: skip
    stub.assert_no_pending_responses()
    # Whole seconds with the UTC offset, in the result and the cache alike.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", result["refreshed_at"])
    stamp = datetime.fromisoformat(result["refreshed_at"])
    assert stamp.utcoffset() == timedelta(0) and before - timedelta(seconds=1) <= stamp <= datetime.now(UTC)
    (row,) = result["prices"]
    assert (row["on_demand_usd"], row["reserved_1y_usd"], row["reserved_3y_usd"]) == (0.1008, 0.0635, None)
    data = load_cache(tmp_path / "p.json")
    assert data is not None and data["refreshed_at"] == result["refreshed_at"]
    assert data["regions"]["us-east-1"]["m7i.large"] == {
        "on_demand_usd": 0.1008,
        "reserved_1y_usd": 0.0635,
        "price_date": stamp.date().isoformat(),
        "price_source": "aws-price-list-api",
    }
