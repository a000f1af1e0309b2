"""`gpucloud prices refresh`: per region, On-Demand and Reserved Instance rates from the AWS Price List API
(pricing GetProducts), spot price history statistics (DescribeSpotPriceHistory), Capacity Block rates
(DescribeCapacityBlockOfferings) and availability (DescribeInstanceTypeOfferings), merged into the local price
cache with their date; gpucloud.prices.book lays the cache over the shipped snapshot.

Commitment basis: Standard Reserved Instances, No Upfront, Linux, shared tenancy (``reserved_1y_usd``,
``reserved_3y_usd``, hourly). A Capacity Block rate is the cheapest 1-instance, 24-hour offering's UpfrontFee / 24.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from gpucloud.catalog import get_catalog, validate_instance_type
from gpucloud.preflight.aws import ClientFactory, aws_errors, check_region, default_clients
from gpucloud.prices.cache import write_cache

# The Price List API answers from these endpoints only; us-east-1 serves every region's prices.
PRICING_ENDPOINT_REGION: Final = "us-east-1"
SOURCE_ON_DEMAND: Final = "aws-price-list-api"
SOURCE_SPOT: Final = "ec2-spot-price-history"
SOURCE_CAPACITY_BLOCK: Final = "ec2-capacity-block-offerings"
SPOT_LOOKBACK: Final = timedelta(days=1)
# DescribeSpotPriceHistory answers at most 90 days back.
MAX_SPOT_DAYS: Final = 90
# The Capacity Block offering the rate is read from: one instance for one day (the shortest block).
CAPACITY_BLOCK_HOURS: Final = 24


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


def reserved_from_price_list(items: Iterable[str | Mapping[str, Any]]) -> dict[str, float]:
    """Standard RI, No Upfront hourly rates by term ({"1yr": usd, "3yr": usd}) from BoxUsage SKUs' Reserved terms."""
    out: dict[str, float] = {}
    for raw in items:
        doc = json.loads(raw) if isinstance(raw, str) else raw
        if "BoxUsage" not in str(doc.get("product", {}).get("attributes", {}).get("usagetype", "")):
            continue
        for term in doc.get("terms", {}).get("Reserved", {}).values():
            attrs = term.get("termAttributes", {})
            length = attrs.get("LeaseContractLength")
            if attrs.get("OfferingClass") != "standard" or attrs.get("PurchaseOption") != "No Upfront":
                continue
            for dimension in term.get("priceDimensions", {}).values():
                usd = float(dimension.get("pricePerUnit", {}).get("USD", "0") or 0)
                if dimension.get("unit") == "Hrs" and usd > 0 and length in ("1yr", "3yr"):
                    out[str(length)] = usd
    return out


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
    return {t: p["on_demand"] for t, p in fetch_price_list(pricing, region, instance_types).items() if "on_demand" in p}


def fetch_price_list(pricing: Any, region: str, instance_types: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per type: ``on_demand`` and the Reserved ``1yr`` / ``3yr`` No Upfront hourly rates the Price List has."""
    out: dict[str, dict[str, float]] = {}
    paginator = pricing.get_paginator("get_products")
    for itype in instance_types:
        entries: list[str] = []
        for page in paginator.paginate(
            ServiceCode="AmazonEC2", Filters=price_list_filters(itype, region), MaxResults=100
        ):
            entries.extend(page.get("PriceList", []))
        found: dict[str, float] = dict(reserved_from_price_list(entries))
        usd = on_demand_from_price_list(entries)
        if usd is not None:
            found["on_demand"] = usd
        if found:
            out[itype] = found
    return out


def fetch_availability(ec2: Any, instance_types: Sequence[str]) -> dict[str, list[str]]:
    """Per type, the AZs of the client's region that offer it (an empty list: not offered in the region)."""
    zones: dict[str, set[str]] = {t: set() for t in instance_types}
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    for page in paginator.paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": list(instance_types)}]
    ):
        for row in page.get("InstanceTypeOfferings", []):
            if row.get("InstanceType") in zones:
                zones[row["InstanceType"]].add(str(row["Location"]))
    return {t: sorted(z) for t, z in zones.items()}


def fetch_capacity_blocks(ec2: Any, instance_types: Sequence[str], now: datetime) -> dict[str, float]:
    """Per type, the hourly rate of the cheapest one-instance, one-day Capacity Block offered in the next 8 weeks."""
    from botocore.exceptions import ClientError

    out: dict[str, float] = {}
    for itype in instance_types:
        try:
            answer = ec2.describe_capacity_block_offerings(
                InstanceType=itype,
                InstanceCount=1,
                CapacityDurationHours=CAPACITY_BLOCK_HOURS,
                StartDateRange=now,
                EndDateRange=now + timedelta(weeks=8),
            )
        except ClientError as exc:
            # A type or region without Capacity Blocks answers with an error code, not an empty list.
            if exc.response.get("Error", {}).get("Code") in (
                "InvalidParameterValue",
                "Unsupported",
                "InvalidParameter",
            ):
                continue
            raise
        rates = [
            float(o["UpfrontFee"]) / float(o.get("CapacityBlockDurationHours") or CAPACITY_BLOCK_HOURS)
            for o in answer.get("CapacityBlockOfferings", [])
            if o.get("CurrencyCode", "USD") == "USD" and float(o.get("UpfrontFee") or 0) > 0
        ]
        if rates:
            out[itype] = round(min(rates), 6)
    return out


