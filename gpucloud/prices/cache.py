"""The local price cache that `gpucloud prices refresh` writes; gpucloud.prices.book lays it over the snapshot.

Location: ``$GPUCLOUD_PRICE_CACHE`` when set (``off`` or an empty value disables the cache), else
``$XDG_CACHE_HOME/gpucloud/prices.json`` (``~/.cache/gpucloud/prices.json``). Stdlib only. Entries may also
carry ``spot_stats``, ``capacity_block_usd``, ``reserved_1y_usd``, ``reserved_3y_usd`` and ``availability_zones``.
Region-varying service rates (NAT, EBS, FSx, endpoints, CPU types; keys of gpucloud.prices.rates) live beside the
instance entries under ``service_rates``: ``{"us-east-1": {"ebs:gp3": {"usd": 0.08, "price_date": "2026-08-02",
"price_source": "aws-price-list-api"}}}``.

File shape::

    {"schema": "gpucloud.prices/v1", "refreshed_at": "2026-08-02T09:30:00+00:00",
     "regions": {"us-east-1": {"p5.48xlarge": {"on_demand_usd": 55.04, "spot_usd": 24.1,
                                               "price_date": "2026-08-02", "price_source": "aws-price-list-api"}}}}
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from gpucloud.fileio import write_atomic

SCHEMA: Final = "gpucloud.prices/v1"
ENV_VAR: Final = "GPUCLOUD_PRICE_CACHE"
_DISABLED: Final = frozenset({"", "off", "none", "0", "false"})
_ENTRY_KEYS: Final = frozenset(
    {
        "on_demand_usd",
        "spot_usd",
        "spot_stats",
        "capacity_block_usd",
        "reserved_1y_usd",
        "reserved_3y_usd",
        "availability_zones",
        "price_date",
        "price_source",
    }
)
_PRICE_KEYS: Final = ("on_demand_usd", "spot_usd", "capacity_block_usd", "reserved_1y_usd", "reserved_3y_usd")

# What a corrupt or foreign cache file means for the run and how to repair it.
_FIX: Final = "the shipped catalog prices are used. Fix: run `gpucloud prices refresh` to rewrite it, or delete it"

_memo: dict[tuple[str, float, int], dict[str, Any] | None] = {}


def cache_path() -> Path | None:
    """Where the cache lives, or None when disabled through the environment."""
    # Read twice for every plan (the pricer's rates for the region); a function of these three variables alone.
    key = (os.environ.get(ENV_VAR), os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
    found = _PATHS.get(key, _UNSET)
    if found is _UNSET:
        found = _PATHS[key] = _cache_path()
    return found  # type: ignore[return-value]


_UNSET: Final = object()
_PATHS: dict[tuple[str | None, str | None, str | None], Path | object | None] = {}


def _cache_path() -> Path | None:
    value = os.environ.get(ENV_VAR)
    if value is not None:
        return None if value.strip().lower() in _DISABLED else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpucloud" / "prices.json"


def load_cache(path: Path | None = None) -> dict[str, Any] | None:
    """The cache file's content, or None when it is absent, disabled or unreadable (with a warning)."""
    path = path if path is not None else cache_path()
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime, stat.st_size)
    if key in _memo:
        return _memo[key]
    data: dict[str, Any] | None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: JSONDecodeError and UnicodeDecodeError (binary garbage)
        warnings.warn(f"ignoring price cache {path}: not readable JSON ({exc}); {_FIX}", stacklevel=2)
        raw = None
    if isinstance(raw, dict) and raw.get("schema") == SCHEMA and isinstance(raw.get("regions"), dict):
        data = raw
    else:
        if raw is not None:
            warnings.warn(f"ignoring price cache {path}: schema: expected {SCHEMA!r}; {_FIX}", stacklevel=2)
        data = None
    _memo[key] = data
    return data


def region_prices(region: str, path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per-type cache entries for one region (only well-formed entries)."""
    data = load_cache(path)
    if data is None:
        return {}
    entries = data["regions"].get(region)
    if not isinstance(entries, Mapping):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for itype, entry in entries.items():
        if not isinstance(entry, Mapping) or set(entry) - _ENTRY_KEYS or not isinstance(entry.get("price_date"), str):
            continue
        clean = {k: v for k, v in entry.items() if v is not None}
        if any(k in clean for k in _PRICE_KEYS) or "availability_zones" in clean:
            out[str(itype)] = clean
    return out


def region_service_rates(region: str, path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Refreshed service rates for one region (only entries with a positive ``usd`` and a ``price_date``)."""
    data = load_cache(path)
    table = (data or {}).get("service_rates")
    entries = table.get(region) if isinstance(table, Mapping) else None
    if not isinstance(entries, Mapping):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for item, entry in entries.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("price_date"), str):
            continue
        usd = entry.get("usd")
        if isinstance(usd, int | float) and not isinstance(usd, bool) and usd > 0:
            out[str(item)] = dict(entry)
    return out


def write_cache(
    region: str,
    entries: Mapping[str, Mapping[str, Any]],
    refreshed_at: str,
    path: Path | None = None,
    service_rates: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Merge `entries` (per instance type) and `service_rates` (per item) for `region` into the cache file; other
    regions, types and items are kept."""
    target = path if path is not None else cache_path()
    if target is None:
        raise ValueError(f"the price cache is disabled ({ENV_VAR}={os.environ.get(ENV_VAR)!r})")
    current = load_cache(target) or {"schema": SCHEMA, "regions": {}}
    services: dict[str, Any] = dict(current.get("service_rates") or {})
    if service_rates:
        table = dict(services.get(region) or {})
        table.update({k: dict(v) for k, v in service_rates.items()})
        services[region] = dict(sorted(table.items()))
    regions: dict[str, Any] = dict(current["regions"])
    merged = dict(regions.get(region) or {})
    for itype, entry in entries.items():
        previous = dict(merged.get(itype) or {})
        previous.update({k: v for k, v in entry.items() if v is not None})
        merged[itype] = previous
    regions[region] = dict(sorted(merged.items()))
    doc: dict[str, Any] = {"schema": SCHEMA, "refreshed_at": refreshed_at, "regions": regions}
    if services:
        doc["service_rates"] = services
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, json.dumps(doc, indent=2, sort_keys=False) + "\n")
    return target
