"""Which values keys a chart reads: the ground truth for "this key is silently dropped".

None of the vendored charts ships a values.schema.json, so Helm accepts any key and ignores what no template reads
(a sub-chart aliased `nfd` never sees values under `node-feature-discovery:`). This module derives, from the chart
itself, the tree of keys it can read:

- every key path of the chart's `values.yaml` defaults;
- every `.Values.<path>` the chart's templates and files reference (also `$.Values`, `.ctx.Values`, `index .Values
  "a" "b"`, variables assigned from a values path, and paths relative to `with .Values.x` blocks);
- each dependency's tree mounted under its alias (or name), its `condition` paths, `global` and `tags`.

A key is free-form (anything below it is accepted) when its default is an empty map or null, when templates pass
it through wholesale (`toYaml .Values.x`, `tpl`, `include`, `range`, a bare `.` inside `with`), or when nothing
names any key below it (a scalar the chart reads as a whole). Everything else is checked key by key.
"""

from __future__ import annotations

import difflib
import json
import marshal
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FREE = "\0free"  # marker key in a serialised node: everything below is accepted
ALWAYS_ALLOWED = ("global", "tags")  # Helm itself reads these at the top of every chart
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")
# Functions that take a values subtree as a whole: whatever keys it holds reach the output (or a helper).
_WHOLESALE = re.compile(
    r"\b(toYaml|toJson|toPrettyJson|toRawJson|tpl|include|template|merge|mergeOverwrite|deepCopy|pick|omit|keys|"
    r"values|dict|list|set|unset|dig|get|pluck|fromYaml|kindIs|typeIs|len|empty|coalesce|ternary|default)\b"
)
_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_VALUES_REF = re.compile(rf"\.Values((?:\.{_IDENT})*)")
_INDEX_REF = re.compile(
    rf"\bindex\s+\(?\s*(?:\$?(?:{_IDENT})?)(?:\.{_IDENT})*?\.Values((?:\.{_IDENT})*)\s*\)?((?:\s+\"[^\"]*\")+)"
)
_ASSIGN = re.compile(rf"(\${_IDENT})\s*:?=\s*(.*)$", re.DOTALL)
_VAR_REF = re.compile(rf"(\${_IDENT})((?:\.{_IDENT})+)")
_RELATIVE = re.compile(rf"(?<![\w\)\]\$.])((?:\.{_IDENT})+)")
_BARE_DOT = re.compile(r"(?<![\w\)\]\$.])\.(?![\w.])")
_WORKLOAD = re.compile(r"^\s*kind:\s*[\"']?(" + "|".join(WORKLOAD_KINDS) + r")[\"']?\s*$", re.MULTILINE)
_TEXT_SUFFIXES = {".yaml", ".yml", ".tpl", ".txt", ".json", ".conf", ".toml", ".ini", ".lua", ".sh", ".py", ""}
_BLOCKS = [[k] for k in ("if", "with", "range", "define", "block", "else", "end")]
_ROOT_FIELDS = {"Values", "Release", "Chart", "Capabilities", "Files", "Template", "Subcharts"}


@dataclass
class KeyNode:
    """One key of the values tree: its known children, or free-form (any key below it is read)."""

    children: dict[str, KeyNode] = field(default_factory=dict)
    free: bool = False

    def child(self, key: str) -> KeyNode:
        return self.children.setdefault(key, KeyNode())

    def at(self, path: tuple[str, ...]) -> KeyNode:
        node = self
        for key in path:
            node = node.child(key)
        return node

    def accepts_anything(self) -> bool:
        return self.free or not self.children

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v.to_json() for k, v in self.children.items()}
        if self.free:
            out[FREE] = True
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> KeyNode:
        node = cls(free=bool(raw.get(FREE)))
        node.children = {k: cls.from_json(v) for k, v in raw.items() if k != FREE}
        return node


@dataclass
class ChartModel:
    """What a chart (with its sub-charts) reads, and whether its templates can define a workload."""

    name: str
    version: str
    keys: KeyNode
    aliases: dict[str, str]  # dependency name -> the key its values live under (alias or name)
    defaults: dict[str, Any]  # the chart's own values.yaml, for typing placeholders
    workload_kinds: list[str]  # workload kinds any template (sub-charts included) can render

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "keys": self.keys.to_json(),
            "aliases": self.aliases,
            "defaults": self.defaults,
            "workload_kinds": self.workload_kinds,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ChartModel:
        return cls(
            str(raw["name"]),
            str(raw["version"]),
            KeyNode.from_json(raw["keys"]),
            dict(raw["aliases"]),
            dict(raw["defaults"]),
            list(raw["workload_kinds"]),
        )