def fetch_spot(
    ec2: Any, instance_types: Sequence[str], now: datetime, lookback: timedelta = SPOT_LOOKBACK
) -> dict[str, dict[str, Any]]:
    """Per type: the median over AZs of each AZ's latest Linux spot price, the AZ prices, and statistics over every
    sample in the window (min, median, max, sample count, days)."""
    latest: dict[str, dict[str, tuple[datetime, float]]] = {}
    samples: dict[str, list[float]] = {}
    paginator = ec2.get_paginator("describe_spot_price_history")
    for page in paginator.paginate(
        InstanceTypes=list(instance_types),
        ProductDescriptions=["Linux/UNIX"],
        StartTime=now - lookback,
        EndTime=now,
    ):
        for row in page.get("SpotPriceHistory", []):
            itype, az = row["InstanceType"], row["AvailabilityZone"]
            stamp, price = row["Timestamp"], float(row["SpotPrice"])
            if price <= 0:
                continue
            samples.setdefault(itype, []).append(price)
            seen = latest.setdefault(itype, {}).get(az)
            if seen is None or stamp > seen[0]:
                latest[itype][az] = (stamp, price)
    out: dict[str, dict[str, Any]] = {}
    for itype, azs in latest.items():
        values = samples[itype]
        out[itype] = {
            "spot_usd": round(statistics.median(p for _, p in azs.values()), 6),
            "by_az": {az: p for az, (_, p) in sorted(azs.items())},
            "stats": {
                "min": min(values),
                "median": round(statistics.median(values), 6),
                "max": max(values),
                "samples": len(values),
                "days": round(lookback.total_seconds() / 86400, 3),
            },
        }
    return out


def refresh(
    region: str,
    instance_types: Sequence[str],
    *,
    clients: ClientFactory = default_clients,
    now: datetime | None = None,
    cache_file: Path | None = None,
    spot: bool = True,
    spot_days: float = 1.0,
    capacity_blocks: bool = True,
    availability: bool = True,
) -> dict[str, Any]:
    check_region(region)
    for itype in instance_types:
        validate_instance_type(itype)
    if not 0 < spot_days <= MAX_SPOT_DAYS:
        raise ValueError(f"spot_days: {spot_days!r} must be more than 0 and at most {MAX_SPOT_DAYS}")
    now = now or datetime.now(UTC)
    today = now.date().isoformat()
    with aws_errors("price refresh (Price List API)"):
        listed = fetch_price_list(clients("pricing", PRICING_ENDPOINT_REGION), region, instance_types)
    on_demand = {t: p["on_demand"] for t, p in listed.items() if "on_demand" in p}
    spot_prices: dict[str, dict[str, Any]] = {}
    zones: dict[str, list[str]] = {}
    blocks: dict[str, float] = {}
    ec2 = clients("ec2", region) if (spot or availability or capacity_blocks) else None
    if spot:
        with aws_errors("price refresh (spot price history)"):
            spot_prices = fetch_spot(ec2, instance_types, now, timedelta(days=spot_days))
    if availability:
        with aws_errors("price refresh (instance type offerings)"):
            zones = fetch_availability(ec2, instance_types)
    if capacity_blocks:
        catalog = get_catalog()
        eligible = [t for t in instance_types if (spec := catalog.find(t)) is not None and spec.capacity_block]
        with aws_errors("price refresh (Capacity Block offerings)"):
            blocks = fetch_capacity_blocks(ec2, eligible, now) if eligible else {}
    entries: dict[str, dict[str, Any]] = {}
    for itype in instance_types:
        entry: dict[str, Any] = {}
        found = listed.get(itype, {})
        if "on_demand" in found:
            entry["on_demand_usd"] = found["on_demand"]
        if "1yr" in found:
            entry["reserved_1y_usd"] = found["1yr"]
        if "3yr" in found:
            entry["reserved_3y_usd"] = found["3yr"]
        if itype in spot_prices:
            entry["spot_usd"] = spot_prices[itype]["spot_usd"]
            entry["spot_stats"] = {**spot_prices[itype]["stats"], "by_az": spot_prices[itype]["by_az"]}
        if itype in blocks:
            entry["capacity_block_usd"] = blocks[itype]
        if itype in zones:
            entry["availability_zones"] = zones[itype]
        if entry:
            sources = [SOURCE_ON_DEMAND] if found else []
            if itype in spot_prices:
                sources.append(SOURCE_SPOT)
            if itype in blocks:
                sources.append(SOURCE_CAPACITY_BLOCK)
            entries[itype] = {**entry, "price_date": today, "price_source": "+".join(sources) or "ec2-offerings"}
    path = write_cache(region, entries, now.isoformat(timespec="seconds"), cache_file) if entries else None
    return {
        "region": region,
        "refreshed_at": now.isoformat(timespec="seconds"),
        "cache_file": str(path) if path else None,
        "commitment_basis": "Standard Reserved Instance, No Upfront, Linux, shared tenancy (hourly)",
        "prices": [
            {
                "instance_type": t,
                "on_demand_usd": on_demand.get(t),
                "reserved_1y_usd": listed.get(t, {}).get("1yr"),
                "reserved_3y_usd": listed.get(t, {}).get("3yr"),
                "spot_usd": spot_prices.get(t, {}).get("spot_usd"),
                "spot_by_az": spot_prices.get(t, {}).get("by_az", {}),
                "spot_stats": spot_prices.get(t, {}).get("stats"),
                "capacity_block_usd": blocks.get(t),
                "availability_zones": zones.get(t),
            }
            for t in instance_types
        ],
        "missing_on_demand": [t for t in instance_types if t not in on_demand],
        "not_offered": sorted(t for t, z in zones.items() if not z),
    }
