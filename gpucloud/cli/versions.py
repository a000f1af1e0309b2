"""`gpucloud versions show|refresh`: the per-minor versions table (add-on builds, AMI releases, charts, support)."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_OK, CliError
from gpucloud.cli.io import write_output


def register(sub: Any) -> None:
    p = sub.add_parser(
        "versions",
        help="show or refresh the Kubernetes versions table",
        description="The versions every minor runs: EKS add-on builds, AMI releases, chart versions, support dates "
        "(gpucloud/versions/eks.json). See docs/upgrades.md.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    s = actions.add_parser("show", help="print the table and each minor's support tier on a date")
    s.add_argument("--as-of", default=None, metavar="DATE", help="the date for the support tier (default: today)")
    s.add_argument("--format", choices=("text", "json"), default="text")
    s.set_defaults(func=run_show)
    r = actions.add_parser(
        "refresh",
        help="rebuild the add-on builds from EKS DescribeAddonVersions",
        description="Call EKS DescribeAddonVersions for every minor and add-on of the table (credentials from the "
        "standard boto3 chain) and write the table back atomically, each add-on's `compatible` list complete.",
    )
    r.add_argument("--region", default="us-east-1", help="the region whose EKS answers (default: us-east-1)")
    r.add_argument("--minor", nargs="+", default=None, metavar="MINOR", help="only these minors (default: all)")
    r.add_argument("--out", default=None, metavar="FILE", help="write here (default: the table that was read)")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_refresh)


def run_show(args: argparse.Namespace) -> int:
    from gpucloud import versions

    try:
        day = date.fromisoformat(args.as_of) if args.as_of else date.today()
    except ValueError:
        raise CliError(f"--as-of {args.as_of!r} is not a date; use YYYY-MM-DD") from None
    try:
        rows = [versions.for_minor(m) for m in versions.minors()]
    except versions.VersionsError as exc:
        raise CliError(str(exc)) from None
    out: list[dict[str, Any]] = [
        {
            "minor": r.minor,
            "support": r.support_on(day),
            "end_of_standard_support": r.end_of_standard_support,
            "end_of_extended_support": r.end_of_extended_support,
            "addons": {k: v.version for k, v in r.addons.items()},
            "ami": {k: v.version for k, v in r.ami.items()},
            "charts": {k: v.version + (f" (image {v.image_tag})" if v.image_tag else "") for k, v in r.charts.items()},
        }
        for r in rows
    ]
    if args.format == "json":
        write_output(json.dumps({"as_of": day.isoformat(), "file": str(versions.snapshot_path()), "minors": out},
                                indent=2) + "\n", None)  # fmt: skip
        return EXIT_OK
    lines = [f"Kubernetes versions ({versions.snapshot_path()}), support as of {day.isoformat()}:"]
    for row in out:
        lines.append(
            f"  {row['minor']}  {row['support']:<11} standard until {row['end_of_standard_support'] or '?'}, "
            f"extended until {row['end_of_extended_support'] or '?'}"
        )
        lines.append("        add-ons: " + ", ".join(f"{k} {v or '(unpinned)'}" for k, v in row["addons"].items()))
        lines.append("        AMI: " + ", ".join(f"{k} {v}" for k, v in row["ami"].items()))
        lines.append("        charts: " + ", ".join(f"{k} {v}" for k, v in row["charts"].items()))
    write_output("\n".join(lines) + "\n", None)
    return EXIT_OK


def run_refresh(args: argparse.Namespace) -> int:
    from gpucloud import aws as aws_mod
    from gpucloud import versions
    from gpucloud.aws import AwsAccessError, aws_errors, check_region
    from gpucloud.versions.refresh import refresh

    source = versions.snapshot_path()
    target = Path(args.out) if args.out else source
    try:
        region = check_region(args.region)
        with aws_errors("versions refresh"):
            result = refresh(source, target, clients=aws_mod.default_clients, region=region, minors=args.minor)
    except (AwsAccessError, versions.VersionsError) as exc:
        raise CliError(str(exc)) from None
    versions._load.cache_clear()
    versions._read.cache_clear()
    if args.format == "json":
        write_output(json.dumps(result, indent=2) + "\n", None)
        return EXIT_OK
    changed = result["changed"]
    lines = [f"Refreshed {result['file']} from EKS in {result['region']} ({result['refreshed']})."]
    if not changed:
        lines.append("  No default build changed.")
    for minor, addons in sorted(changed.items()):
        lines.append(f"  {minor}: " + ", ".join(f"{a} -> {v or '(none)'}" for a, v in sorted(addons.items())))
    write_output("\n".join(lines) + "\n", None)
    return EXIT_OK
