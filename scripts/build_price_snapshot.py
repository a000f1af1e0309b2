"""Rebuild gpucloud/prices/snapshot.json: the dated per-region price snapshot that ships with gpucloud.

Inputs (nothing is fetched here):
  * ``--vantage DIR``: the ``data/<family>_instances.js`` files of tsaol/aws-gpu (MIT), generated from
    instances.vantage.sh; per region they hold the Linux On-Demand rate and the 1-year Standard Reserved Instance,
    No Upfront effective hourly rate. The date goes in with ``--vantage-date`` (the files' "Last updated" line).
  * the catalog (gpucloud/catalog/instances.json): which types to price, plus its us-east-1 AWS Price List and
    Capacity Block figures with their own dates, which are newer than the Vantage data and win for us-east-1.

Run: python scripts/build_price_snapshot.py --vantage /path/to/aws-gpu/data --vantage-date 2026-01-21
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from gpucloud.fileio import write_atomic

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "gpucloud" / "catalog" / "instances.json"
OUT = ROOT / "gpucloud" / "prices" / "snapshot.json"
# Local Zones and Wavelength zones (us-east-1-atl-1) are not regions: a plan's region never names one.
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def _vantage(data_dir: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(data_dir.glob("*_instances.js")):
        if path.name.startswith("all_") or path.stem.endswith("_cn"):
            continue
        text = path.read_text(encoding="utf-8")
        match = re.search(r"=\s*(\[.*\])\s*;?\s*$", text, re.S)
        if match is None:
            continue
        for record in json.loads(match.group(1)):
            out[record.get("apiName") or record["name"]] = record
    return out


def build(vantage_dir: Path, vantage_date: str) -> dict[str, Any]:
    catalog = json.loads(CATALOG.read_text(encoding="utf-8"))
    vantage = _vantage(vantage_dir)
    types = sorted(catalog["instances"])
    regions: dict[str, dict[str, Any]] = {}
    for itype in types:
        for region, prices in (vantage.get(itype) or {}).get("pricing", {}).items():
            if not _REGION.match(region):
                continue
            entry: dict[str, Any] = {}
            if prices.get("onDemand"):
                entry["on_demand"] = {"usd": prices["onDemand"], "source": "vantage"}
            if prices.get("reserved"):
                entry["reserved_1y"] = {"usd": prices["reserved"], "source": "vantage"}
            if entry:
                regions.setdefault(region, {})[itype] = entry
    # us-east-1: the AWS Price List bulk file and the Capacity Blocks page are newer than the Vantage data.
    east = regions.setdefault("us-east-1", {})
    for itype in types:
        spec = catalog["instances"][itype]
        entry = east.setdefault(itype, {})
        if spec.get("on_demand_usd") is not None and spec.get("price_source") == "aws-price-list":
            entry["on_demand"] = {"usd": spec["on_demand_usd"], "source": "aws-price-list"}
        if spec.get("capacity_block_usd") is not None:
            entry["capacity_block"] = {"usd": spec["capacity_block_usd"], "source": spec["capacity_block_source"]}
        if not spec.get("on_demand", True):
            entry.pop("on_demand", None)
            entry["no_on_demand"] = (
                "no On-Demand SKU in the us-east-1, us-east-2 or us-west-2 price feeds: sold through "
                "Capacity Blocks only"
            )
        if not entry:
            del east[itype]
    return {
        "schema": "gpucloud.prices.snapshot/v1",
        "currency": "USD",
        "sources": {
            "vantage": {
                "as_of": vantage_date,
                "note": "instances.vantage.sh data as published in tsaol/aws-gpu data/*_instances.js (MIT): "
                "Linux, shared tenancy On-Demand and 1-year Standard RI No Upfront effective hourly rates.",
            },
            "aws-price-list": catalog["sources"]["aws-price-list"],
            "aws-capacity-blocks": catalog["sources"]["aws-capacity-blocks"],
            "aws-capacity-blocks-pre2025": catalog["sources"]["aws-capacity-blocks-pre2025"],
        },
        "commitment_basis": {
            "reserved_1y": "1-year Standard Reserved Instance, No Upfront, Linux, shared tenancy: the effective "
            "hourly rate",
            "reserved_3y": "no per-region source: estimated from the family's 3-year planning discount in the "
            "catalog (reference planning range 55-72% off), marked estimated; a refresh reads the 3-year Standard "
            "RI, No Upfront rate",
        },
        "regions": {r: dict(sorted(e.items())) for r, e in sorted(regions.items())},
    }


def render(snapshot: dict[str, Any]) -> str:
    """Readable header, then one line per region and type: a third smaller than indented JSON, so the first
    `price_plan` of a process parses it faster."""
    head = {k: v for k, v in snapshot.items() if k != "regions"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "regions": {']
    regions = list(snapshot["regions"].items())
    for r, (region, table) in enumerate(regions):
        lines.append(f"  {json.dumps(region)}: {{")
        items = list(table.items())
        for i, (itype, entry) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"   {json.dumps(itype)}: {json.dumps(entry, separators=(',', ':'))}{comma}")
        lines.append("  }" + ("," if r < len(regions) - 1 else ""))
    lines.append(" }\n}\n")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vantage", type=Path, required=True)
    parser.add_argument("--vantage-date", required=True)
    args = parser.parse_args()
    snapshot = build(args.vantage, args.vantage_date)
    write_atomic(OUT, render(snapshot))
    print(
        f"wrote {OUT}: {sum(len(v) for v in snapshot['regions'].values())} prices in {len(snapshot['regions'])} regions"
    )


if __name__ == "__main__":
    main()
