"""Dated list prices for what the instance price book does not hold: EKS, NAT, EBS, FSx for Lustre, IPv4,
interface endpoints, KMS keys, CloudWatch Logs, and the few CPU instance types GPU platforms run next to their GPU
pools.

EKS, KMS and public IPv4 have one list price in every commercial region and stay constants here. Everything else
varies by region and comes from gpucloud/prices/service_rates.json (built by scripts/build_service_rates.py, each
figure with its source and date), overlaid by what `gpucloud prices refresh` fetched into the local price cache.
A region without a figure for an item gets None: the engine lists the resource as unpriced with the reason, never
at another region's rate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from gpucloud import versions
from gpucloud.prices.cache import region_service_rates

HOURS_PER_MONTH: Final = 730
CURRENCY: Final = "USD"
RATES_REGION: Final = "us-east-1"
SERVICE_RATES_FILE: Final = Path(__file__).resolve().parent / "service_rates.json"


@dataclass(frozen=True, slots=True)
class Rate:
    usd: float
    unit: str  # "hour", "GiB-month", "month"
    source: str
    as_of: str


_EKS = "aws.amazon.com/eks/pricing (us-east-1 list price)"
_VPC = "aws.amazon.com/vpc/pricing (us-east-1 list price)"
_KMS = "aws.amazon.com/kms/pricing"
_AS_OF = "2025-06-01"

# EKS control plane, KMS keys and public IPv4 addresses are listed at one price for every commercial region.
UNIFORM_RATE_NOTE: Final = "one list price for every commercial region"

EKS_STANDARD: Final = Rate(0.10, "hour", _EKS, _AS_OF)
EKS_EXTENDED: Final = Rate(0.60, "hour", _EKS, _AS_OF)
PUBLIC_IPV4_HOUR: Final = Rate(0.005, "hour", _VPC, "2024-02-01")
KMS_KEY_MONTH: Final = Rate(1.0, "month", _KMS, _AS_OF)
# Automatic rotation: each of the first two rotations adds $1/month (later rotations are free), so a rotated key
# costs $1 in its first year, $2 in its second and $3 from its third.
KMS_ROTATION_MAX_EXTRA_VERSIONS: Final = 2
# gp3 includes 3,000 IOPS and 125 MB/s; provisioned performance above that is billed per IOPS-month / MBps-month.
GP3_BASELINE_IOPS: Final = 3000
GP3_BASELINE_THROUGHPUT: Final = 125

# Region-varying items: key -> (unit, what it is). The keys are those of service_rates.json and the cache.
NAT_GATEWAY_HOUR: Final = "nat_gateway_hour"
NAT_GATEWAY_PER_GB: Final = "nat_gateway_gb"
INTERFACE_ENDPOINT_AZ_HOUR: Final = "interface_endpoint_az_hour"
FSX_BACKUP_GB_MONTH: Final = "fsx_backup_gb_month"
CLOUDWATCH_LOGS_INGEST_GB: Final = "cloudwatch_logs_ingest_gb"
# Elastic Load Balancing: per balancer-hour, and per capacity unit-hour (LCU, NLCU) or GB (Classic) of use.
ALB_HOUR: Final = "elb_alb_hour"
ALB_LCU_HOUR: Final = "elb_alb_lcu_hour"
NLB_HOUR: Final = "elb_nlb_hour"
NLB_LCU_HOUR: Final = "elb_nlb_lcu_hour"
CLB_HOUR: Final = "elb_clb_hour"
CLB_GB: Final = "elb_clb_gb"
EBS_VOLUME_TYPES: Final = ("gp3", "gp2", "io1", "io2", "st1", "sc1", "standard")
# io1 and io2 bill every provisioned IOPS (io2's first tier, up to 32,000 IOPS).
PIOPS_VOLUME_TYPES: Final = ("io1", "io2")
# The EC2 API creates gp2 volumes when a mapping names no type.
EBS_DEFAULT_TYPE: Final = "gp2"
# CPU types that sit next to GPU pools (system node groups, bastions). No spot estimate: CPU spot discounts
# vary too much by type and AZ to guess; refresh them with `gpucloud prices refresh --types ...`.
CPU_TYPES: Final = (
    "t3.medium",
    "t3.large",
    "m5.large",
    "m5.xlarge",
    "m5.2xlarge",
    "m6i.large",
    "m6i.xlarge",
    "m6i.2xlarge",
    "m7i.large",
    "m7i.xlarge",
    "m7i.2xlarge",
    "m7i.4xlarge",
    "c6i.xlarge",
    "c7i.xlarge",
    "r7i.xlarge",
)
# FSx for Lustre storage tiers: (deployment type, per-unit throughput MB/s/TiB, storage type). Scratch has none.
FSX_LUSTRE_TIERS: Final[tuple[tuple[str, int | None, str], ...]] = (
    ("SCRATCH_1", None, "SSD"),
    ("SCRATCH_2", None, "SSD"),
    ("PERSISTENT_1", 50, "SSD"),
    ("PERSISTENT_1", 100, "SSD"),
    ("PERSISTENT_1", 200, "SSD"),
    ("PERSISTENT_1", 12, "HDD"),
    ("PERSISTENT_1", 40, "HDD"),
    ("PERSISTENT_2", 125, "SSD"),
    ("PERSISTENT_2", 250, "SSD"),
    ("PERSISTENT_2", 500, "SSD"),
    ("PERSISTENT_2", 1000, "SSD"),
)


def ebs_key(volume_type: str) -> str:
    return f"ebs:{volume_type}"


def ebs_iops_key(volume_type: str) -> str:
    return f"ebs_iops:{volume_type}"


def ebs_throughput_key(volume_type: str) -> str:
    return f"ebs_throughput:{volume_type}"


def cpu_key(instance_type: str) -> str:
    return f"cpu:{instance_type}"


def fsx_lustre_key(deployment: str, throughput: int | None, storage: str) -> str:
    return f"fsx_lustre:{deployment}:{'-' if throughput is None else throughput}:{storage}"


ELB_ITEMS: Final = (ALB_HOUR, ALB_LCU_HOUR, NLB_HOUR, NLB_LCU_HOUR, CLB_HOUR, CLB_GB)

_FIXED_UNITS: Final[dict[str, str]] = {
    NAT_GATEWAY_HOUR: "hour",
    NAT_GATEWAY_PER_GB: "GB",
    INTERFACE_ENDPOINT_AZ_HOUR: "hour",
    FSX_BACKUP_GB_MONTH: "GB-month",
    CLOUDWATCH_LOGS_INGEST_GB: "GB ingested",
    ALB_HOUR: "hour",
    ALB_LCU_HOUR: "LCU-hour",
    NLB_HOUR: "hour",
    NLB_LCU_HOUR: "NLCU-hour",
    CLB_HOUR: "hour",
    CLB_GB: "GB",
}
_PREFIX_UNITS: Final[dict[str, str]] = {
    "ebs": "GiB-month",
    "ebs_iops": "IOPS-month",
    "ebs_throughput": "MBps-month",
    "fsx_lustre": "GiB-month",
    "cpu": "hour",
}


def unit_of(item: str) -> str:
    """The billing unit of an item key (KeyError for a key this module does not define)."""
    if item in _FIXED_UNITS:
        return _FIXED_UNITS[item]
    return _PREFIX_UNITS[item.split(":", 1)[0]]


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    return dict(json.loads(SERVICE_RATES_FILE.read_text(encoding="utf-8")))


def shipped_regions(item: str) -> list[str]:
    """The regions whose shipped table holds a figure for `item`."""
    return sorted(r for r, table in _shipped()["regions"].items() if item in table)


@lru_cache(maxsize=64)
def _shipped_rates(region: str) -> dict[str, Rate]:
    doc = _shipped()
    sources = doc["sources"]
    out: dict[str, Rate] = {}
    for item, entry in (doc["regions"].get(region) or {}).items():
        origin = sources[entry["source"]]
        out[item] = Rate(float(entry["usd"]), unit_of(item), f"{entry['source']}: {origin['note']}", origin["as_of"])
    return out


def region_rates(region: str, cache_file: Path | None = None) -> dict[str, Rate]:
    """Every service rate known for `region`: the shipped table, overlaid by the refreshed cache (newer)."""
    out = dict(_shipped_rates(region))
    for item, entry in region_service_rates(region, cache_file).items():
        try:
            unit = unit_of(item)
        except KeyError:
            continue  # an item a newer gpucloud refreshed: nothing here prices it
        out[item] = Rate(float(entry["usd"]), unit, str(entry["price_source"]), str(entry["price_date"]))
    return out


MISSING_REASON_REGIONS: Final = 4


def missing_reason(region: str, item: str, what: str) -> str:
    """Why `item` has no price in `region`, and how to get one."""
    held = shipped_regions(item)
    # Items held in 30-odd regions would make the reason a paragraph: name a few and count the rest.
    shown = ", ".join(held[:MISSING_REASON_REGIONS])
    more = len(held) - MISSING_REASON_REGIONS
    where = f"it holds {shown}{f' and {more} more' if more > 0 else ''}" if held else "no region holds it"
    return (
        f"no {region} list price for {what} in gpucloud's service rates ({where}); not priced at another region's "
        f"rate: run `gpucloud prices refresh --region {region}` to fetch it from the AWS Price List"
    )


# EKS managed node groups without instanceTypes or a launch template get t3.medium (EKS API default).
EKS_DEFAULT_INSTANCE_TYPE: Final = "t3.medium"

# The Amazon EKS Kubernetes release calendar, read from its one copy, the `calendar` section of the versions table
# (gpucloud/versions/eks.json, with its sources): (EKS release, end of standard support, end of extended support).
# Standard support lasts 14 months from the EKS release, extended support 12 more. Past the end of standard
# support a cluster whose upgradePolicy.supportType is EXTENDED (the default) pays the extended-support rate.
# A minor whose dates are not sourced (null in the table) is left out: it is billed at the standard rate.
EKS_CALENDAR_SOURCE: Final = "Amazon EKS Kubernetes release calendar (docs.aws.amazon.com/eks, kubernetes-versions)"
EKS_CALENDAR: Final[dict[str, tuple[str, str, str]]] = {
    minor: (row.released, row.end_of_standard_support, row.end_of_extended_support)
    for minor, row in sorted(versions.support_calendar().items(), key=lambda kv: versions.minor_key(kv[0]))
    if row.released and row.end_of_standard_support and row.end_of_extended_support
}
EKS_END_OF_STANDARD_SUPPORT: Final[dict[str, str]] = {v: dates[1] for v, dates in EKS_CALENDAR.items()}
# CreateCluster without a version: "the default version available in Amazon EKS is used" (EKS API reference,
# CreateCluster.version); a default version is always one in standard support on the day of creation.
EKS_DEFAULT_VERSION_SOURCE: Final = "EKS CreateCluster API: without a version, the default version available in EKS"
# How far ahead a support-tier change is announced in the plan's warnings.
EKS_TIER_WARNING_DAYS: Final = 60


def _major_minor(version: str) -> tuple[int, int] | None:
    """(1, 34) for "1.34" and "1.34.2" (EKS bills by minor version); None for what is not a version."""
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return None
    return major, minor


_EKS_OLDEST: Final = min(tuple(int(p) for p in v.split(".")) for v in EKS_CALENDAR)


def eks_in_extended_support(version: str, as_of: date) -> bool | None:
    """True past the version's end of standard support, None for a version string that is not one."""
    parsed = _major_minor(version)
    if parsed is None:
        return None
    end = EKS_END_OF_STANDARD_SUPPORT.get(f"{parsed[0]}.{parsed[1]}")
    if end is None:
        # Older than every listed version: long past standard support. Newer: assume standard.
        return parsed < _EKS_OLDEST
    # The calendar's one boundary rule: the end date itself is still standard support.
    return versions.past_support_end(end, as_of)


