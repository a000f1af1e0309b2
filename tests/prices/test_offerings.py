"""Region offering data: the shipped price snapshot's answer (dated by its sources), a refresh through EC2
DescribeInstanceTypeOfferings (botocore Stubber), and the refreshed answer winning over the snapshot."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from gpucloud.catalog import get_catalog
from gpucloud.prices.book import PriceBook, get_price_book, load_snapshot
from gpucloud.prices.cache import region_prices
from gpucloud.prices.offerings import FRESH_DAYS, fetch_offerings, offering, refresh_offerings

SNAPSHOT = json.loads((Path(__file__).resolve().parents[2] / "gpucloud" / "prices" / "snapshot.json").read_text())


@pytest.fixture
def book() -> PriceBook:
    return PriceBook(load_snapshot(), get_catalog(), overlays={})


def test_the_snapshot_says_which_catalog_types_a_region_sells_and_since_when(book: PriceBook) -> None:
    # Read from the snapshot file itself: g6e.xlarge has figures in us-west-2 and none in eu-west-1.
    assert "g6e.xlarge" in SNAPSHOT["regions"]["us-west-2"]
    assert "g6e.xlarge" not in SNAPSHOT["regions"]["eu-west-1"]
    vantage = SNAPSHOT["sources"]["vantage"]["as_of"]
    sold = offering("g6e.xlarge", "us-west-2", book, cache={})
    assert (sold.offered, sold.source, sold.as_of) == (True, "price snapshot: vantage", vantage)
    gone = offering("g6e.xlarge", "eu-west-1", book, cache={})
    assert (gone.offered, gone.as_of) == (False, vantage)
    assert gone.describe() == (
        "g6e.xlarge is not offered in eu-west-1 "
        f"(absent from the price snapshot's eu-west-1 table (vantage), {vantage})"
    )
    # 2026-01-21 data is stale on 2026-12-01 and fresh for 90 days after its date.
    assert FRESH_DAYS == 90
    assert not gone.fresh(date(2026, 12, 1))
    assert gone.fresh(date(2026, 4, 21)) and not gone.fresh(date(2026, 4, 22))


def test_types_outside_the_catalog_and_regions_outside_the_snapshot_are_unknown(book: PriceBook) -> None:
    assert offering("m7i.large", "eu-west-1", book, cache={}).offered is None
    assert offering("g6e.xlarge", "mars-north-1", book, cache={}).offered is None


def _stub_offerings(
    client: object, region_rows: list[str], az_rows: list[tuple[str, str]], types: list[str]
) -> Stubber:
    stub = Stubber(client)
    filters = [{"Name": "instance-type", "Values": types}]
    stub.add_response(
        "describe_instance_type_offerings",
        {"InstanceTypeOfferings": [{"InstanceType": t, "LocationType": "region", "Location": "eu-west-1"}
                                   for t in region_rows]},
        {"LocationType": "region", "Filters": filters},
    )  # fmt: skip
    stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {"InstanceType": t, "LocationType": "availability-zone", "Location": az} for t, az in az_rows
            ]
        },
        {"LocationType": "availability-zone", "Filters": filters},
    )
    return stub


def test_refresh_asks_both_location_types_and_records_dated_zones(tmp_path: Path, book: PriceBook) -> None:
    ec2 = boto3.client("ec2", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    types = ["g5.12xlarge", "g6e.xlarge"]
    rows = [("g5.12xlarge", "eu-west-1b"), ("g5.12xlarge", "eu-west-1a")]
    cache = tmp_path / "prices.json"
    with _stub_offerings(ec2, ["g5.12xlarge"], rows, types) as stub:
        result = refresh_offerings("eu-west-1", types, ec2, now=datetime(2026, 12, 1, 9, tzinfo=UTC), cache_file=cache)
        stub.assert_no_pending_responses()
    assert result["offered"] == {"g5.12xlarge": ["eu-west-1a", "eu-west-1b"]}
    assert result["not_offered"] == ["g6e.xlarge"]
    entries = region_prices("eu-west-1", cache)
    assert entries["g6e.xlarge"] == {
        "availability_zones": [],
        "price_date": "2026-12-01",
        "price_source": "ec2-offerings",
    }
    fresh = offering("g6e.xlarge", "eu-west-1", book, cache=entries)
    assert (fresh.offered, fresh.source, fresh.as_of) == (False, "EC2 DescribeInstanceTypeOfferings", "2026-12-01")
    assert fresh.fresh(date(2026, 12, 1))
    assert offering("g5.12xlarge", "eu-west-1", book, cache=entries).zones == ("eu-west-1a", "eu-west-1b")


def test_a_type_the_region_offers_without_az_rows_is_not_called_absent() -> None:
    ec2 = boto3.client("ec2", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    with _stub_offerings(ec2, ["g5.xlarge"], [], ["g5.xlarge"]):
        assert fetch_offerings(ec2, ["g5.xlarge"]) == {"g5.xlarge": None}


def test_cli_offerings_against_moto_records_what_the_region_offers(
    aws_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpucloud import aws as aws_mod
    from gpucloud.cli import main

    cache = tmp_path / "prices.json"
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    monkeypatch.setattr(
        aws_mod,
        "default_clients",
        lambda service, region: boto3.client(service, region_name=region, endpoint_url=aws_env),
    )
    try:
        assert main(["prices", "offerings", "--region", "us-east-1", "--types", "g5.xlarge", "--format", "json"]) == 0
    finally:
        get_price_book.cache_clear()
    out = json.loads(capsys.readouterr().out)
    # moto answers from its bundled offering data: g5.xlarge is offered in some us-east-1 AZs.
    assert out["not_offered"] == [] and out["cache_file"] == str(cache)
    zones = out["offered"]["g5.xlarge"]
    assert zones and all(z.startswith("us-east-1") for z in zones)
    assert region_prices("us-east-1", cache)["g5.xlarge"]["availability_zones"] == zones
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    assert main(["prices", "offerings", "--types", "g5.xlarge"]) == 2
    assert "price cache is disabled" in capsys.readouterr().err
