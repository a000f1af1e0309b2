"""`gpucloud prices refresh`: per region, On-Demand and Reserved Instance rates from the AWS Price List API
(pricing GetProducts), spot price history statistics (DescribeSpotPriceHistory), Capacity Block rates
(DescribeCapacityBlockOfferings) and availability (DescribeInstanceTypeOfferings), merged into the local price
cache with their date; gpucloud.prices.book lays the cache over the shipped snapshot.

Commitment basis: Standard Reserved Instances, No Upfront, Linux, shared tenancy (``reserved_1y_usd``,
``reserved_3y_usd``, hourly). A Capacity Block rate is the cheapest 1-instance, 24-hour offering's UpfrontFee / 24.

With ``services=True`` it also reads the region-varying service rates gpucloud.prices.rates serves (NAT gateway,
interface endpoints, EBS storage and provisioned performance, FSx for Lustre storage, the CPU types of system node
groups) from the same Price List API: one GetProducts query per product family, filtered by ``regionCode``, and
each answer matched on its documented usage type (the region prefix differs by region, "EU-" for eu-west-1,
"APN1-" for ap-northeast-1, none for us-east-1, so only the suffix is matched).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from gpucloud.aws import ClientFactory, aws_errors, check_region, default_clients
from gpucloud.catalog import get_catalog, validate_instance_type
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


# (service code, extra TERM_MATCH filters) per query; every query also filters on regionCode. locationType keeps
# Local Zone and Outposts SKUs (their own, dearer EBS rates) out.
SERVICE_QUERIES: Final[tuple[tuple[str, tuple[tuple[str, str], ...]], ...]] = (
    ("AmazonEC2", (("productFamily", "NAT Gateway"),)),
    ("AmazonEC2", (("productFamily", "Storage"), ("locationType", "AWS Region"))),
    ("AmazonEC2", (("productFamily", "System Operation"), ("locationType", "AWS Region"))),
    ("AmazonEC2", (("productFamily", "Provisioned Throughput"), ("locationType", "AWS Region"))),
    ("AmazonVPC", (("productFamily", "VpcEndpoint"),)),
    ("AmazonFSx", (("fileSystemType", "Lustre"),)),
)
# Usage type suffix (after the optional region prefix) and price unit -> item. "RegionalNatGateway-Hours" (regional
# NAT gateways) and "VpcEndpoint-GWLBE-Hours" (Gateway Load Balancer endpoints) bill other things and do not match.
_USAGE_ITEMS: Final[tuple[tuple[re.Pattern[str], str, str], ...]] = (
    (re.compile(r"(^|-)NatGateway-Hours$"), "Hrs", "nat_gateway_hour"),
    (re.compile(r"(^|-)NatGateway-Bytes$"), "GB", "nat_gateway_gb"),
    (re.compile(r"(^|-)VpcEndpoint-Hours$"), "Hrs", "interface_endpoint_az_hour"),
    (re.compile(r"(^|-)EBS:VolumeP-IOPS\.gp3$"), "IOPS-Mo", "ebs_iops:gp3"),
    (re.compile(r"(^|-)EBS:VolumeP-IOPS\.piops$"), "IOPS-Mo", "ebs_iops:io1"),
    (re.compile(r"(^|-)EBS:VolumeP-IOPS\.io2$"), "IOPS-Mo", "ebs_iops:io2"),
    (re.compile(r"(^|-)EBS:VolumeP-Throughput\.gp3$"), "GiBps-mo", "ebs_throughput:gp3"),
)
_EBS_STORAGE: Final = re.compile(r"(^|-)EBS:VolumeUsage(\.(?P<suffix>[a-z0-9]+))?$")
EBS_VOLUME_API_NAMES: Final = frozenset({"gp3", "gp2", "io1", "io2", "st1", "sc1", "standard"})
# The Price List bills gp3 throughput per GiBps-month; gpucloud prices the provider's MB/s input per MBps-month.
MIB_PER_GIB: Final = 1024
# FSx for Lustre per-unit throughput tiers (MB/s/TiB) name the deployment type: the sets do not overlap
# (FSx API CreateFileSystemLustreConfiguration.PerUnitStorageThroughput).
_LUSTRE_TIERS: Final[dict[tuple[str, int], str]] = {
    **{("SSD", t): "PERSISTENT_1" for t in (50, 100, 200)},
    **{("HDD", t): "PERSISTENT_1" for t in (12, 40)},
    **{("SSD", t): "PERSISTENT_2" for t in (125, 250, 500, 1000)},
}


def service_filters(region: str, extra: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in (("regionCode", region), *extra)]


def _on_demand_dimensions(doc: Mapping[str, Any]) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for term in doc.get("terms", {}).get("OnDemand", {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            usd = float(dimension.get("pricePerUnit", {}).get("USD", "0") or 0)
            if usd > 0:
                out.append((str(dimension.get("unit")), usd))
    return out


def service_item(doc: Mapping[str, Any]) -> tuple[str, float] | None:
    """The gpucloud item key and rate one Price List document prices, or None for a SKU gpucloud does not use."""
    attributes = doc.get("product", {}).get("attributes", {})
    usage = str(attributes.get("usagetype", ""))
    prices = _on_demand_dimensions(doc)
    for pattern, unit, item in _USAGE_ITEMS:
        if pattern.search(usage):
            for found_unit, usd in prices:
                if found_unit == unit:
                    return item, round(usd / MIB_PER_GIB, 6) if unit == "GiBps-mo" else usd
            return None
    volume = str(attributes.get("volumeApiName", ""))
    if _EBS_STORAGE.search(usage) and volume in EBS_VOLUME_API_NAMES:
        for found_unit, usd in prices:
            if found_unit in ("GB-Mo", "GB-month"):
                return f"ebs:{volume}", usd
        return None
    if str(attributes.get("fileSystemType", "")) == "Lustre":
        storage = str(attributes.get("storageType", ""))
        try:
            throughput = int(str(attributes.get("throughputCapacity", "")))
        except ValueError:
            return None
        deployment = _LUSTRE_TIERS.get((storage, throughput))
        for found_unit, usd in prices:
            if deployment is not None and found_unit == "GB-Mo":
                return f"fsx_lustre:{deployment}:{throughput}:{storage}", usd
    return None


def fetch_service_rates(pricing: Any, region: str, cpu_types: Sequence[str]) -> dict[str, float]:
    """Per item key of gpucloud.prices.rates, the region's On-Demand rate from the Price List API."""
    out: dict[str, float] = {}
    paginator = pricing.get_paginator("get_products")
    for service, extra in SERVICE_QUERIES:
        for page in paginator.paginate(ServiceCode=service, Filters=service_filters(region, extra), MaxResults=100):
            for raw in page.get("PriceList", []):
                found = service_item(json.loads(raw) if isinstance(raw, str) else raw)
                if found is not None:
                    out.setdefault(*found)
    for itype, prices in fetch_price_list(pricing, region, cpu_types).items():
        if "on_demand" in prices:
            out[f"cpu:{itype}"] = prices["on_demand"]
    return dict(sorted(out.items()))


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


