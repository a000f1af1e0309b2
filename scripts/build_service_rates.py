"""Rebuild gpucloud/prices/service_rates.json: the dated per-region service rates (NAT gateway, interface endpoints,
EBS storage and provisioned performance, FSx for Lustre, CloudWatch Logs ingestion, the CPU types of system node
groups) that gpucloud.prices.rates serves to the cost engine.

Inputs (nothing is fetched here):
  * ``US_LIST`` below: the list prices transcribed from the AWS pricing pages (aws.amazon.com/vpc/pricing,
    /ebs/pricing, /fsx/lustre/pricing, /ec2/pricing/on-demand, /cloudwatch/pricing) on 2025-06-01. The pages list
    one figure for US East (N. Virginia), US East (Ohio) and US West (Oregon); CloudWatch Logs was read for
    N. Virginia only. These win in those three regions.
  * ``--ebs-pricing FILE``: docs/ebs_pricing.json of cloudkeep-io/ebs-pricing, a daily dump of the AWS Price List API
    (service AmazonEC2, product families Storage, System Operation and Provisioned Throughput) for every region; pass
    the file's last_updated date with ``--ebs-date``. It gives EBS storage, gp3 IOPS/throughput and io1/io2 IOPS
    where US_LIST has none (every region outside the three above). Without ``--ebs-pricing`` the EBS figures of the
    existing service_rates.json (source ``cloudkeep-ebs``) are carried over unchanged (merge), so the other inputs
    can be updated without that file.
  * ``--aws-page-data DIR``: the lib/data directory of lamngockhuong/aws-price (MIT; commit 508fb45, 2025-11-05),
    which commits verbatim copies of the JSON files the AWS pricing pages load
    (https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/<service>/USD/current/<service>.json) and AWS's
    locations.json (display name -> region code). Each file's ``manifest.hawkFilePublicationDate`` is its source's
    date. Read from it, per region:
      - pricing/natgateway.json: "Hourly charge for NAT Gateways" and "Charge for per GB data processed by
        NatGateways";
      - pricing/vpc.json: "Hourly charge for VPC Endpoints per Hrs" (interface endpoint, per AZ);
      - pricing/cloudwatch.json: "Logs Collected Data Ingestion" (CloudWatch Logs standard ingestion);
      - pricing/fsx.json: FSx for Lustre PERSISTENT_2 SSD 125/250/500/1000, PERSISTENT_1 SSD 50/100/200 and
        PERSISTENT_1 HDD 12/40. This file keys its rates by opaque region-independent codes (RegionlessRateCode);
        ``FSX_LUSTRE_CODES`` names the ones identified, and the build stops if their US figures stop matching
        US_LIST. SCRATCH_1/2 and backups could not be identified there and stay out;
      - pricing/ec2-transformed.json: Linux On-Demand per instance type, the repository's own flattening of the
        page's ec2.json (it keeps no manifest: pass its commit date with ``--ec2-date``).
    The three US regions keep US_LIST's figures; where the page data disagrees with them, the build prints it.

A region or item without a figure from one of these stays out of the file; the cost engine lists it as unpriced
(`gpucloud prices refresh --region R` fills it from the Price List API).

Run: python scripts/build_service_rates.py --ebs-pricing /path/to/ebs-pricing/docs/ebs_pricing.json \
        --ebs-date 2022-02-10 --aws-page-data /path/to/aws-price/lib/data --ec2-date 2025-11-03
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from gpucloud.fileio import write_atomic

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
    # PERSISTENT_1 SSD 50/100 read 0.145/0.21 until 2026-12-01: those are PERSISTENT_2's 125/250 figures copied into
    # the wrong rows. The page data's three-tier "SSD old" group (see FSX_LUSTRE_CODES) lists 0.14/0.19/0.29 for it.
    "fsx_lustre:PERSISTENT_1:50:SSD": 0.14,
    "fsx_lustre:PERSISTENT_1:100:SSD": 0.19,
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
# Elastic Load Balancing, US East (N. Virginia) only (source "aws-elb-pricing-page"): the other regions' figures
# were not at hand, and a region without a figure lists its load balancers as unpriced, never at this rate.
# The page data (--aws-page-data) has no ELB file: lamngockhuong/aws-price at 508fb45 commits no copy of the ELB
# page's meteredUnitMaps/elb/USD/current/elb.json (its lib/data/pricing lists none), so no region's ELB rate is read
# from it. (Its pricing/ec2.json, the EC2 page's map, was too large for the snapshot searched and was not checked.)
ELB_SOURCE = "aws-elb-pricing-page"
ELB_US_EAST_1: dict[str, float] = {
    "elb_alb_hour": 0.0225,
    "elb_alb_lcu_hour": 0.008,
    "elb_nlb_hour": 0.0225,
    "elb_nlb_lcu_hour": 0.006,
    "elb_clb_hour": 0.025,
    "elb_clb_gb": 0.008,
}

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


# AWS pricing-page data (--aws-page-data): file -> {rate key in the file -> gpucloud item}.
PAGE_ITEMS: dict[str, dict[str, str]] = {
    "natgateway": {
        "Hourly charge for NAT Gateways": "nat_gateway_hour",
        "Charge for per GB data processed by NatGateways": "nat_gateway_gb",
    },
    "vpc": {"Hourly charge for VPC Endpoints per Hrs": "interface_endpoint_az_hour"},
    "cloudwatch": {"Logs Collected Data Ingestion": "cloudwatch_logs_ingest_gb"},
}
# fsx.json keys FSx rates by a RegionlessRateCode (the same code names the same product in every region). These six
# were identified from the file itself: the file labels a group of four codes "SSD new" whose US figures are exactly
# US_LIST's four PERSISTENT_2 tiers (0.145, 0.21, 0.34, 0.60; price rises with throughput), and a group "HDD New"
# whose two codes without SSD cache are exactly US_LIST's PERSISTENT_1 HDD 12 and 40 tiers (0.025, 0.083; the other
# two are those plus 20% SSD cache). The Tokyo PERSISTENT_2 figures also reproduce the hourly table of a 2022
# ap-northeast-1 write-up ("FSx for Lustre Persistent 2 のスペック別利用料金", 2022-09-03: 1.2 TiB at 125/250/500/1000
# MB/s/TiB = $0.31/0.46/0.77/1.39 an hour = 0.188/0.282/0.471/0.848 x 1200 / 730). build() checks the US figures.
FSX_LUSTRE_CODES: dict[str, str] = {
    "zgFPJ0cUYXdd2jLTiOuDcSYRtdFhYRqCjCbYd49h1Y8": "fsx_lustre:PERSISTENT_2:125:SSD",
    "yMXUnsAV3uitn3E4G7Z25YOoTEwD6fTeQCq0JdEjw-0": "fsx_lustre:PERSISTENT_2:250:SSD",
    "JCLdXKhp6UDel_cRam0smdbULMkLKcxzWLKN2kvL6Rs": "fsx_lustre:PERSISTENT_2:500:SSD",
    "SJkcZfTtuEZ8xiIULvUsQp_CzFRvoWE-3TKzTnlPRVo": "fsx_lustre:PERSISTENT_2:1000:SSD",
    "CFxfkVZ1WU8WUAHn6yAN9F-Euou_f7oxz0hmHgu8saE": "fsx_lustre:PERSISTENT_1:12:HDD",
    "JZnWfFyH93RNLMmAmnNLcm6W3sazQFoPJN_90Ld8TdE": "fsx_lustre:PERSISTENT_1:40:HDD",
    # The group labelled "SSD old": three SSD tiers, the older deployment type. Only PERSISTENT_1 SSD has three
    # throughput tiers (50/100/200 MB/s/TiB, FSx Lustre user guide), and its 200 tier is US_LIST's transcribed 0.29.
    "xsOx6wDnGW5nuMTknw12rrHuFN6HEak26it34WIfSIw": "fsx_lustre:PERSISTENT_1:50:SSD",
    "xCIN2wziEu7lzO5aqPEEXBmoLO9xvLz29dpzjUvZSPo": "fsx_lustre:PERSISTENT_1:100:SSD",
    "tRaJtnmZyjmqgVlKNpbW3sqyU5Dj9aaDrx8Xua1dg7U": "fsx_lustre:PERSISTENT_1:200:SSD",
}
# The CPU types gpucloud prices (gpucloud.prices.rates.CPU_TYPES), as US_LIST names them.
CPU_ITEMS = tuple(k for k in US_LIST if k.startswith("cpu:"))
PAGE_SOURCE = "aws-page-data-{}"
PAGE_REPO = "lamngockhuong/aws-price lib/data (MIT, commit 508fb45)"


def _region_codes(data_dir: Path) -> dict[str, str]:
    """Page display name ("EU (Ireland)") -> region code, for AWS Regions only (no Local or Wavelength Zones)."""
    locations = json.loads((data_dir / "locations.json").read_text(encoding="utf-8"))
    return {
        name: entry["code"]
        for name, entry in locations.items()
        if entry.get("type") == "AWS Region" and _REGION.match(entry.get("code", ""))
    }


def _usd(text: str) -> float | None:
    usd = round(float(text), 10)
    return usd if usd > 0 else None


def _page_file(data_dir: Path, name: str, keys: dict[str, str]) -> tuple[dict[str, dict[str, float]], str]:
    """{region: {item: usd}} from one meteredUnitMaps file, and its publication date."""
    doc = json.loads((data_dir / "pricing" / f"{name}.json").read_text(encoding="utf-8"))
    codes = _region_codes(data_dir)
    out: dict[str, dict[str, float]] = {}
    for display, rates in doc["regions"].items():
        region = codes.get(display)
        if region is None:
            continue
        for key, rate in rates.items():
            item = keys.get(key)
            usd = _usd(rate["price"]) if item else None
            if item and usd is not None:
                out.setdefault(region, {})[item] = usd
    return out, str(doc["manifest"]["hawkFilePublicationDate"])[:10]


def _page_ec2(data_dir: Path) -> dict[str, dict[str, float]]:
    """{region: {cpu item: usd}} from the repository's flattening of ec2.json: one Linux On-Demand row per type and
    region, the region either a code or the display name lower-cased with spaces as dashes."""
    codes = _region_codes(data_dir)
    by_slug = {re.sub(r"\s+", "-", name.lower()): code for name, code in codes.items()}
    out: dict[str, dict[str, float]] = {}
    for row in json.loads((data_dir / "pricing" / "ec2-transformed.json").read_text(encoding="utf-8")):
        region = row["region"] if row["region"] in codes.values() else by_slug.get(row["region"])
        item = f"cpu:{row['attributes']['instanceType']}"
        usd = _usd(row["pricePerUnit"])
        if region is None or item not in CPU_ITEMS or usd is None or row["attributes"]["operatingSystem"] != "Linux":
            continue
        if out.get(region, {}).get(item, usd) != usd:
            raise SystemExit(f"ec2-transformed.json: two prices for {item} in {region}")
        out.setdefault(region, {})[item] = usd
    return out


def page_data(data_dir: Path, ec2_date: str) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]:
    """Per region, {item: {usd, source}} from the AWS pricing-page data, and the sources it names."""
    regions: dict[str, dict[str, dict[str, Any]]] = {}
    sources: dict[str, Any] = {}
    files = {**PAGE_ITEMS, "fsx": FSX_LUSTRE_CODES}
    for name, keys in files.items():
        found, published = _page_file(data_dir, name, keys)
        source = PAGE_SOURCE.format(name)
        sources[source] = {
            "as_of": published,
            "note": f"AWS pricing-page data b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/"
            f"{'ec2' if name == 'natgateway' else name}/USD/current/{name}.json (published {published}) as "
            f"committed in {PAGE_REPO}.",
        }
        for region, items in found.items():
            regions.setdefault(region, {}).update({k: {"usd": v, "source": source} for k, v in items.items()})
    sources[PAGE_SOURCE.format("ec2")] = {
        "as_of": ec2_date,
        "note": "AWS pricing-page data b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2.json "
        f"(Linux On-Demand) as flattened into pricing/ec2-transformed.json in {PAGE_REPO}; dated by that file's "
        "commit.",
    }
    for region, items in _page_ec2(data_dir).items():
        table = regions.setdefault(region, {})
        table.update({k: {"usd": v, "source": PAGE_SOURCE.format("ec2")} for k, v in items.items()})
    return regions, sources


def us_differences(page: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Where the page data's US figures differ from US_LIST (reported, never applied)."""
    out = []
    for region in US_REGIONS:
        listed = {**US_LIST, **(US_EAST_1_ONLY if region == "us-east-1" else {})}
        for item, entry in sorted(page.get(region, {}).items()):
            if item in listed and entry["usd"] != listed[item]:
                out.append(f"{region} {item}: US_LIST {listed[item]}, page data {entry['usd']}")
    return out


