"""GPU / accelerator instance catalog: the single source of truth for GPU facts (specs, markets, discounts).

Figures come from ``instances.json`` next to this module (see its ``sources`` block for where each came from).
Instance type names are checked against botocore's EC2 service model, which ships with botocore and needs no
network. This module is a leaf: stdlib and botocore only, never pulumi, so policies and the CLI can import it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import gzip
import json
import math
import os
import re
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources
from typing import Any, Final, TypeVar, get_args, get_type_hints

__all__ = [
    "SCHEMA",
    "Catalog",
    "FamilyPricing",
    "InstanceSpec",
    "NotInCatalog",
    "UnknownInstanceType",
    "ec2_instance_types",
    "ec2_regions",
    "family_of",
    "get_catalog",
    "is_gpu_instance_type",
    "is_valid_ec2_instance_type",
    "validate_instance_type",
]

SCHEMA: Final = "gpucloud.catalog/v1"

_DATA_FILE: Final = "instances.json"
# The partitions gpucloud deploys to; the ISO partitions are out of scope and would only widen typo acceptance.
_PARTITIONS: Final = ("aws", "aws-cn", "aws-us-gov")
# Accelerated families (P, G incl. gr6, Trainium, Inferentia, DL) as a fallback for types the catalog lacks.
_ACCELERATED_FAMILY: Final = re.compile(r"^(?:p|g|gr|trn|inf|dl)\d")
_PRICE_OVERRIDE_KEYS: Final = frozenset({"on_demand_usd", "spot_usd", "price_date", "price_source"})


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceSpec:
    """One instance type. Compute figures are per accelerator and dense; prices are us-east-1 Linux $/h.

    ``memory_bandwidth_gbps`` is GB/s (bytes) per accelerator. ``network_gbps`` is the headline figure; with
    ``network_burst`` it is an "up to" peak, not a sustained baseline. ``local_nvme_gb`` 0 with disks > 0 means
    the size is unknown (see ``notes``).
    """

    instance_type: str
    family: str
    accelerator: str
    manufacturer: str
    accelerator_kind: str
    accelerator_count: int
    accelerator_memory_gib: float
    memory_bandwidth_gbps: float | None
    vcpu: int
    memory_gib: float
    network_gbps: float
    efa_interfaces: int
    network_cards: int
    efa_generation: int | None
    efa_only_supported: bool
    local_nvme_gb: int
    local_nvme_disks: int
    interconnect: str
    bf16_tflops: float | None
    fp16_tflops: float | None
    int8_tops: float | None
    fp64_tflops: float | None
    on_demand_usd: float | None
    capacity_block_usd: float | None
    price_date: str | None
    price_source: str | None
    on_demand: bool
    spot: bool
    capacity_block: bool
    deprecated: bool
    notes: str
    network_burst: bool = False
    fp64_tensor_tflops: float | None = None
    capacity_block_price_date: str | None = None
    capacity_block_source: str | None = None
    spec_source: str = "reference"
    # Only price overrides (a refreshed price cache) set these; the shipped catalog holds no spot prices
    # because they move constantly.
    spot_usd: float | None = None
    spot_price_date: str | None = None
    # The accelerator and CPU maker as EC2's DescribeInstanceTypes names them (GpuInfo / NeuronInfo name,
    # ProcessorInfo manufacturer), lower kebab case as Karpenter labels nodes with them: "a100" for both A100
    # sizes, "trainium2". ``accelerator`` stays the catalog's own, more precise name ("A100-40GB").
    ec2_accelerator_name: str | None = None
    cpu_manufacturer: str | None = None

    @property
    def efa_supported(self) -> bool:
        return self.efa_interfaces > 0

    @property
    def has_instance_store(self) -> bool:
        return self.local_nvme_disks > 0 or self.local_nvme_gb > 0

    @property
    def total_accelerator_memory_gib(self) -> float:
        return self.accelerator_count * self.accelerator_memory_gib

    @property
    def is_gpu(self) -> bool:
        return self.accelerator_kind == "gpu"


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyPricing:
    """Planning discounts for one family, as fractions off On-Demand (0.55 = 55% off).

    ``spot_interruption_bucket`` uses the Spot Instance Advisor scale: 0 <5%, 1 5-10%, 2 10-15%, 3 15-20%,
    4 >20% interruptions per month.
    """

    family: str
    spot_discount_low: float
    spot_discount_high: float
    spot_discount: float
    spot_interruption_bucket: int
    reserved_1y_low: float
    reserved_1y_high: float
    reserved_1y: float
    reserved_3y_low: float
    reserved_3y_high: float
    reserved_3y: float
    notes: str


class UnknownInstanceType(ValueError):
    """The name is not an EC2 instance type at all (per botocore's EC2 model)."""

    def __init__(self, instance_type: str, suggestions: Sequence[str] = ()) -> None:
        self.instance_type = instance_type
        self.suggestions: list[str] = list(suggestions)
        super().__init__(_unknown_message(instance_type, self.suggestions))

    def __reduce__(self) -> tuple[type[UnknownInstanceType], tuple[str, list[str]]]:
        return (type(self), (self.instance_type, self.suggestions))


class NotInCatalog(KeyError):
    """The name is a valid EC2 instance type (or family) that the catalog holds no figures for."""

    def __init__(self, instance_type: str, reason: str | None = None) -> None:
        self.instance_type = instance_type
        self.reason = reason
        detail = reason or (
            "a valid EC2 instance type the catalog holds no figures for; "
            "add it to gpucloud/catalog/instances.json with its sources"
        )
        self.message = f"{instance_type!r} is not in the gpucloud catalog: {detail}"
        super().__init__(self.message)

    def __str__(self) -> str:
        # KeyError's default str() repr-quotes the message.
        return self.message

    def __reduce__(self) -> tuple[type[NotInCatalog], tuple[str, str | None]]:
        return (type(self), (self.instance_type, self.reason))


def _unknown_message(instance_type: str, suggestions: Sequence[str]) -> str:
    message = f"unknown instance type {instance_type!r}"
    if not suggestions:
        return message
    quoted = [repr(s) for s in suggestions]
    options = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"{message} (did you mean {options}?)"


# The InstanceType shape in the EC2 model as botocore ships it (minified JSON). When a future botocore writes it
# differently the pattern misses and ec2_instance_types parses the whole model instead: slower, same answer.
_INSTANCE_TYPE_ENUM: Final = re.compile(
    r'"InstanceType"\s*:\s*\{\s*"type"\s*:\s*"string"\s*,\s*"enum"\s*:\s*(\[[^\]]*\])'
)


def _botocore_service_model_text(service: str) -> str:
    """The newest API version of a service model bundled with botocore, as text (the file botocore loads)."""
    root = resources.files("botocore") / "data" / service
    versions = sorted((d for d in root.iterdir() if d.is_dir()), key=lambda d: d.name)
    for version in reversed(versions):
        for name in ("service-2.json", "service-2.json.gz"):
            model = version / name
            if model.is_file():
                data = model.read_bytes()
                return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")
    raise FileNotFoundError(f"botocore ships no service model for {service!r}")


@functools.cache
def ec2_instance_types() -> frozenset[str]:
    """Every instance type name in botocore's EC2 model (offline).

    Read from the model file botocore bundles rather than through a botocore session: importing botocore.session
    and loading the model through it cost about 0.3 s of every plan whose system node group uses a type the
    GPU catalog does not hold; finding the one enum in the decompressed file takes about 40 ms.
    """
    text = _botocore_service_model_text("ec2")
    match = _INSTANCE_TYPE_ENUM.search(text)
    names = json.loads(match.group(1)) if match else json.loads(text)["shapes"]["InstanceType"]["enum"]
    return frozenset(str(name) for name in names)


def is_valid_ec2_instance_type(name: str) -> bool:
    return isinstance(name, str) and name in ec2_instance_types()


def _suggest(name: str, extra: Iterable[str] = ()) -> list[str]:
    candidates = ec2_instance_types() | frozenset(extra)
    # EC2 names are lower-case: `G6E.XLARGE` or ` g6e.xlarge` means g6e.xlarge, so match on the folded name.
    folded = name.strip().lower()
    if folded in candidates:
        return [folded]
    return difflib.get_close_matches(folded, sorted(candidates), n=3, cutoff=0.6)


def validate_instance_type(name: str) -> str:
    """Return ``name`` unchanged, or raise UnknownInstanceType with close matches."""
    if not isinstance(name, str):
        raise TypeError(f"instance type must be a string, got {type(name).__name__}")
    # Catalog names are checked against botocore's model by the catalog's own tests, so they skip the model load.
    if name in get_catalog() or name in ec2_instance_types():
        return name
    raise UnknownInstanceType(name, _suggest(name, get_catalog().instance_types))


@functools.cache
def ec2_regions() -> frozenset[str]:
    """EC2 regions in the aws, aws-cn and aws-us-gov partitions, from botocore's bundled endpoints."""
    # Read endpoints.json directly (what botocore's resolver reads) to avoid importing botocore.session.
    import importlib.resources

    data = json.loads((importlib.resources.files("botocore") / "data" / "endpoints.json").read_text())
    regions: set[str] = set()
    for partition in data["partitions"]:
        if partition["partition"] in _PARTITIONS:
            endpoints = partition["services"].get("ec2", {}).get("endpoints", {})
            regions.update(r for r in partition["regions"] if r in endpoints or not endpoints)
    return frozenset(regions)


def family_of(instance_type: str) -> str:
    """``p6-b200.48xlarge`` -> ``p6-b200``; the family is everything before the first dot."""
    family, dot, size = instance_type.partition(".")
    if not (family and dot and size):
        raise ValueError(f"{instance_type!r} is not shaped like an EC2 instance type (family.size)")
    return family


def is_gpu_instance_type(name: str) -> bool:
    """True for accelerated types (GPU, Trainium, Inferentia, Gaudi), including ones the catalog lacks."""
    if name in get_catalog():
        return True
    if not is_valid_ec2_instance_type(name):
        return False
    return bool(_ACCELERATED_FAMILY.match(name))


_T = TypeVar("_T")


def _matches(value: object, hint: object) -> bool:
    if isinstance(hint, types.UnionType):
        return any(_matches(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    # bool is an int subclass; a stray true/false in a numeric field is a data error, not a 1/0.
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    raise TypeError(f"unsupported field type {hint!r}")


def _accepts_float(hint: object) -> bool:
    return hint is float or (isinstance(hint, types.UnionType) and float in get_args(hint))


@functools.cache
def _shape(cls: type) -> tuple[dict[str, Any], dict[str, dataclasses.Field[Any]]]:
    """A record class's resolved field types and fields, worked out once per class, not once per record (the
    catalog decodes about a hundred records of three classes at every start)."""
    return get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def _decode(cls: type[_T], record: Mapping[str, Any], where: str) -> _T:
    hints, fields = _shape(cls)  # type: ignore[arg-type]  # a class is hashable; mypy reads type[_T] as not
    unknown = sorted(set(record) - set(fields))
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in record:
            if f.default is dataclasses.MISSING:
                raise ValueError(f"{where}: missing key {name!r}")
            continue
        value = record[name]
        hint = hints[name]
        if not _matches(value, hint):
            raise ValueError(f"{where}.{name}: {value!r} does not match {hint}")
        if isinstance(value, int) and not isinstance(value, bool) and _accepts_float(hint):
            value = float(value)
        values[name] = value
    return cls(**values)


def _check_date(value: str | None, where: str) -> None:
    if value is not None:
        try:
            date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"{where}: {value!r} is not an ISO date (YYYY-MM-DD)") from exc


class Catalog:
    """An immutable set of InstanceSpec and FamilyPricing records with name validation and lookups."""

    def __init__(
        self,
        instances: Iterable[InstanceSpec],
        families: Iterable[FamilyPricing],
        *,
        price_region: str = "us-east-1",
        currency: str = "USD",
        excluded: Mapping[str, str] | None = None,
        sources: Mapping[str, Mapping[str, str | None]] | None = None,
    ) -> None:
        specs: dict[str, InstanceSpec] = {}
        for spec in instances:
            if spec.instance_type in specs:
                raise ValueError(f"duplicate instance type {spec.instance_type!r}")
            specs[spec.instance_type] = spec
        family_map: dict[str, FamilyPricing] = {}
        for fam in families:
            if fam.family in family_map:
                raise ValueError(f"duplicate family {fam.family!r}")
            family_map[fam.family] = fam
        orphans = sorted(s.instance_type for s in specs.values() if s.family not in family_map)
        if orphans:
            raise ValueError(f"instance types without family pricing: {orphans}")
        self._specs: dict[str, InstanceSpec] = dict(sorted(specs.items()))
        self._families: dict[str, FamilyPricing] = family_map
        self.price_region = price_region
        self.currency = currency
        self._excluded: dict[str, str] = dict(excluded or {})
        self._sources: dict[str, dict[str, str | None]] = {k: dict(v) for k, v in (sources or {}).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Catalog:
        if data.get("schema") != SCHEMA:
            raise ValueError(f"catalog schema {data.get('schema')!r} is not {SCHEMA!r}")
        instances = [
            _decode(InstanceSpec, {"instance_type": name, **record}, f"instances[{name!r}]")
            for name, record in data["instances"].items()
        ]
        for spec in instances:
            _check_date(spec.price_date, f"instances[{spec.instance_type!r}].price_date")
            _check_date(spec.capacity_block_price_date, f"instances[{spec.instance_type!r}].capacity_block_price_date")
        families = [
            _decode(FamilyPricing, {"family": name, **record}, f"families[{name!r}]")
            for name, record in data["families"].items()
        ]
        return cls(
            instances,
            families,
            price_region=data["price_region"],
            currency=data["currency"],
            excluded=data.get("excluded", {}),
            sources=data.get("sources", {}),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Catalog:
        """Read a catalog file; without a path, the one shipped in this package."""
        if path is None:
            text = resources.files(__name__).joinpath(_DATA_FILE).read_text(encoding="utf-8")
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        return cls.from_dict(json.loads(text))

    def get(self, instance_type: str) -> InstanceSpec:
        """The spec, or UnknownInstanceType (not an EC2 name) / NotInCatalog (valid EC2 name, no figures)."""
        spec = self._specs.get(instance_type)
        if spec is not None:
            return spec
        if not isinstance(instance_type, str):
            raise TypeError(f"instance type must be a string, got {type(instance_type).__name__}")
        if instance_type not in ec2_instance_types():
            raise UnknownInstanceType(instance_type, _suggest(instance_type, self._specs))
        raise NotInCatalog(instance_type, self._excluded.get(instance_type))

    def find(self, instance_type: str) -> InstanceSpec | None:
        return self._specs.get(instance_type)

    def __contains__(self, instance_type: object) -> bool:
        return isinstance(instance_type, str) and instance_type in self._specs

    def __iter__(self) -> Iterator[InstanceSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Catalog({len(self._specs)} instance types, price_date={self.price_date!r})"

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(self._specs)

    @property
    def families(self) -> Mapping[str, FamilyPricing]:
        return types.MappingProxyType(self._families)

    @property
    def excluded(self) -> Mapping[str, str]:
        """Valid EC2 types deliberately left out, with the reason (also carried by NotInCatalog)."""
        return types.MappingProxyType(self._excluded)

    @property
    def sources(self) -> Mapping[str, Mapping[str, str | None]]:
        return types.MappingProxyType(self._sources)

    @property
    def price_date(self) -> str:
        """The oldest On-Demand price date in the catalog, so staleness checks err on the side of refreshing."""
        dates = [s.price_date for s in self._specs.values() if s.on_demand_usd is not None and s.price_date]
        return min(dates) if dates else ""

    def family_of(self, instance_type: str) -> str:
        return family_of(instance_type)

    def family_pricing(self, family_or_type: str) -> FamilyPricing:
        """Pricing for a family (``g6e``) or the family of an instance type (``g6e.12xlarge``)."""
        family = family_or_type
        if "." in family_or_type:
            family = family_of(validate_instance_type(family_or_type))
        pricing = self._families.get(family)
        if pricing is None:
            raise NotInCatalog(family_or_type, f"no pricing for family {family!r}; known: {sorted(self._families)}")
        return pricing

    def same_gpu_shape(self, instance_type: str) -> list[str]:
        """Catalog types (including ``instance_type``) with the same accelerator model and count, by name.

        Pools built from this list stay interchangeable for a job sized to the accelerators, which is what
        spot diversity needs.
        """
        spec = self.get(instance_type)
        return [
            s.instance_type
            for s in self._specs.values()
            if s.accelerator == spec.accelerator and s.accelerator_count == spec.accelerator_count
        ]

    def with_prices(self, overrides: Mapping[str, Mapping[str, float | str]]) -> Catalog:
        """A copy with On-Demand and/or spot prices replaced, e.g. from a refreshed price cache.

        Per type, keys: ``on_demand_usd``, ``spot_usd`` (positive numbers), ``price_date`` (ISO date, required
        with any price because every price carries its date) and ``price_source`` (default ``"override"``).
        An On-Demand override also marks the type as sold On-Demand, since a refreshed SKU is the evidence.
        """
        specs = dict(self._specs)
        for instance_type, override in overrides.items():
            spec = self.get(instance_type)
            where = f"price override for {instance_type!r}"
            unknown = sorted(set(override) - _PRICE_OVERRIDE_KEYS)
            if unknown:
                raise ValueError(f"{where}: unknown keys {unknown}; allowed: {sorted(_PRICE_OVERRIDE_KEYS)}")
            on_demand = _price(override, "on_demand_usd", where)
            spot = _price(override, "spot_usd", where)
            if on_demand is None and spot is None:
                raise ValueError(f"{where}: give on_demand_usd and/or spot_usd")
            price_date = override.get("price_date")
            if not isinstance(price_date, str):
                raise ValueError(f"{where}: price_date (ISO date string) is required with a price")
            _check_date(price_date, where)
            source = override.get("price_source", "override")
            if not isinstance(source, str) or not source:
                raise ValueError(f"{where}: price_source must be a non-empty string")
            changes: dict[str, Any] = {}
            if on_demand is not None:
                changes.update(on_demand_usd=on_demand, price_date=price_date, price_source=source, on_demand=True)
            if spot is not None:
                changes.update(spot_usd=spot, spot_price_date=price_date)
            specs[instance_type] = dataclasses.replace(spec, **changes)
        return Catalog(
            specs.values(),
            self._families.values(),
            price_region=self.price_region,
            currency=self.currency,
            excluded=self._excluded,
            sources=self._sources,
        )


def _price(override: Mapping[str, float | str], key: str, where: str) -> float | None:
    if key not in override:
        return None
    value = override[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{where}: {key} must be a positive number, got {value!r}")
    return float(value)


@functools.cache
def get_catalog() -> Catalog:
    """The catalog shipped with gpucloud, loaded once on first use.

    A leaf of GPU facts: its prices are the shipped us-east-1 figures. Regional, refreshed and commitment prices
    come from gpucloud.prices.book (snapshot + price cache), which builds on this catalog.
    """
    return Catalog.load()