class PriceDataError(Exception):
    """An AWS answer gpucloud cannot read (a Price List document that is not JSON, a price that is not a
    number, a row without its fields); `str()` names the API and the problem (the CLI exits 6)."""


@contextmanager
def _answers(what: str) -> Iterator[None]:
    """AWS calls and the reading of their answers: aws_errors, and a malformed answer as PriceDataError."""
    from botocore.exceptions import BotoCoreError

    with aws_errors(what, every_api_error=True):
        try:
            yield
        except BotoCoreError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise PriceDataError(
                f"{what}: AWS answered with data gpucloud cannot read ({type(exc).__name__}: {exc}); this "
                "region's prices were not written to the price cache; run again later, or check AWS_ENDPOINT_URL"
            ) from None


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
    services: bool = False,
    cpu_types: Sequence[str] = (),
) -> dict[str, Any]:
    check_region(region)
    for itype in instance_types:
        validate_instance_type(itype)
    if not 0 < spot_days <= MAX_SPOT_DAYS:
        raise ValueError(f"spot_days: {spot_days!r} must be more than 0 and at most {MAX_SPOT_DAYS}")
    now = now or datetime.now(UTC)
    today = now.date().isoformat()
    with _answers("price refresh (Price List API)"):
        listed = fetch_price_list(clients("pricing", PRICING_ENDPOINT_REGION), region, instance_types)
    on_demand = {t: p["on_demand"] for t, p in listed.items() if "on_demand" in p}
    service_rates: dict[str, float] = {}
    if services:
        with _answers("price refresh (Price List API, service rates)"):
            service_rates = fetch_service_rates(clients("pricing", PRICING_ENDPOINT_REGION), region, cpu_types)
    spot_prices: dict[str, dict[str, Any]] = {}
    zones: dict[str, list[str]] = {}
    blocks: dict[str, float] = {}
    ec2 = clients("ec2", region) if (spot or availability or capacity_blocks) else None
    if spot:
        with _answers("price refresh (spot price history)"):
            spot_prices = fetch_spot(ec2, instance_types, now, timedelta(days=spot_days))
    if availability:
        with _answers("price refresh (instance type offerings)"):
            zones = fetch_availability(ec2, instance_types)
    if capacity_blocks:
        catalog = get_catalog()
        eligible = [t for t in instance_types if (spec := catalog.find(t)) is not None and spec.capacity_block]
        with _answers("price refresh (Capacity Block offerings)"):
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
    dated = {k: {"usd": v, "price_date": today, "price_source": SOURCE_ON_DEMAND} for k, v in service_rates.items()}
    path = (
        write_cache(region, entries, now.isoformat(timespec="seconds"), cache_file, service_rates=dated)
        if entries or dated
        else None
    )
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
        "service_rates": service_rates,
    }