@dataclass(frozen=True)
class UnreadKey:
    """A values key the chart never reads (Helm drops it without a word)."""

    path: tuple[str, ...]
    hint: str  # what the chart reads instead, when something close exists

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def _load_yaml(path: Path) -> Any:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    try:
        import yaml_rs

        return yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)
    except Exception:  # the fast parser is optional; PyYAML decides
        pass
    try:
        return yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return None


def _add_defaults(node: KeyNode, value: Any) -> None:
    if value is None or (isinstance(value, dict) and not value):
        node.free = True
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _add_defaults(node.child(str(k)), v)


class _TemplateScan:
    """Walks one chart's template text and records the values paths it reads."""

    def __init__(self, root: KeyNode) -> None:
        self.root = root

    def known(self, path: tuple[str, ...], *, wholesale: bool = False) -> None:
        node = self.root.at(path)
        if wholesale and path:
            node.free = True

    def scan(self, text: str) -> None:
        # Context stack: None = unknown dot, () = the root (`.Values` reachable), a path = `with .Values.<path>`.
        stack: list[tuple[str, ...] | None] = [()]
        variables: dict[str, tuple[str, ...]] = {}
        for match in _ACTION.finditer(text):
            raw = match.group(1).strip()
            if raw.startswith("/*"):
                continue
            # Most actions of big charts (PromQL and dashboard escapes) neither open a block nor read values.
            if not stack[-1] and "Values" not in raw and "$" not in raw and raw.split(None, 1)[:1] not in _BLOCKS:
                continue
            literal_free = _STRING.sub('""', raw)
            head = literal_free.split(None, 1)[0] if literal_free.split() else ""
            body = literal_free[len(head) :] if head in ("with", "range", "if", "define", "block", "else") else ""
            ctx = stack[-1]
            self._refs(raw, literal_free, ctx, variables)
            if head == "end":
                if len(stack) > 1:
                    stack.pop()
            elif head in ("if",):
                stack.append(ctx)
            elif head in ("define", "block"):
                stack.append(())
            elif head == "with":
                stack.append(_index_target(raw) or self._target(body, ctx, variables))
            elif head == "range":
                target = _index_target(raw) or self._target(body.split(":=", 1)[-1], ctx, variables)
                if target:
                    self.known(target, wholesale=True)
                stack.append(None)
            elif head == "else" and body.strip().startswith("with"):
                stack[-1] = self._target(body.strip()[4:], stack[-2] if len(stack) > 1 else (), variables)

    def _target(self, expr: str, ctx: tuple[str, ...] | None, variables: dict[str, tuple[str, ...]]) -> Any:
        expr = expr.strip()
        m = _VALUES_REF.fullmatch(expr.split("|")[0].strip()) or re.fullmatch(
            rf"\$?(?:{_IDENT})?(?:\.{_IDENT})*?\.Values((?:\.{_IDENT})*)", expr.split("|")[0].strip()
        )
        if m:
            return tuple(p for p in m.group(1).split(".") if p)
        m = _VAR_REF.fullmatch(expr.split("|")[0].strip())
        if m and m.group(1) in variables:
            return variables[m.group(1)] + tuple(p for p in m.group(2).split(".") if p)
        m = re.fullmatch(rf"((?:\.{_IDENT})+)", expr.split("|")[0].strip())
        if m and ctx:
            return ctx + tuple(p for p in m.group(1).split(".") if p)
        return None

    def _refs(self, raw: str, text: str, ctx: tuple[str, ...] | None, variables: dict[str, tuple[str, ...]]) -> None:
        has_values, has_var = "Values" in text, "$" in text
        if not (has_values or has_var or ctx):
            return
        wholesale_fn = bool(_WHOLESALE.search(text))
        if has_values:
            if "index" in raw:
                for m in _INDEX_REF.finditer(raw):
                    base = tuple(p for p in m.group(1).split(".") if p)
                    keys = tuple(re.findall(r'"([^"]*)"', m.group(2)))
                    self.known(base + keys, wholesale=wholesale_fn)
            for m in _VALUES_REF.finditer(text):
                path = tuple(p for p in m.group(1).split(".") if p)
                self.known(path, wholesale=wholesale_fn and not _followed_by_index(text, m.end()))
        if has_var:
            assign = _ASSIGN.match(text.strip()) if "=" in text else None
            if assign:
                target = self._target(assign.group(2), ctx, variables)
                if target is not None:
                    variables[assign.group(1)] = target
            for m in _VAR_REF.finditer(text):
                if m.group(1) in variables:
                    sub = tuple(p for p in m.group(2).split(".") if p)
                    self.known(variables[m.group(1)] + sub, wholesale=wholesale_fn)
            if wholesale_fn and not assign:
                for var, path in variables.items():
                    if var in text and re.search(re.escape(var) + r"(?![\w.])", text):
                        self.known(path, wholesale=True)
        if ctx:
            for m in _RELATIVE.finditer(text):
                parts = tuple(p for p in m.group(1).split(".") if p)
                if parts[0] in _ROOT_FIELDS:
                    continue
                self.known(ctx + parts, wholesale=wholesale_fn)
            if _BARE_DOT.search(text):
                self.known(ctx, wholesale=True)


