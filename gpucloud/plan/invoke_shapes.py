"""Generic offline answers for any data source a provider SDK defines, built from its result type.

pulumi_aws defines some 340 data sources (`get_*` functions). Each calls `pulumi.runtime.invoke(token, args,
typ=<Result class>)`, and the result class lists every property with its wire name and Python type. A data
source without a specific answer in gpucloud.plan.offline gets one built from that class: every property
present, strings that echo the query argument of the same name (a `route53.get_zone(name=...)` lookup answers a
zone with that name) or are shaped by their name (IDs, ARNs, the region, the account), booleans and numbers from
the query or zero, lists of one element of the documented item type, nested objects built the same way. The
values are placeholders, and the plan says so in its warnings; they exist so that a valid program runs to the
end the way it does against a real account.

Also: the availability zones per Region, from a shipped and sourced table (availability_zones.json).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_PACKAGES = {"aws": "pulumi_aws", "kubernetes": "pulumi_kubernetes"}
_AZ_TABLE = Path(__file__).with_name("availability_zones.json")
_DEFAULT_ZONES = 3
_MAX_DEPTH = 4

# The ID formats of the resources data sources most often look up: EC2 `<prefix>-<17 hex>`
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html), Route 53 hosted zones `Z...`.
_ID_PREFIXES = {
    "vpcId": "vpc",
    "subnetId": "subnet",
    "securityGroupId": "sg",
    "imageId": "ami",
    "amiId": "ami",
    "instanceId": "i",
    "routeTableId": "rtb",
    "internetGatewayId": "igw",
    "natGatewayId": "nat",
    "networkInterfaceId": "eni",
    "volumeId": "vol",
    "snapshotId": "snap",
    "prefixListId": "pl",
    "transitGatewayId": "tgw",
    "vpcEndpointId": "vpce",
    "launchTemplateId": "lt",
    "keyPairId": "key",
    "dhcpOptionsId": "dopt",
    "networkAclId": "acl",
    "allocationId": "eipalloc",
    "capacityReservationId": "cr",
    "placementGroupId": "pg",
}
_GLOBAL_SERVICES = {"iam", "route53", "cloudfront", "s3", "organizations", "waf", "globalaccelerator"}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def result_type(token: str) -> type | None:
    """The result class of the SDK data source `token` (`aws:route53/getZone:getZone`), or None."""
    return _sdk_function(token)[0]


def query_arguments(token: str) -> frozenset[str]:
    """The wire names of the arguments data source `token` takes (`__args__['name'] = name` in its SDK)."""
    return _sdk_function(token)[1]


@functools.cache
def _sdk_function(token: str) -> tuple[type | None, frozenset[str]]:
    parts = token.split(":")
    if len(parts) != 3 or parts[0] not in _PACKAGES:
        return None, frozenset()
    package, (module, _, function) = _PACKAGES[parts[0]], parts[1].partition("/")
    where = package if module in ("index", "") else f"{package}.{module.replace('/', '.')}"
    mod = None
    # A module named after a Python keyword gets a trailing underscore (pulumi_aws.lambda_).
    for candidate in (f"{where}.{_snake(function)}", f"{where}_.{_snake(function)}"):
        try:
            mod = importlib.import_module(candidate)
            break
        except ImportError:
            continue
    if mod is None:
        return None, frozenset()
    source = _read(Path(str(getattr(mod, "__file__", ""))))
    found = re.search(rf"invoke\('{re.escape(token)}', __args__, opts=opts, typ=(\w+)\)", source)
    cls = getattr(mod, found.group(1), None) if found else None
    arguments = frozenset(re.findall(r"__args__\['(\w+)'\] = ", source))
    return (cls if isinstance(cls, type) else None), arguments


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def sdk_tokens(package: str = "pulumi_aws") -> list[str]:
    """Every data source token a provider SDK's source invokes (what the generic answer must cover)."""
    root = Path(importlib.import_module(package).__file__ or "").parent
    tokens: set[str] = set()
    for path in root.rglob("get_*.py"):
        tokens.update(re.findall(r"invoke\('([^']+)', __args__, opts=opts, typ=\w+\)", _read(path)))
    return sorted(tokens)


def generic_answer(token: str, args: Mapping[str, Any], region: str) -> dict[str, Any] | None:
    """A plausible result for data source `token` called with `args` (wire names), or None when the SDK has no
    result type for it."""
    cls = result_type(token)
    if cls is None:
        return None
    service = token.split(":")[1].split("/")[0]
    context = _Context(token, service, region, args)
    out = _object(cls, args, context, 0)
    # A list-valued query argument the program left out comes back as it went in: null (the provider echoes
    # its arguments).
    for key in query_arguments(token):
        if key in out and key not in args and isinstance(out[key], list):
            out[key] = None
    return out