def _check_fsx_codes(page: dict[str, dict[str, dict[str, Any]]]) -> None:
    """The FSx codes were identified by their US figures: stop if the data no longer bears that out."""
    for region in US_REGIONS:
        for item in FSX_LUSTRE_CODES.values():
            got = page.get(region, {}).get(item, {}).get("usd")
            if got != US_LIST[item]:
                raise SystemExit(f"fsx.json: {item} in {region} is {got}, US_LIST {US_LIST[item]}: re-identify")


def _existing_ebs() -> tuple[dict[str, dict[str, float]], str]:
    """The EBS figures (source cloudkeep-ebs) and date of the current service_rates.json, for a merge."""
    doc = json.loads(OUT.read_text(encoding="utf-8"))
    ebs = {
        region: {k: e["usd"] for k, e in table.items() if e["source"] == "cloudkeep-ebs"}
        for region, table in doc["regions"].items()
    }
    return {r: t for r, t in ebs.items() if t}, str(doc["sources"]["cloudkeep-ebs"]["as_of"])


def build(
    ebs_path: Path | None,
    ebs_date: str | None,
    page_dir: Path | None = None,
    ec2_date: str | None = None,
) -> dict[str, Any]:
    if ebs_path is None:
        ebs, ebs_date = _existing_ebs()
    else:
        ebs = _ebs(ebs_path)
    regions: dict[str, dict[str, Any]] = {}
    for region, items in ebs.items():
        regions[region] = {k: {"usd": v, "source": "cloudkeep-ebs"} for k, v in items.items()}
    page_sources: dict[str, Any] = {}
    if page_dir is not None:
        if ec2_date is None:
            raise SystemExit("--aws-page-data needs --ec2-date (the commit date of pricing/ec2-transformed.json)")
        page, page_sources = page_data(page_dir, ec2_date)
        _check_fsx_codes(page)
        for region, entries in page.items():
            regions.setdefault(region, {}).update(entries)
    # The three US regions: US_LIST wins over both dumps.
    for region in US_REGIONS:
        table = regions.setdefault(region, {})
        table.update({k: {"usd": v, "source": "aws-pricing-pages"} for k, v in US_LIST.items()})
    regions["us-east-1"].update({k: {"usd": v, "source": "aws-pricing-pages"} for k, v in US_EAST_1_ONLY.items()})
    regions["us-east-1"].update({k: {"usd": v, "source": ELB_SOURCE} for k, v in ELB_US_EAST_1.items()})
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
            ELB_SOURCE: {
                "as_of": "2026-05-01",
                "note": "aws.amazon.com/elasticloadbalancing/pricing, US East (N. Virginia): Application and Network "
                "Load Balancer $0.0225 per hour, $0.008 per LCU-hour and $0.006 per NLCU-hour; Classic Load Balancer "
                "$0.025 per hour and $0.008 per GB. The page draws its tables with script; the figures as quoted by "
                "awsnegotiations.com/elastic-load-balancer-cost.html (published May 2026, day not stated) and "
                "handbook.vantage.sh/aws/services/elb-pricing.",
            },
            **dict(sorted(page_sources.items())),
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
    parser.add_argument("--ebs-pricing", type=Path, help="cloudkeep-io/ebs-pricing docs/ebs_pricing.json")
    parser.add_argument("--ebs-date", help="that file's last_updated date (with --ebs-pricing)")
    parser.add_argument("--aws-page-data", type=Path, help="lamngockhuong/aws-price lib/data directory")
    parser.add_argument("--ec2-date", help="commit date of its pricing/ec2-transformed.json (with --aws-page-data)")
    args = parser.parse_args()
    if (args.ebs_pricing is None) != (args.ebs_date is None):
        parser.error("--ebs-pricing and --ebs-date go together (omit both to keep the file's EBS figures)")
    doc = build(args.ebs_pricing, args.ebs_date, args.aws_page_data, args.ec2_date)
    if args.aws_page_data is not None:
        page, _ = page_data(args.aws_page_data, args.ec2_date)
        for line in us_differences(page):
            print(f"differs (US_LIST kept): {line}")
    write_atomic(OUT, render(doc))
    print(f"wrote {OUT}: {sum(len(v) for v in doc['regions'].values())} rates in {len(doc['regions'])} regions")


if __name__ == "__main__":
    main()