def _index_target(raw: str) -> tuple[str, ...] | None:
    """The values path of a block opened on `index .Values "a" "b"` (keys that are no identifiers)."""
    m = _INDEX_REF.search(raw) if "index" in raw else None
    if m is None:
        return None
    return tuple(p for p in m.group(1).split(".") if p) + tuple(re.findall(r'"([^"]*)"', m.group(2)))


def _merge(into: dict[str, Any], over: Mapping[str, Any]) -> None:
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _followed_by_index(text: str, end: int) -> bool:
    return text[end : end + 1] == '"'


def _text_files(chart_dir: Path) -> Iterator[Path]:
    for path in sorted(chart_dir.rglob("*")):
        rel = path.relative_to(chart_dir).parts
        if not path.is_file() or rel[0] in ("charts", "ci", "crds") or path.suffix == ".md":
            continue
        if path.suffix.lower() in _TEXT_SUFFIXES and path.name != "values.yaml":
            yield path


def _scan_chart(
    chart_dir: Path, keys: KeyNode, workloads: set[str], defaults: dict[str, Any], *, templates: bool = True
) -> dict[str, str]:
    """Fill `keys` with what this chart (and, mounted, its dependencies) reads; return dependency aliases.

    `defaults` receives the effective defaults: this chart's values.yaml over its sub-charts' (as Helm merges them).
    """
    chart = _load_yaml(chart_dir / "Chart.yaml") or {}
    own = _load_yaml(chart_dir / "values.yaml")
    own = own if isinstance(own, dict) else {}
    _add_defaults(keys, own)
    _merge(defaults, own)
    scan = _TemplateScan(keys)
    for path in _text_files(chart_dir) if templates else ():
        text = path.read_text(errors="replace")
        if "{{" in text:
            scan.scan(text)
        if path.relative_to(chart_dir).parts[0] == "templates":
            workloads.update(_WORKLOAD.findall(text))
    aliases: dict[str, str] = {}
    sub_dirs = {
        (_load_yaml(d / "Chart.yaml") or {}).get("name"): d
        for d in sorted((chart_dir / "charts").glob("*"))
        if (d / "Chart.yaml").is_file()
    }
    for dep in chart.get("dependencies") or []:
        name = str(dep.get("name"))
        mount = str(dep.get("alias") or name)
        aliases[name] = mount
        for cond in str(dep.get("condition") or "").split(","):
            if cond.strip():
                keys.at(tuple(cond.strip().split(".")))
        sub_dir = sub_dirs.get(name)
        if sub_dir is None:
            keys.child(mount).free = True  # not vendored: nothing to check it against
            continue
        sub_chart = _load_yaml(sub_dir / "Chart.yaml") or {}
        # A library chart's templates run in the parent's scope: its `.Values` are the parent's.
        library = sub_chart.get("type") == "library"
        sub_defaults: dict[str, Any] = {}
        _scan_chart(sub_dir, keys if library else keys.child(mount), workloads, sub_defaults, templates=templates)
        if not library:
            parent_view = defaults.get(mount)
            defaults[mount] = sub_defaults
            if isinstance(parent_view, dict):
                _merge(defaults[mount], parent_view)
    for key in ALWAYS_ALLOWED:
        keys.child(key).free = True
    return aliases