class _Context:
    def __init__(self, token: str, service: str, region: str, args: Mapping[str, Any]) -> None:
        self.token = token
        self.service = service
        self.region = region
        self.args = args
        self.seed = json.dumps([token, args], sort_keys=True, default=str)
        # What the data source looks up, from its name (getVpcs: a VPC), for the IDs it returns.
        looked_up = re.sub(r"s$", "", token.rsplit(":", 1)[-1].removeprefix("get"))
        self.id_key = looked_up[:1].lower() + looked_up[1:] + "Id"

    def hexid(self, *parts: str, length: int = 17) -> str:
        return hashlib.sha256("/".join((self.seed, *parts)).encode()).hexdigest()[:length]


def _fields(cls: type) -> dict[str, Any]:
    from pulumi import _types

    try:
        return dict(_types.output_type_types(cls))
    except (AssertionError, NameError, TypeError):
        return {}


def _object(cls: type, args: Mapping[str, Any], ctx: _Context, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, typ in _fields(cls).items():
        out[key] = _value(key, typ, args, ctx, depth)
    return out


def _value(key: str, typ: Any, args: Mapping[str, Any], ctx: _Context, depth: int) -> Any:
    from pulumi import _types

    given = args.get(key)
    origin = typing.get_origin(typ)
    if origin in (list, tuple) or origin is typing.Sequence or _is_abc(origin, "Sequence"):
        if isinstance(given, list):
            return given
        (item,) = typing.get_args(typ)[:1] or (str,)
        singular = key[:-1] if key.endswith("s") else key
        return [] if depth >= _MAX_DEPTH else [_value(singular, item, {}, ctx, depth + 1)]
    if origin in (dict,) or origin is typing.Mapping or _is_abc(origin, "Mapping"):
        return given if isinstance(given, dict) else {}
    if isinstance(typ, type) and _types.is_output_type(typ):
        if depth >= _MAX_DEPTH:
            return {}
        return _object(typ, given if isinstance(given, dict) else {}, ctx, depth + 1)
    if typ is bool:
        return given if isinstance(given, bool) else False
    if typ in (int, float):
        return float(given) if isinstance(given, int | float) and not isinstance(given, bool) else 0.0
    if typ is str:
        return given if isinstance(given, str) and given else _string(key, args, ctx)
    return given


def _is_abc(origin: Any, name: str) -> bool:
    import collections.abc

    return origin is getattr(collections.abc, name, None)


def _string(key: str, args: Mapping[str, Any], ctx: _Context) -> str:
    """A string shaped by its property name: what the real data source would return, as near as the name says."""
    from gpucloud.plan.regions import OFFLINE_ACCOUNT_ID, partition_of

    lower = key.lower()
    name = next((str(args[k]) for k in ("name", "id") if isinstance(args.get(k), str) and args.get(k)), "")
    if key == "id":
        if name:
            return name
        if ctx.id_key in _ID_PREFIXES:
            return f"{_ID_PREFIXES[ctx.id_key]}-{ctx.hexid('id')}"
        return f"{ctx.service}-{ctx.hexid('id', length=12)}"
    if key in ("region", "regionName"):
        return str(args.get("region") or ctx.region)
    if key in ("accountId", "ownerId", "account"):
        return OFFLINE_ACCOUNT_ID
    if key == "partition":
        return partition_of(ctx.region)[0]
    if key in ("zoneId", "hostedZoneId"):
        return "Z" + ctx.hexid(key, length=13).upper()
    if key in _ID_PREFIXES:
        return f"{_ID_PREFIXES[key]}-{ctx.hexid(key)}"
    if lower == "arn" or lower.endswith("arn"):
        partition = partition_of(ctx.region)[0]
        where = "" if ctx.service in _GLOBAL_SERVICES else ctx.region
        resource = name or f"offline-{ctx.hexid(key, length=8)}"
        return f"arn:{partition}:{ctx.service}:{where}:{OFFLINE_ACCOUNT_ID}:{resource}"
    if key == "name" or key.endswith("Name"):
        return name or f"offline-{_snake(key).replace('_', '-')}"
    return f"offline-{_snake(key).replace('_', '-')}"


@functools.lru_cache(maxsize=1)
def _az_table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_AZ_TABLE.read_text())
    return data


def availability_zones(region: str) -> list[tuple[str, str]]:
    """(zone name, AZ ID) of every Availability Zone of `region`, from the shipped table."""
    from gpucloud.plan.regions import zone_id_prefix

    table = _az_table()
    ids: list[str] = table["regions"].get(region) or [
        f"{zone_id_prefix(region)}-az{i + 1}" for i in range(_DEFAULT_ZONES)
    ]
    if region in table["independently_mapped"]:
        return [(f"{region}{chr(ord('a') + i)}", zone_id) for i, zone_id in enumerate(ids)]
    return [(f"{region}{chr(ord('a') + int(zone_id.rsplit('az', 1)[1]) - 1)}", zone_id) for zone_id in ids]


def known_region(region: str) -> bool:
    return region in _az_table()["regions"]
