"""Dated list prices for what the instance price book does not hold: EKS, NAT, EBS, FSx for Lustre, IPv4,
interface endpoints, KMS keys, and the few CPU instance types GPU platforms run next to their GPU pools.

Every figure carries its source, the date it was recorded and the regions it holds in (`SERVICE_RATE_REGIONS`):
outside them a resource is listed as unpriced rather than priced at another region's rate. `gpucloud prices
refresh` refreshes instance prices only (these service rates move rarely).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final

HOURS_PER_MONTH: Final = 730
CURRENCY: Final = "USD"
RATES_REGION: Final = "us-east-1"


@dataclass(frozen=True, slots=True)
class Rate:
    usd: float
    unit: str  # "hour", "GiB-month", "month"
    source: str
    as_of: str


_EKS = "aws.amazon.com/eks/pricing (us-east-1 list price)"
_VPC = "aws.amazon.com/vpc/pricing (us-east-1 list price)"
_EBS = "aws.amazon.com/ebs/pricing (us-east-1 list price)"
_FSX = "aws.amazon.com/fsx/lustre/pricing (us-east-1 list price)"
_KMS = "aws.amazon.com/kms/pricing"
_EC2 = "aws.amazon.com/ec2/pricing/on-demand (us-east-1, Linux, shared tenancy)"
_AS_OF = "2025-06-01"

# Regions where the region-varying service rates below (NAT, EBS, FSx, interface endpoints, CPU types) are the
# figures listed: AWS lists the same rates for N. Virginia, Ohio and Oregon.
SERVICE_RATE_REGIONS: Final = frozenset({"us-east-1", "us-east-2", "us-west-2"})
# EKS control plane, KMS keys and public IPv4 addresses are listed at one price for every commercial region.
UNIFORM_RATE_NOTE: Final = "one list price for every commercial region"

EKS_STANDARD: Final = Rate(0.10, "hour", _EKS, _AS_OF)
EKS_EXTENDED: Final = Rate(0.60, "hour", _EKS, _AS_OF)
NAT_GATEWAY_HOUR: Final = Rate(0.045, "hour", _VPC, _AS_OF)
NAT_GATEWAY_PER_GB: Final = Rate(0.045, "GB", _VPC, _AS_OF)
PUBLIC_IPV4_HOUR: Final = Rate(0.005, "hour", _VPC, "2024-02-01")
INTERFACE_ENDPOINT_AZ_HOUR: Final = Rate(0.01, "hour", _VPC, _AS_OF)
KMS_KEY_MONTH: Final = Rate(1.0, "month", _KMS, _AS_OF)
# Automatic rotation: each of the first two rotations adds $1/month (later rotations are free), so a rotated key
# costs $1 in its first year, $2 in its second and $3 from its third.
KMS_ROTATION_MAX_EXTRA_VERSIONS: Final = 2
# gp3 includes 3,000 IOPS and 125 MB/s; provisioned performance above that is billed per IOPS-month / MBps-month.
GP3_BASELINE_IOPS: Final = 3000
GP3_BASELINE_THROUGHPUT: Final = 125
GP3_IOPS_MONTH: Final = Rate(0.005, "IOPS-month", _EBS, _AS_OF)
GP3_THROUGHPUT_MONTH: Final = Rate(0.04, "MBps-month", _EBS, _AS_OF)
# io1 and io2 bill every provisioned IOPS (io2's first tier, up to 32,000 IOPS).
PIOPS_IOPS_MONTH: Final[dict[str, Rate]] = {
    "io1": Rate(0.065, "IOPS-month", _EBS, _AS_OF),
    "io2": Rate(0.065, "IOPS-month", _EBS, _AS_OF),
}
FSX_BACKUP_GB_MONTH: Final = Rate(0.05, "GB-month", _FSX, _AS_OF)
CLOUDWATCH_LOGS_INGEST_GB: Final = Rate(0.50, "GB ingested", "aws.amazon.com/cloudwatch/pricing", _AS_OF)

EBS_GIB_MONTH: Final[dict[str, Rate]] = {
    "gp3": Rate(0.08, "GiB-month", _EBS, _AS_OF),
    "gp2": Rate(0.10, "GiB-month", _EBS, _AS_OF),
    "io1": Rate(0.125, "GiB-month", _EBS, _AS_OF),
    "io2": Rate(0.125, "GiB-month", _EBS, _AS_OF),
    "st1": Rate(0.045, "GiB-month", _EBS, _AS_OF),
    "sc1": Rate(0.015, "GiB-month", _EBS, _AS_OF),
    "standard": Rate(0.05, "GiB-month", _EBS, _AS_OF),
}
# The EC2 API creates gp2 volumes when a mapping names no type.
EBS_DEFAULT_TYPE: Final = "gp2"

# FSx for Lustre storage, $/GB-month, by (deployment type, per-unit throughput MB/s/TiB, storage type).
# Scratch has no throughput tier. PERSISTENT_2 125 and SCRATCH_2 were cross-checked against third-party
# estimators in 2026 (1.2 TB at 125 MB/s/TiB = $174/month).
FSX_LUSTRE_GB_MONTH: Final[dict[tuple[str, int | None, str], Rate]] = {
    ("SCRATCH_1", None, "SSD"): Rate(0.14, "GiB-month", _FSX, _AS_OF),
    ("SCRATCH_2", None, "SSD"): Rate(0.14, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_1", 50, "SSD"): Rate(0.145, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_1", 100, "SSD"): Rate(0.21, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_1", 200, "SSD"): Rate(0.29, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_1", 12, "HDD"): Rate(0.025, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_1", 40, "HDD"): Rate(0.083, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_2", 125, "SSD"): Rate(0.145, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_2", 250, "SSD"): Rate(0.21, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_2", 500, "SSD"): Rate(0.34, "GiB-month", _FSX, _AS_OF),
    ("PERSISTENT_2", 1000, "SSD"): Rate(0.60, "GiB-month", _FSX, _AS_OF),
}

# CPU types that sit next to GPU pools (system node groups, bastions). No spot estimate: CPU spot discounts
# vary too much by type and AZ to guess; refresh them with `gpucloud prices refresh --types ...`.
CPU_ON_DEMAND_HOUR: Final[dict[str, float]] = {
    "t3.medium": 0.0416,
    "t3.large": 0.0832,
    "m5.large": 0.096,
    "m5.xlarge": 0.192,
    "m5.2xlarge": 0.384,
    "m6i.large": 0.096,
    "m6i.xlarge": 0.192,
    "m6i.2xlarge": 0.384,
    "m7i.large": 0.1008,
    "m7i.xlarge": 0.2016,
    "m7i.2xlarge": 0.4032,
    "m7i.4xlarge": 0.8064,
    "c6i.xlarge": 0.17,
    "c7i.xlarge": 0.1785,
    "r7i.xlarge": 0.2646,
}
CPU_SOURCE: Final = _EC2
CPU_AS_OF: Final = _AS_OF

# EKS managed node groups without instanceTypes or a launch template get t3.medium (EKS API default).
EKS_DEFAULT_INSTANCE_TYPE: Final = "t3.medium"

# The Amazon EKS Kubernetes release calendar (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html,
# mirrored by endoflife.date/amazon-eks): (EKS release, end of standard support, end of extended support).
# Standard support lasts 14 months from the EKS release, extended support 12 more. Past the end of standard
# support a cluster whose upgradePolicy.supportType is EXTENDED (the default) pays the extended-support rate.
EKS_CALENDAR_SOURCE: Final = "Amazon EKS Kubernetes release calendar (docs.aws.amazon.com/eks, kubernetes-versions)"
EKS_CALENDAR: Final[dict[str, tuple[str, str, str]]] = {
    "1.28": ("2023-09-26", "2024-11-26", "2025-11-26"),
    "1.29": ("2024-01-23", "2025-03-23", "2026-03-23"),
    "1.30": ("2024-05-23", "2025-07-23", "2026-07-23"),
    "1.31": ("2024-09-26", "2025-11-26", "2026-11-26"),
    "1.32": ("2025-01-23", "2026-03-23", "2027-03-23"),
    "1.33": ("2025-05-28", "2026-07-29", "2027-07-29"),
    "1.34": ("2025-10-06", "2026-12-02", "2027-12-02"),
    "1.35": ("2026-01-28", "2027-03-27", "2028-03-27"),
}
EKS_END_OF_STANDARD_SUPPORT: Final[dict[str, str]] = {v: dates[1] for v, dates in EKS_CALENDAR.items()}
# CreateCluster without a version: "the default version available in Amazon EKS is used" (EKS API reference,
# CreateCluster.version); a default version is always one in standard support on the day of creation.
EKS_DEFAULT_VERSION_SOURCE: Final = "EKS CreateCluster API: without a version, the default version available in EKS"
# How far ahead a support-tier change is announced in the plan's warnings.
EKS_TIER_WARNING_DAYS: Final = 60


def eks_in_extended_support(version: str, as_of: date) -> bool | None:
    """True past the version's end of standard support, None when the calendar above lacks the version."""
    end = EKS_END_OF_STANDARD_SUPPORT.get(version)
    if end is None:
        try:
            major, minor = (int(p) for p in version.split(".")[:2])
        except ValueError:
            return None
        oldest = min(EKS_END_OF_STANDARD_SUPPORT, key=lambda v: tuple(int(p) for p in v.split(".")))
        o_major, o_minor = (int(p) for p in oldest.split("."))
        # Older than every listed version: long past standard support. Newer: assume standard.
        return (major, minor) < (o_major, o_minor)
    return as_of > date.fromisoformat(end)