_NAMES: Final[dict[str, str]] = {
    NAT_GATEWAY_HOUR: "NAT gateway",
    NAT_GATEWAY_PER_GB: "NAT gateway data processing (not priced: usage)",
    INTERFACE_ENDPOINT_AZ_HOUR: "Interface VPC endpoint, per AZ",
    FSX_BACKUP_GB_MONTH: "FSx backups (not priced: usage)",
    CLOUDWATCH_LOGS_INGEST_GB: "CloudWatch Logs ingestion (not priced: usage)",
    ALB_HOUR: "Application Load Balancer",
    ALB_LCU_HOUR: "Application Load Balancer capacity unit (LCU)",
    NLB_HOUR: "Network Load Balancer",
    NLB_LCU_HOUR: "Network Load Balancer capacity unit (NLCU)",
    CLB_HOUR: "Classic Load Balancer",
    CLB_GB: "Classic Load Balancer data processed (not priced: usage)",
}
_PREFIX_NAMES: Final[dict[str, str]] = {
    "ebs": "EBS {}",
    "ebs_iops": "EBS {} provisioned IOPS (gp3: above 3,000)",
    "ebs_throughput": "EBS {} throughput above 125 MB/s",
    "fsx_lustre": "FSx for Lustre {}",
    "cpu": "EC2 {} On-Demand",
}