@lru_cache(maxsize=64)
def chart_model(chart_dir: str) -> ChartModel:
    """The values tree of a chart directory (cached per process; callers cache on disk by chart digest)."""
    directory = Path(chart_dir)
    chart = _load_yaml(directory / "Chart.yaml") or {}
    keys = KeyNode()
    workloads: set[str] = set()
    defaults: dict[str, Any] = {}
    aliases = _scan_chart(directory, keys, workloads, defaults)
    return ChartModel(
        str(chart.get("name", directory.name)),
        str(chart.get("version", "")),
        keys,
        aliases,
        json.loads(json.dumps(defaults, default=str)),
        sorted(workloads),
    )


def unread_keys(model: ChartModel, values: Mapping[str, Any]) -> list[UnreadKey]:
    """Every key of `values` that the chart does not read (the first unread key of each branch)."""
    out: list[UnreadKey] = []
    _walk(model, model.keys, values, (), out)
    return out


def _walk(
    model: ChartModel, node: KeyNode, values: Mapping[str, Any], path: tuple[str, ...], out: list[UnreadKey]
) -> None:
    for key, value in values.items():
        key = str(key)
        here = (*path, key)
        known = node.children.get(key)
        if known is None:
            out.append(UnreadKey(here, _hint(model, node, path, key)))
            continue
        if isinstance(value, Mapping) and not known.accepts_anything():
            _walk(model, known, value, here, out)


def _hint(model: ChartModel, node: KeyNode, path: tuple[str, ...], key: str) -> str:
    if not path and key in model.aliases and model.aliases[key] != key:
        alias = model.aliases[key]
        return f"sub-chart {key} is a dependency with alias `{alias}`: its values go under `{alias}:`"
    close = difflib.get_close_matches(key, list(node.children), n=3, cutoff=0.75)
    where = ".".join(path) or "the top level"
    if close:
        return f"did you mean {', '.join(f'`{c}`' for c in close)}? (keys the chart reads at {where})"
    known = sorted(k for k in node.children if k not in ALWAYS_ALLOWED)
    shown = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
    return f"the chart reads no `{key}` at {where}; it reads: {shown}"


PLACEHOLDER = "gpucloud-placeholder"
PLACEHOLDER_ARN = "arn:aws:iam::123456789012:role/gpucloud-placeholder"
PLACEHOLDER_URL = "https://gpucloud-placeholder.example.com"


def placeholder_for(key: str, default: Any) -> Any:
    """A stand-in for a value known only after `pulumi up`, of the type the chart's default has at that key."""
    if isinstance(default, bool):
        return True
    if isinstance(default, int | float):
        return default or 1
    if isinstance(default, list):
        return []
    if isinstance(default, dict):
        return {}
    # Words of the key, camelCase and separators alike: roleArn, role-arn, ARN -> "arn"; learnRate is no ARN.
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", key)]
    if "arn" in words:
        return PLACEHOLDER_ARN
    if words and words[-1] in ("url", "uri", "endpoint"):
        return PLACEHOLDER_URL
    return PLACEHOLDER


def fill_unknowns(values: Any, defaults: Any, is_unknown: Any, key: str = "", path: str = "") -> tuple[Any, list[str]]:
    """`values` with every unknown (per `is_unknown`) replaced by a typed placeholder; also the replaced paths."""
    if is_unknown(values):
        return placeholder_for(key, defaults), [path]
    if isinstance(values, Mapping):
        out: dict[str, Any] = {}
        filled: list[str] = []
        for k, v in values.items():
            sub_default = defaults.get(k) if isinstance(defaults, Mapping) else None
            out[str(k)], paths = fill_unknowns(v, sub_default, is_unknown, str(k), f"{path}.{k}" if path else str(k))
            filled += paths
        return out, filled
    if isinstance(values, list):
        element = defaults[0] if isinstance(defaults, list) and defaults else None
        items: list[Any] = []
        filled = []
        for i, v in enumerate(values):
            item, paths = fill_unknowns(v, element, is_unknown, key, f"{path}[{i}]")
            items.append(item)
            filled += paths
        return items, filled
    return values, []


@lru_cache(maxsize=64)
def _defaults_view(chart_dir: str) -> tuple[KeyNode, dict[str, Any]]:
    # Shared, never mutated: callers only read the tree and copy what they change.
    keys = KeyNode()
    defaults: dict[str, Any] = {}
    _scan_chart(Path(chart_dir), keys, set(), defaults, templates=False)
    return keys, json.loads(json.dumps(defaults, default=str))


