"""Rebuild gpucloud/prices/service_rates.json: the dated per-region service rates (NAT gateway, interface endpoints,
EBS storage and provisioned performance, FSx for Lustre, CloudWatch Logs ingestion, the CPU types of system node
groups) that gpucloud.cost.rates serves to the cost engine.

Inputs (nothing is fetched here):
  * ``US_LIST`` below: the list prices transcribed from the AWS pricing pages (aws.amazon.com/vpc/pricing,
    /ebs/pricing, /fsx/lustre/pricing, /ec2/pricing/on-demand, /cloudwatch/pricing) on 2025-06-01. The pages list
    one figure for US East (N. Virginia), US East (Ohio) and US West (Oregon); CloudWatch Logs was read for
    N. Virginia only.
  * ``--ebs-pricing FILE``: docs/ebs_pricing.json of cloudkeep-io/ebs-pricing, a daily dump of the AWS Price List API
    (service AmazonEC2, product families Storage, System Operation and Provisioned Throughput) for every region; pass
    the file's last_updated date with ``--ebs-date``. It gives EBS storage, gp3 IOPS/throughput and io1/io2 IOPS
    where US_LIST has none (every region outside the three above).

A region or item without a figure from one of these stays out of the file; the cost engine lists it as unpriced
(`gpucloud prices refresh --region R` fills it from the Price List API).

Run: python scripts/build_service_rates.py --ebs-pricing /path/to/ebs-pricing/docs/ebs_pricing.json \
        --ebs-date 2022-02-10
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "gpucloud" / "prices" / "service_rates.json"
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
US_REGIONS = ("us-east-1", "us-east-2", "us-west-2")
# The Price List bills gp3 throughput per GiBps-month; gpucloud prices it per MBps-month (provider input unit).
MIB_PER_GIB = 1024

# Item key -> USD, from the AWS pricing pages (source "aws-pricing-pages", 2025-06-01).
US_LIST: dict[str, float] = {
    "nat_gateway_hour": 0.045,
    "nat_gateway_gb": 0.045,
    "interface_endpoint_az_hour": 0.01,
    "ebs:gp3": 0.08,
    "ebs:gp2": 0.10,
    "ebs:io1": 0.125,
    "ebs:io2": 0.125,
    "ebs:st1": 0.045,
    "ebs:sc1": 0.015,
    "ebs:standard": 0.05,
    "ebs_iops:gp3": 0.005,
    "ebs_throughput:gp3": 0.04,
    "ebs_iops:io1": 0.065,
    "ebs_iops:io2": 0.065,
    "fsx_backup_gb_month": 0.05,
    "fsx_lustre:SCRATCH_1:-:SSD": 0.14,
    "fsx_lustre:SCRATCH_2:-:SSD": 0.14,
    "fsx_lustre:PERSISTENT_1:50:SSD": 0.145,
    "fsx_lustre:PERSISTENT_1:100:SSD": 0.21,
    "fsx_lustre:PERSISTENT_1:200:SSD": 0.29,
    "fsx_lustre:PERSISTENT_1:12:HDD": 0.025,
    "fsx_lustre:PERSISTENT_1:40:HDD": 0.083,
    "fsx_lustre:PERSISTENT_2:125:SSD": 0.145,
    "fsx_lustre:PERSISTENT_2:250:SSD": 0.21,
    "fsx_lustre:PERSISTENT_2:500:SSD": 0.34,
    "fsx_lustre:PERSISTENT_2:1000:SSD": 0.60,
    "cpu:t3.medium": 0.0416,
    "cpu:t3.large": 0.0832,
    "cpu:m5.large": 0.096,
    "cpu:m5.xlarge": 0.192,
    "cpu:m5.2xlarge": 0.384,
    "cpu:m6i.large": 0.096,
    "cpu:m6i.xlarge": 0.192,
    "cpu:m6i.2xlarge": 0.384,
    "cpu:m7i.large": 0.1008,
    "cpu:m7i.xlarge": 0.2016,
    "cpu:m7i.2xlarge": 0.4032,
    "cpu:m7i.4xlarge": 0.8064,
    "cpu:c6i.xlarge": 0.17,
    "cpu:c7i.xlarge": 0.1785,
    "cpu:r7i.xlarge": 0.2646,
}
US_EAST_1_ONLY: dict[str, float] = {"cloudwatch_logs_ingest_gb": 0.50}

# cloudkeep-io/ebs-pricing field -> gpucloud item, per volume type.
_EBS_FIELDS: dict[tuple[str, str], str] = {
    **{(vol, "pricePerGBMonth"): f"ebs:{vol}" for vol in ("gp3", "gp2", "io1", "io2", "st1", "sc1", "standard")},
    ("gp3", "pricePerIOPSMonth"): "ebs_iops:gp3",
    ("gp3", "pricePerGiBpsMonth"): "ebs_throughput:gp3",
    ("io1", "pricePerIOPSMonth"): "ebs_iops:io1",
    # io2's first tier (up to 32,000 IOPS): the tier gpucloud prices.
    ("io2", "pricePerTier1IOPSMonth"): "ebs_iops:io2",
}


def _ebs(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in json.loads(path.read_text(encoding="utf-8")):
        region = row.get("rzCode", "")
        if row.get("rzType") != "region" or not _REGION.match(region):
            continue
        for vol, fields in (row.get("ebs_prices") or {}).items():
            for field, price in fields.items():
                item = _EBS_FIELDS.get((vol, field))
                usd = float(price.get("USD") or 0)
                if item is None or usd <= 0:
                    continue
                if item.startswith("ebs_throughput:"):
                    usd = round(usd / MIB_PER_GIB, 6)
                out.setdefault(region, {})[item] = usd
    return out


def build(ebs_path: Path, ebs_date: str) -> dict[str, Any]:
    regions: dict[str, dict[str, Any]] = {}
    for region, items in _ebs(ebs_path).items():
        regions[region] = {k: {"usd": v, "source": "cloudkeep-ebs"} for k, v in items.items()}
    for region in US_REGIONS:
        table = regions.setdefault(region, {})
        table.update({k: {"usd": v, "source": "aws-pricing-pages"} for k, v in US_LIST.items()})
    regions["us-east-1"].update({k: {"usd": v, "source": "aws-pricing-pages"} for k, v in US_EAST_1_ONLY.items()})
    return {
        "schema": "gpucloud.prices.service_rates/v1",
        "currency": "USD",
        "sources": {
            "aws-pricing-pages": {
                "as_of": "2025-06-01",
                "note": "AWS pricing pages (aws.amazon.com/vpc, /ebs, /fsx/lustre, /ec2/pricing/on-demand, /cloudwatch "
                "pricing): one list price for N. Virginia, Ohio and Oregon; CloudWatch Logs for N. Virginia only.",
            },
            "cloudkeep-ebs": {
                "as_of": ebs_date,
                "note": "AWS Price List API (AmazonEC2: Storage, System Operation, Provisioned Throughput) as "
                "published daily by cloudkeep-io/ebs-pricing docs/ebs_pricing.json; gp3 throughput converted from "
                "GiBps-month to MBps-month (/1024).",
            },
        },
        "regions": {r: dict(sorted(e.items())) for r, e in sorted(regions.items())},
    }


def render(doc: dict[str, Any]) -> str:
    """Header, then one line per region: small, and a diff shows which region moved."""
    head = {k: v for k, v in doc.items() if k != "regions"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "regions": {']
    regions = list(doc["regions"].items())
    for i, (region, table) in enumerate(regions):
        comma = "," if i < len(regions) - 1 else ""
        lines.append(f"  {json.dumps(region)}: {json.dumps(table, separators=(',', ':'))}{comma}")
    lines.append(" }\n}\n")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ebs-pricing", type=Path, required=True)
    parser.add_argument("--ebs-date", required=True)
    args = parser.parse_args()
    doc = build(args.ebs_pricing, args.ebs_date)
    OUT.write_text(render(doc), encoding="utf-8")
    print(f"wrote {OUT}: {sum(len(v) for v in doc['regions'].values())} rates in {len(doc['regions'])} regions")


if __name__ == "__main__":
    main()
