"""The constraints of AWS API request shapes, read from the service models that botocore ships.

botocore bundles each service's model (``botocore/data/<service>/<api-version>/service-2.json[.gz]``); every shape
there carries what the service validates: ``enum`` for strings, ``min``/``max`` (a string's length, a list's or
map's size, a number's range) and ``pattern``. The model files are read directly, newest API version first as
botocore's own loader picks it, without importing botocore (whose import alone costs about 0.35 s).

Parsing the EC2 model takes about 0.3 s, so the part a check needs (the shapes reachable from the request shapes
it asked for, constraints only) is kept in memory and on disk, keyed by the botocore version and the roots:
``$GPUCLOUD_BOTOCORE_CACHE`` when set (``off`` disables it), else ``$XDG_CACHE_HOME/gpucloud/botocore``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, util
from pathlib import Path
from typing import Any

from gpucloud.fileio import write_cache_atomic

CACHE_ENV = "GPUCLOUD_BOTOCORE_CACHE"
_DISABLED = frozenset({"", "off", "none", "0", "false"})
_FORMAT = 1  # bump when the cached form changes
_KEPT = ("type", "enum", "min", "max", "pattern")


@dataclass(frozen=True)
class Shape:
    name: str
    type: str  # structure, list, map, string, integer, long, float, double, boolean, timestamp, blob
    enum: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    pattern: str | None = None
    members: dict[str, str] = field(default_factory=dict)  # structure: member name -> shape name
    member: str | None = None  # list: the item shape
    key: str | None = None  # map
    value: str | None = None  # map


@dataclass(frozen=True)
class ServiceModel:
    """The shapes of one service reachable from some roots, with the operation -> input shape table."""

    service: str
    api_version: str
    botocore_version: str
    shapes: dict[str, Shape]
    inputs: dict[str, str]  # operation name -> its input shape

    def root(self, name: str) -> Shape | None:
        """An operation's input shape, or a shape by name."""
        return self.shapes.get(self.inputs.get(name, name))

    def shape(self, name: str) -> Shape | None:
        return self.shapes.get(name)

    @property
    def source(self) -> str:
        return f"botocore {self.botocore_version} {self.service} model ({self.api_version})"


# Java regex idioms of the models, in Python's `re`. The XML-character patterns name the supplementary planes as a
# range of UTF-16 surrogate pairs; Python strings hold code points. The Unicode classes \p{L} (letters) and \p{N}
# (numbers) are within \w, and \p{Z} (separators) within \s: each replacement admits at least what the class
# does (\s adds tab and newlines), so a translated pattern never rejects a value the service accepts (outside a
# negated class, which is left unchecked).
_JAVA_IDIOMS = (
    ("\\uD800\\uDC00-\\uDBFF\\uDFFF", "\\U00010000-\\U0010FFFF"),
    ("\\p{L}", "\\w"),
    ("\\p{N}", "\\w"),
    ("\\p{Z}", "\\s"),
)

_NEGATED_UNICODE_CLASS = re.compile(r"\[\^[^\]]*\\p\{")


@cache
def compiled(pattern: str) -> re.Pattern[str] | None:
    """A model pattern as a Python regex, or None where it uses syntax even the translation leaves unreadable
    (an inline flag in mid-pattern)."""
    if _NEGATED_UNICODE_CLASS.search(pattern):
        return None  # in a negated class the wider replacement would reject more than the service does
    for java, python in _JAVA_IDIOMS:
        pattern = pattern.replace(java, python)
    try:
        return re.compile(pattern)
    except re.error:
        return None


def botocore_data_dir() -> Path | None:
    spec = util.find_spec("botocore")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@cache
def botocore_version() -> str:
    try:
        return metadata.version("botocore")
    except metadata.PackageNotFoundError:
        return "unknown"


def cache_dir() -> Path | None:
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in _DISABLED else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpucloud" / "botocore"


def _read_model(service: str) -> tuple[str, dict[str, Any]] | None:
    data = botocore_data_dir()
    if data is None or not (data / service).is_dir():
        return None
    versions = sorted(p for p in (data / service).iterdir() if p.is_dir())
    for version_dir in reversed(versions):
        for name in ("service-2.json.gz", "service-2.json"):
            path = version_dir / name
            if path.is_file():
                raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
                return version_dir.name, json.loads(raw)
    return None


def _closure(model: dict[str, Any], roots: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, str]]:
    """The constraint-bearing part of every shape reachable from the roots (operation or shape names)."""
    shapes = model.get("shapes", {})
    operations = model.get("operations", {})
    inputs: dict[str, str] = {}
    todo: list[str] = []
    for root in roots:
        op = operations.get(root)
        if op is not None and "input" in op:
            inputs[root] = op["input"]["shape"]
            todo.append(op["input"]["shape"])
        elif root in shapes:
            todo.append(root)
    kept: dict[str, Any] = {}
    while todo:
        name = todo.pop()
        if name in kept or name not in shapes:
            continue
        raw = shapes[name]
        entry = {k: raw[k] for k in _KEPT if k in raw}
        if raw.get("type") == "structure":
            entry["members"] = {m: spec["shape"] for m, spec in raw.get("members", {}).items()}
            todo.extend(entry["members"].values())
        elif raw.get("type") == "list":
            entry["member"] = raw["member"]["shape"]
            todo.append(entry["member"])
        elif raw.get("type") == "map":
            entry["key"] = raw["key"]["shape"]
            entry["value"] = raw["value"]["shape"]
            todo.extend((entry["key"], entry["value"]))
        kept[name] = entry
    return kept, inputs


def _to_model(service: str, payload: dict[str, Any]) -> ServiceModel:
    shapes = {
        name: Shape(
            name=name,
            type=raw.get("type", ""),
            enum=tuple(raw.get("enum", ())),
            min=raw.get("min"),
            max=raw.get("max"),
            pattern=raw.get("pattern"),
            members=raw.get("members", {}),
            member=raw.get("member"),
            key=raw.get("key"),
            value=raw.get("value"),
        )
        for name, raw in payload["shapes"].items()
    }
    return ServiceModel(service, payload["api_version"], payload["botocore_version"], shapes, payload["inputs"])


_MODELS: dict[tuple[str, tuple[str, ...]], ServiceModel | None] = {}


def service_model(service: str, roots: tuple[str, ...]) -> ServiceModel | None:
    """The shapes of `service` reachable from `roots`; None when botocore or the service is not installed."""
    key = (service, roots)
    if key in _MODELS:
        return _MODELS[key]
    version = botocore_version()
    digest = hashlib.sha256(json.dumps([_FORMAT, service, roots]).encode()).hexdigest()[:16]
    directory = cache_dir()
    path = directory / version / f"{service}-{digest}.json" if directory is not None else None
    if path is not None and path.is_file():
        try:
            result = _to_model(service, json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass  # unreadable or damaged: parse the model again and rewrite the file
        else:
            _MODELS[key] = result
            return result
    read = _read_model(service)
    if read is None:
        _MODELS[key] = None
        return None
    api_version, model = read
    shapes, inputs = _closure(model, roots)
    payload = {"botocore_version": version, "api_version": api_version, "shapes": shapes, "inputs": inputs}
    if path is not None:
        # A read-only home only costs the next run the parse.
        write_cache_atomic(path, json.dumps(payload, separators=(",", ":")))
    result = _to_model(service, payload)
    _MODELS[key] = result
    return result


def clear_memory_cache() -> None:
    _MODELS.clear()