def chart_defaults(chart_dir: str | Path) -> dict[str, Any]:
    """The chart's effective default values (its values.yaml over its sub-charts'), without scanning templates."""
    return _defaults_view(str(chart_dir))[1]


def _decided_by_defaults(node: KeyNode, values: Mapping[str, Any]) -> bool:
    """True when every key of `values` is read according to the defaults alone.

    The full tree only adds keys and free-form subtrees to the defaults' tree, so what the defaults accept the
    full tree accepts too; the exception is a scalar default that templates index into, hence a dict value under
    a childless, non-free node is left to the full tree, like any key the defaults do not have.
    """
    for key, value in values.items():
        child = node.children.get(str(key))
        if child is None:
            return False
        if (
            isinstance(value, Mapping)
            and not child.free
            and (not child.children or not _decided_by_defaults(child, value))
        ):
            return False
    return True


def unread_keys_for_pin(pin: Any, values: Mapping[str, Any]) -> list[UnreadKey]:
    """`unread_keys` for a locked chart, scanning its templates only when its defaults cannot decide."""
    model = cached_model(pin)
    if model is None:
        if _decided_by_defaults(defaults_view_for_pin(pin)[0], values):
            return []
        model = model_for_pin(pin)
    return unread_keys(model, values)


# Bump with any change to how templates are scanned: cached trees are keyed by chart digest only.
MODEL_CACHE_FORMAT = 2
_MODELS: dict[str, ChartModel] = {}
_DEFAULTS: dict[str, tuple[KeyNode, dict[str, Any]]] = {}


def _model_entry(pin: Any) -> tuple[str, Path]:
    from gpucloud.charts.helm import cache_dir

    key = f"{pin.digest.replace(':', '-')}-m{MODEL_CACHE_FORMAT}"
    return key, cache_dir() / f"model-{key}.json"


def cached_model(pin: Any) -> ChartModel | None:
    """The values tree of a locked chart if this process or the disk cache already has it (keyed by digest)."""
    key, entry = _model_entry(pin)
    if key not in _MODELS:
        try:
            _MODELS[key] = ChartModel.from_json(json.loads(entry.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return _MODELS[key]


def defaults_view_for_pin(pin: Any) -> tuple[KeyNode, dict[str, Any]]:
    """`_defaults_view` of a locked chart through the disk cache (keyed by chart digest).

    Parsing a chart's values.yaml files (kube-prometheus-stack's run to 6,000 lines) is most of what the Helm
    check costs once its renders are cached, and the result only changes with the chart.
    """
    from gpucloud.charts.helm import write_atomic

    key, entry = _model_entry(pin)
    # marshal, like the renders: these trees (kube-prometheus-stack's defaults run to 100 kB) load in half the
    # time JSON takes. The defaults went through JSON already, so marshal stores exactly what JSON would.
    key, entry = f"{key}-defaults", entry.with_name(f"model-{key}-defaults.marshal")
    if key not in _DEFAULTS:
        try:
            raw = marshal.loads(entry.read_bytes())
            _DEFAULTS[key] = (KeyNode.from_json(raw["keys"]), dict(raw["defaults"]))
        except (OSError, ValueError, EOFError, KeyError, TypeError):
            keys, defaults = _defaults_view(str(pin.chart_dir))
            write_atomic(entry, marshal.dumps({"keys": keys.to_json(), "defaults": defaults}))
            _DEFAULTS[key] = (keys, defaults)
    return _DEFAULTS[key]


def chart_defaults_for_pin(pin: Any) -> dict[str, Any]:
    """`chart_defaults` of a locked chart, through the disk cache."""
    return defaults_view_for_pin(pin)[1]


def model_for_pin(pin: Any) -> ChartModel:
    """The values tree of a locked chart: in memory, else from the disk cache by chart digest, else scanned."""
    from gpucloud.charts.helm import write_atomic

    found = cached_model(pin)
    if found is not None:
        return found
    key, entry = _model_entry(pin)
    model = chart_model(str(pin.chart_dir))
    write_atomic(entry, json.dumps(model.to_json()))
    _MODELS[key] = model
    return model


__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_ARN",
    "PLACEHOLDER_URL",
    "WORKLOAD_KINDS",
    "ChartModel",
    "KeyNode",
    "UnreadKey",
    "cached_model",
    "chart_defaults",
    "chart_defaults_for_pin",
    "chart_model",
    "fill_unknowns",
    "model_for_pin",
    "placeholder_for",
    "unread_keys",
    "unread_keys_for_pin",
]
