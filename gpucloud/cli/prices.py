"""`gpucloud prices refresh|show`: live prices into the local cache the catalog prefers; the dated rate table."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpucloud.catalog import UnknownInstanceType, get_catalog, validate_instance_type
from gpucloud.cli.errors import EXIT_AWS_UNAVAILABLE, EXIT_OK, CliError
from gpucloud.cli.recommend import console_text
from gpucloud.prices.book import get_price_book
from gpucloud.prices.cache import cache_path, load_cache


def register(sub: Any) -> None:
    p = sub.add_parser("prices", help="refresh or show prices", description="Refresh or show the prices gpucloud uses.")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    r = actions.add_parser(
        "refresh",
        help="refresh On-Demand (Price List API) and spot (spot price history) prices into the local cache",
        description="Query the AWS Price List API (Linux, shared tenancy, no pre-installed software, used capacity, "
        "OnDemand market option) and the last day of spot price history, and merge them into the local price cache "
        "that the catalog prefers over its shipped prices. Credentials come from the standard boto3 chain.",
    )
    r.add_argument("--region", nargs="+", default=None, metavar="REGION", help="regions to price (default: us-east-1)")
    r.add_argument(
        "--spot-days",
        type=spot_days_arg,
        default=1.0,
        metavar="DAYS",
        help="spot history window for the statistics (more than 0, at most 90)",
    )
    r.add_argument("--types", nargs="+", metavar="TYPE", help="instance types (default: every catalog type)")
    r.add_argument("--no-spot", action="store_true", help="skip the spot price history")
    r.add_argument(
        "--no-services",
        action="store_true",
        help="skip the region's service rates (NAT, EBS, FSx for Lustre, interface endpoints, CPU types)",
    )
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_refresh)
    o = actions.add_parser(
        "offerings",
        help="record which instance types each region offers (EC2 DescribeInstanceTypeOfferings) in the local cache",
        description="Ask EC2 DescribeInstanceTypeOfferings (LocationType region, then availability-zone) which of "
        "the types each region offers, and record the AZs (an empty list: not offered), dated, in the local price "
        "cache. The offering conformance check and the cost engine read it before the shipped price snapshot.",
    )
    o.add_argument("--region", nargs="+", default=None, metavar="REGION", help="regions (default: us-east-1)")
    o.add_argument("--types", nargs="+", metavar="TYPE", help="instance types (default: every catalog type)")
    o.add_argument("--format", choices=("text", "json"), default="text")
    o.set_defaults(func=run_offerings)
    s = actions.add_parser("show", help="show the cache location, its contents and the dated service rate table")
    s.add_argument("--format", choices=("text", "json"), default="text")
    s.add_argument("--region", default=None, help="also show every market's rate for --types in this region")
    s.add_argument("--types", nargs="+", metavar="TYPE", default=(), help="instance types for --region")
    s.set_defaults(func=run_show)


def spot_days_arg(value: str) -> float:
    """argparse type of --spot-days: the window DescribeSpotPriceHistory can answer (more than 0, at most 90)."""
    from gpucloud.prices.refresh import MAX_SPOT_DAYS

    try:
        days = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days; give e.g. --spot-days 7") from None
    if not 0 < days <= MAX_SPOT_DAYS:
        raise argparse.ArgumentTypeError(
            f"{value} days is outside what spot price history answers; give more than 0 and at most {MAX_SPOT_DAYS}"
        )
    return days


def run_refresh(args: argparse.Namespace) -> int:
    # Imported here so that other commands and --help skip boto3.
    from gpucloud import aws as aws_mod
    from gpucloud.aws import AwsAccessError, AwsUnavailableError
    from gpucloud.prices import rates
    from gpucloud.prices.refresh import PriceDataError, refresh

    catalog = get_catalog()
    regions = args.region or [catalog.price_region]
    types = args.types or list(catalog.instance_types)
    if cache_path() is None:
        raise CliError("the price cache is disabled (GPUCLOUD_PRICE_CACHE=off); set it to a file path to refresh")
    # Every region and type checked before the first call, so a typo in the last one writes nothing.
    _check_regions(regions)
    _check_types(types)
    results = []
    for region in regions:
        try:
            results.append(
                refresh(
                    region,
                    types,
                    clients=aws_mod.default_clients,
                    spot=not args.no_spot,
                    spot_days=args.spot_days,
                    services=not args.no_services,
                    cpu_types=rates.CPU_TYPES,
                )
            )
        except (AwsAccessError, UnknownInstanceType) as exc:
            raise CliError(str(exc)) from None
        except (AwsUnavailableError, PriceDataError) as exc:
            raise CliError(str(exc), EXIT_AWS_UNAVAILABLE) from None
    get_catalog.cache_clear()
    get_price_book.cache_clear()
    if args.format == "json":
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
        return EXIT_OK

    def money(value: Any) -> str:
        return f"{value:,.4f}" if value else "-"

    def body(console: Any, table: Any) -> None:
        for result in results:
            t = table(f"Prices refreshed for {result['region']} at {result['refreshed_at']}")
            for col in ("type", "On-Demand", "RI 1y", "spot median", "CB", "AZs"):
                t.add_column(col)
            for p in result["prices"]:
                zones = p["availability_zones"]
                t.add_row(
                    p["instance_type"],
                    money(p["on_demand_usd"]),
                    money(p["reserved_1y_usd"]),
                    money(p["spot_usd"]),
                    money(p["capacity_block_usd"]),
                    "-" if zones is None else str(len(zones)),
                )
            console.print(t)
            if result["service_rates"]:
                console.print(f"service rates: {len(result['service_rates'])} items for {result['region']}")
            console.print(f"cache: {result['cache_file'] or 'not written (no prices returned)'}")
        console.print("$/h; RI 1y: Standard Reserved Instance, No Upfront; CB: one-day Capacity Block")

    print(console_text(body), end="")
    return EXIT_OK


def run_offerings(args: argparse.Namespace) -> int:
    from gpucloud import aws as aws_mod
    from gpucloud.aws import AwsAccessError, AwsUnavailableError, aws_errors
    from gpucloud.prices.offerings import refresh_offerings

    catalog = get_catalog()
    regions = args.region or [catalog.price_region]
    types = args.types or list(catalog.instance_types)
    if cache_path() is None:
        raise CliError("the price cache is disabled (GPUCLOUD_PRICE_CACHE=off); set it to a file path to refresh")
    _check_regions(regions)
    _check_types(types)
    results = []
    for region in regions:
        try:
            with aws_errors("instance type offerings", every_api_error=True):
                results.append(refresh_offerings(region, types, aws_mod.default_clients("ec2", region)))
        except AwsAccessError as exc:
            raise CliError(str(exc)) from None
        except AwsUnavailableError as exc:
            raise CliError(str(exc), EXIT_AWS_UNAVAILABLE) from None
    get_price_book.cache_clear()
    if args.format == "json":
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
        return EXIT_OK
    for result in results:
        print(
            f"{result['region']} ({result['refreshed_at']}): {len(result['offered'])} offered, "
            f"not offered: {', '.join(result['not_offered']) or 'none'}; cache: {result['cache_file'] or 'not written'}"
        )
    return EXIT_OK


def _check_regions(regions: list[str]) -> None:
    from gpucloud.aws import AwsAccessError, check_region

    for region in regions:
        try:
            check_region(region)
        except AwsAccessError as exc:
            raise CliError(f"--region: {exc}") from None


def _check_types(types: list[str]) -> None:
    for itype in types:
        try:
            validate_instance_type(itype)
        except UnknownInstanceType as exc:
            raise CliError(f"--types: {exc}") from None


def run_show(args: argparse.Namespace) -> int:
    from gpucloud.prices import rates

    if args.region:
        _check_regions([args.region])
    if args.types and not args.region:
        raise CliError("--types needs --region: the rates shown are one region's, e.g. --region us-east-1")
    path = cache_path()
    cache = load_cache(path) if path else None
    service_rates = rates.table(args.region or rates.RATES_REGION)
    book = get_price_book()
    result: dict[str, Any] = {
        "cache_file": str(path) if path else None,
        "cache": cache,
        "snapshot": {"sources": book.sources, "commitment_basis": book.commitment_basis, "regions": book.regions},
        "service_rates": service_rates,
    }
    if args.region:
        _check_types(list(args.types))
        result["rates"] = [book.rates(t, args.region).to_json() for t in args.types]
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK

    def body(console: Any, table: Any) -> None:
        refreshed = cache.get("refreshed_at") if cache else None
        console.print(f"price cache: {path or 'disabled'}" + (f" (refreshed {refreshed})" if refreshed else " (none)"))
        dated = ", ".join(f"{k} {v.get('as_of') or 'undated'}" for k, v in book.sources.items())
        console.print(f"price snapshot: {len(book.regions)} regions; sources: {dated}")
        for row in result.get("rates", []):
            figures = ", ".join(
                f"{m} {row[m]['usd']:g}" + (" (est.)" if row[m]["estimated"] else "")
                for m in ("on_demand", "spot", "capacity_block", "reserved_1y", "reserved_3y")
                if row[m]
            )
            console.print(f"{row['instance_type']} in {row['region']}: {figures or 'unpriced'}")
            for market, reason in row["unpriced"].items():
                console.print(f"  {market}: {reason}")
        t = table(f"Service rates ({args.region or rates.RATES_REGION} list prices)")
        for col in ("item", "USD", "unit", "as of", "source"):
            t.add_column(col)
        for row in service_rates:
            t.add_row(str(row["item"]), f"{row['usd']:g}", str(row["unit"]), str(row["as_of"]), str(row["source"]))
        console.print(t)

    print(console_text(body), end="")
    return EXIT_OK