def table() -> list[dict[str, object]]:
    """The whole table as rows (for docs and `gpucloud prices show`)."""
    rows: list[dict[str, object]] = []

    def add(what: str, rate: Rate) -> None:
        rows.append({"item": what, "usd": rate.usd, "unit": rate.unit, "source": rate.source, "as_of": rate.as_of})

    add("EKS control plane, standard support", EKS_STANDARD)
    add("EKS control plane, extended support", EKS_EXTENDED)
    add("NAT gateway", NAT_GATEWAY_HOUR)
    add("NAT gateway data processing (not priced: usage)", NAT_GATEWAY_PER_GB)
    add("Public IPv4 address (Elastic IP)", PUBLIC_IPV4_HOUR)
    add("Interface VPC endpoint, per AZ", INTERFACE_ENDPOINT_AZ_HOUR)
    add("KMS customer managed key", KMS_KEY_MONTH)
    add("EBS gp3 IOPS above 3,000", GP3_IOPS_MONTH)
    add("EBS gp3 throughput above 125 MB/s", GP3_THROUGHPUT_MONTH)
    for vol, rate in PIOPS_IOPS_MONTH.items():
        add(f"EBS {vol} provisioned IOPS", rate)
    add("FSx backups (not priced: usage)", FSX_BACKUP_GB_MONTH)
    add("CloudWatch Logs ingestion (not priced: usage)", CLOUDWATCH_LOGS_INGEST_GB)
    for vol, rate in EBS_GIB_MONTH.items():
        add(f"EBS {vol}", rate)
    for (deployment, throughput, storage), rate in FSX_LUSTRE_GB_MONTH.items():
        tier = f" {throughput} MB/s/TiB" if throughput else ""
        add(f"FSx for Lustre {deployment}{tier} {storage}", rate)
    for itype, usd in CPU_ON_DEMAND_HOUR.items():
        add(f"EC2 {itype} On-Demand", Rate(usd, "hour", CPU_SOURCE, CPU_AS_OF))
    return rows
