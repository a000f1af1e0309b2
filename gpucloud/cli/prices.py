"""`gpucloud prices refresh|show`: live prices into the local cache the catalog prefers; the dated rate table."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpucloud.catalog import UnknownInstanceType, get_catalog
from gpucloud.cli.errors import EXIT_OK, CliError
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
    r.add_argument("--region", default=None, help="region to price (default: the catalog's, us-east-1)")
    r.add_argument("--types", nargs="+", metavar="TYPE", help="instance types (default: every catalog type)")
    r.add_argument("--no-spot", action="store_true", help="skip the spot price history")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_refresh)
    s = actions.add_parser("show", help="show the cache location, its contents and the dated service rate table")
    s.add_argument("--format", choices=("text", "json"), default="text")
    s.set_defaults(func=run_show)


def run_refresh(args: argparse.Namespace) -> int:
    # Imported here so that other commands and --help skip boto3.
    from gpucloud.preflight import aws as aws_mod
    from gpucloud.preflight.aws import AwsAccessError
    from gpucloud.prices.refresh import refresh

    catalog = get_catalog()
    region = args.region or catalog.price_region
    types = args.types or list(catalog.instance_types)
    if cache_path() is None:
        raise CliError("the price cache is disabled (GPUCLOUD_PRICE_CACHE=off); set it to a file path to refresh")
    try:
        result = refresh(region, types, clients=aws_mod.default_clients, spot=not args.no_spot)
    except (AwsAccessError, UnknownInstanceType) as exc:
        raise CliError(str(exc)) from None
    get_catalog.cache_clear()
    get_price_book.cache_clear()
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK

    def body(console: Any, table: Any) -> None:
        t = table(f"Prices refreshed for {result['region']} at {result['refreshed_at']}")
        for col in ("instance type", "On-Demand $/h", "spot $/h (median of AZs)"):
            t.add_column(col)
        for p in result["prices"]:
            od, spot = p["on_demand_usd"], p["spot_usd"]
            t.add_row(p["instance_type"], f"{od:,.4f}" if od else "-", f"{spot:,.4f}" if spot else "-")
        console.print(t)
        console.print(f"cache: {result['cache_file'] or 'not written (no prices returned)'}")

    print(console_text(body), end="")
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    from gpucloud.cost import rates

    path = cache_path()
    cache = load_cache(path) if path else None
    service_rates = rates.table()
    result = {"cache_file": str(path) if path else None, "cache": cache, "service_rates": service_rates}
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return EXIT_OK

    def body(console: Any, table: Any) -> None:
        refreshed = cache.get("refreshed_at") if cache else None
        console.print(f"price cache: {path or 'disabled'}" + (f" (refreshed {refreshed})" if refreshed else " (none)"))
        t = table("Service rates (us-east-1 list prices)")
        for col in ("item", "USD", "unit", "as of", "source"):
            t.add_column(col)
        for row in service_rates:
            t.add_row(str(row["item"]), f"{row['usd']:g}", str(row["unit"]), str(row["as_of"]), str(row["source"]))
        console.print(t)

    print(console_text(body), end="")
    return EXIT_OK