def describe(item: str) -> str:
    """A readable name for an item key."""
    if item in _NAMES:
        return _NAMES[item]
    prefix, rest = item.split(":", 1)
    return _PREFIX_NAMES[prefix].format(rest.replace(":-:", " ").replace(":", " "))


def table(region: str = RATES_REGION) -> list[dict[str, object]]:
    """The region's whole table as rows (for docs and `gpucloud prices show`): uniform rates, then the region's."""
    rows: list[dict[str, object]] = []

    def add(what: str, rate: Rate) -> None:
        rows.append({"item": what, "usd": rate.usd, "unit": rate.unit, "source": rate.source, "as_of": rate.as_of})

    add("EKS control plane, standard support", EKS_STANDARD)
    add("EKS control plane, extended support", EKS_EXTENDED)
    regional = region_rates(region)
    # The fixed items first, in a stable order, then the keyed ones (EBS, FSx tiers, CPU types) sorted.
    for item in (NAT_GATEWAY_HOUR, NAT_GATEWAY_PER_GB, INTERFACE_ENDPOINT_AZ_HOUR):
        if item in regional:
            add(describe(item), regional.pop(item))
    add("Public IPv4 address (Elastic IP)", PUBLIC_IPV4_HOUR)
    add("KMS customer managed key", KMS_KEY_MONTH)
    for item, rate in sorted(regional.items()):
        add(describe(item), rate)
    return rows
