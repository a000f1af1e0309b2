"""`gpucloud prices refresh`: On-Demand prices from the AWS Price List API and recent spot prices from the spot
price history, merged into the local price cache with their date."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from gpucloud.catalog import validate_instance_type
from gpucloud.preflight.aws import ClientFactory, aws_errors, check_region, default_clients
from gpucloud.prices.cache import write_cache

# The Price List API answers from these endpoints only; us-east-1 serves every region's prices.
PRICING_ENDPOINT_REGION: Final = "us-east-1"
SOURCE_ON_DEMAND: Final = "aws-price-list-api"
SOURCE_SPOT: Final = "ec2-spot-price-history"
SPOT_LOOKBACK: Final = timedelta(days=1)


def price_list_filters(instance_type: str, region: str) -> list[dict[str, str]]:
    """One Linux On-Demand SKU: marketoption=OnDemand drops the Capacity Block SKUs that leak into naive pulls."""
    pairs = {
        "instanceType": instance_type,
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
    }
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in pairs.items()]


def on_demand_from_price_list(items: Iterable[str | Mapping[str, Any]]) -> float | None:
    """The hourly USD price from get_products PriceList entries (JSON strings), BoxUsage SKUs only."""
    for raw in items:
        doc = json.loads(raw) if isinstance(raw, str) else raw
        attributes = doc.get("product", {}).get("attributes", {})
        if "BoxUsage" not in str(attributes.get("usagetype", "")):
            continue
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = float(dimension.get("pricePerUnit", {}).get("USD", "0") or 0)
                if dimension.get("unit") == "Hrs" and usd > 0:
                    return usd
    return None


def fetch_on_demand(pricing: Any, region: str, instance_types: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    paginator = pricing.get_paginator("get_products")
    for itype in instance_types:
        entries: list[str] = []
        for page in paginator.paginate(
            ServiceCode="AmazonEC2", Filters=price_list_filters(itype, region), MaxResults=100
        ):
            entries.extend(page.get("PriceList", []))
        usd = on_demand_from_price_list(entries)
        if usd is not None:
            out[itype] = usd
    return out


def fetch_spot(ec2: Any, instance_types: Sequence[str], now: datetime) -> dict[str, dict[str, Any]]:
    """Per type: the median over AZs of each AZ's latest Linux spot price in the last day, and the AZ prices."""
    latest: dict[str, dict[str, tuple[datetime, float]]] = {}
    paginator = ec2.get_paginator("describe_spot_price_history")
    for page in paginator.paginate(
        InstanceTypes=list(instance_types),
        ProductDescriptions=["Linux/UNIX"],
        StartTime=now - SPOT_LOOKBACK,
        EndTime=now,
    ):
        for row in page.get("SpotPriceHistory", []):
            itype, az = row["InstanceType"], row["AvailabilityZone"]
            stamp, price = row["Timestamp"], float(row["SpotPrice"])
            seen = latest.setdefault(itype, {}).get(az)
            if price > 0 and (seen is None or stamp > seen[0]):
                latest[itype][az] = (stamp, price)
    return {
        itype: {"spot_usd": round(statistics.median(p for _, p in azs.values()), 6),
                "by_az": {az: p for az, (_, p) in sorted(azs.items())}}
        for itype, azs in latest.items() if azs
    }  # fmt: skip


def refresh(
    region: str,
    instance_types: Sequence[str],
    *,
    clients: ClientFactory = default_clients,
    now: datetime | None = None,
    cache_file: Path | None = None,
    spot: bool = True,
) -> dict[str, Any]:
    check_region(region)
    for itype in instance_types:
        validate_instance_type(itype)
    now = now or datetime.now(UTC)
    today = now.date().isoformat()
    with aws_errors("price refresh (Price List API)"):
        on_demand = fetch_on_demand(clients("pricing", PRICING_ENDPOINT_REGION), region, instance_types)
    spot_prices: dict[str, dict[str, Any]] = {}
    if spot:
        with aws_errors("price refresh (spot price history)"):
            spot_prices = fetch_spot(clients("ec2", region), instance_types, now)
    entries: dict[str, dict[str, Any]] = {}
    for itype in instance_types:
        entry: dict[str, Any] = {}
        if itype in on_demand:
            entry["on_demand_usd"] = on_demand[itype]
        if itype in spot_prices:
            entry["spot_usd"] = spot_prices[itype]["spot_usd"]
        if entry:
            source = SOURCE_ON_DEMAND if "on_demand_usd" in entry else SOURCE_SPOT
            if "on_demand_usd" in entry and "spot_usd" in entry:
                source = f"{SOURCE_ON_DEMAND}+{SOURCE_SPOT}"
            entries[itype] = {**entry, "price_date": today, "price_source": source}
    path = write_cache(region, entries, now.isoformat(timespec="seconds"), cache_file) if entries else None
    return {
        "region": region,
        "refreshed_at": now.isoformat(timespec="seconds"),
        "cache_file": str(path) if path else None,
        "prices": [
            {
                "instance_type": t,
                "on_demand_usd": on_demand.get(t),
                "spot_usd": spot_prices.get(t, {}).get("spot_usd"),
                "spot_by_az": spot_prices.get(t, {}).get("by_az", {}),
            }
            for t in instance_types
        ],
        "missing_on_demand": [t for t in instance_types if t not in on_demand],
    }
