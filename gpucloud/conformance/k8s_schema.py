"""Schema conformance of every Kubernetes object the plan creates: what the API server would reject or prune.

Owns two checks:

- ``k8s.schema``: each built-in kind (Deployment, ConfigMap, CustomResourceDefinition, ...), registered by the
  program or rendered by a chart (``ctx.derived``), against the Kubernetes OpenAPI schema of the cluster's minor
  version as the pinned ``kubernetes-validate`` package ships it, in its strict flavour (unknown fields are
  errors, as with ``kubectl --validate=strict`` and server-side field validation). An apiVersion/kind the
  version no longer serves (``policy/v1beta1``) is an error too.
- ``k8s.crd``: each custom resource against the ``openAPIV3Schema`` of the version its CRD serves, where the CRD
  is one the plan itself installs (a CustomResourceDefinition resource, or a CRD a rendered chart carries). A
  custom resource whose CRD nothing installs, whose version the CRD does not serve, and two CRDs of one name that
  serve different versions are errors: the API server would refuse the object, or the second install.

Values that are unknown at preview (the engine's UNKNOWN sentinel) and masked secrets are strings standing in
for a value of any type: an error whose offending value is such a placeholder is dropped, since the real value
is not known until ``pulumi up``.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from jsonschema._utils import equal as jsonschema_equal
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

from gpucloud.conformance import EKS_CLUSTER_TYPE, ConformanceContext, DerivedObject, Finding, register_check
from gpucloud.conformance.verdicts import VerdictStore
from gpucloud.plan.model import SECRET, UNKNOWN, Plan, ResourceRecord

CHECK_SCHEMA = "k8s.schema"
CHECK_CRD = "k8s.crd"
KV_VERSION: str = kubernetes_validate.__version__
_SCHEMA_ROOT = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = f"{_DEFS_ID}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_CRD_API = "apiextensions.k8s.io/v1"
VENDOR_UPSTREAM = Path(__file__).resolve().parents[2] / "vendor" / "upstream"

# Plan resources that are not Kubernetes objects themselves: Helm releases and charts (their rendered objects
# arrive as derived objects), YAML/kustomize groups (their children are registered on their own), providers.
_NOT_OBJECTS_GROUPS = {"helm.sh", "yaml", "yaml/v2", "kustomize", "kustomize/v2"}


@dataclass(frozen=True)
class K8sObject:
    """One object to validate: where it comes from (plan resource or rendered) and its manifest."""

    urn: str
    manifest: dict[str, Any]
    ref: str | None  # a derived object's "apiVersion/kind ns/name"; None for a plan resource
    origin: str  # "resource <name>" or the derived object's source ("chart karpenter@1.12.1")
    patch: bool = False  # a <Kind>Patch resource: every field optional

    @property
    def api_version(self) -> str:
        return str(self.manifest.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind") or "")

    @property
    def group_version(self) -> tuple[str, str]:
        group, _, version = self.api_version.rpartition("/")
        return group, version

    @property
    def name(self) -> str:
        metadata = self.manifest.get("metadata")
        return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


# --- collecting the objects ---------------------------------------------------------------------------------


def _token_gvk(type_: str) -> tuple[str, str] | None:
    """`kubernetes:<group>/<version>:<Kind>` -> (apiVersion, Kind); the core group's apiVersion is plain `v1`."""
    parts = type_.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    module, kind = parts[1], parts[2]
    group, _, version = module.rpartition("/")
    if not version or group in _NOT_OBJECTS_GROUPS or module in _NOT_OBJECTS_GROUPS:
        return None
    return (version if group == "core" else f"{group}/{version}"), kind


def _clean(value: Any) -> Any:
    # Inputs the SDK adds for its own bookkeeping start with "__"; they never reach the API server.
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not (isinstance(k, str) and k.startswith("__"))}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def plan_object(r: ResourceRecord) -> K8sObject | None:
    """The manifest a pulumi-kubernetes resource sends, from its recorded inputs (None for non-objects)."""
    if not r.custom:
        return None
    gvk = _token_gvk(r.type)
    if gvk is None:
        return None
    api_version, kind = gvk
    manifest = _clean(r.inputs)
    patch = False
    declared_kind = manifest.get("kind")
    if kind.endswith("Patch") and declared_kind == kind[: -len("Patch")]:
        kind, patch = declared_kind, True
    # CustomResource records the token from the object's own apiVersion/kind, so token and inputs agree; the
    # token wins where an input is missing or unknown, as the provider fills them from the type.
    if not isinstance(manifest.get("apiVersion"), str) or manifest.get("apiVersion") == UNKNOWN:
        manifest["apiVersion"] = api_version
    if not isinstance(declared_kind, str) or declared_kind == UNKNOWN:
        manifest["kind"] = kind
    return K8sObject(r.urn, manifest, None, f"resource {r.name}", patch)


def _context_objects(ctx: ConformanceContext) -> list[K8sObject]:
    """`collect_objects` once per run: k8s.schema and k8s.crd read the same objects, and neither mutates them.

    Keyed by the number of derived objects, so a check that derives more (none does after helm) is seen.
    """
    cached = ctx.facts.get(_OBJECTS_KEY)
    if cached is None or cached[0] != len(ctx.derived):
        cached = (len(ctx.derived), collect_objects(ctx.plan, ctx.derived))
        ctx.facts[_OBJECTS_KEY] = cached
    objects: list[K8sObject] = cached[1]
    return objects


_OBJECTS_KEY = "k8s.objects"


def collect_objects(plan: Plan, derived: Iterable[DerivedObject]) -> list[K8sObject]:
    """Every Kubernetes object the plan creates: its own resources first, then the rendered ones."""
    out = [o for o in (plan_object(r) for r in plan) if o is not None]
    for d in derived:
        if isinstance(d.manifest, dict):
            # DerivedObject.ref reads metadata as a map; a chart can render anything there.
            ref = d.ref if isinstance(d.manifest.get("metadata"), dict) else f"{d.api_version}/{d.kind}"
            out.append(K8sObject(d.owner, d.manifest, ref, d.source))
    return out


# --- the Kubernetes OpenAPI schema (kubernetes-validate's copy) ---------------------------------------------


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])


@dataclass
class OpenAPISchemas:
    """The strict JSON schemas of one Kubernetes version, loaded once; one compiled validator per kind."""

    requested: str
    version: str  # the schema set used ("1.34.0"): the newest carried that is not newer than requested
    root: Path
    registry: Registry[Any]
    gvks: dict[tuple[str, str], str]  # (apiVersion, kind) -> definition name
    groups: set[str]
    fast: FastValidity
    _validators: dict[tuple[str, str], SchemaValidator] = field(default_factory=dict)

    @property
    def source(self) -> str:
        minor = ".".join(self.version.split(".")[:2])
        return f"Kubernetes {minor} OpenAPI (kubernetes-validate {KV_VERSION})"

    def is_builtin_group(self, api_version: str) -> bool:
        group = api_version.rpartition("/")[0]
        return group in self.groups

    def validator(self, api_version: str, kind: str) -> SchemaValidator | None:
        key = (api_version, kind)
        if key in self._validators:
            return self._validators[key]
        if key not in self.gvks:
            return None
        # kubernetes-validate's own file naming: the group's first label, then the version ("rbac-v1").
        short = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        path = self.root / f"{kind.lower()}-{short}.json"
        fallback = {"$ref": f"{_DEFS_ID}#/$defs/{self.gvks[key]}"}
        schema = json.loads(path.read_text()) if path.is_file() else fallback
        validator = self.custom_validator(schema)
        self._validators[key] = validator
        return validator

    def custom_validator(self, schema: dict[str, Any]) -> SchemaValidator:
        try:
            fast: Predicate | None = self.fast.compile(schema)
        except _Unsupported:
            fast = None
        return SchemaValidator(lambda: jsonschema.Draft202012Validator(schema, registry=self.registry), fast)

    def structural_validator(self, tree: dict[str, Any]) -> SchemaValidator:
        """`custom_validator(structural_to_jsonschema(tree, root=True))`, converting only what is checked.

        A CRD's tree runs to thousands of nodes (prometheus-operator's PodSpec copies) of which an object
        touches a few: the fast check converts each node as it first compiles it, and the whole tree is
        converted only when an object fails and jsonschema has to say why.
        """
        try:
            fast: Predicate | None = self.fast._compile_node(_structural_node(tree, root=True), _structural_node)
        except _Unsupported:
            fast = None

        def slow() -> jsonschema.protocols.Validator:
            schema = structural_to_jsonschema(tree, root=True)
            return jsonschema.Draft202012Validator(schema, registry=self.registry)

        return SchemaValidator(slow, fast)


class _Unsupported(Exception):
    """A schema keyword the fast path does not implement: that schema is checked by jsonschema alone."""


_UPSTREAM_PATTERN = "x-gpucloud-upstream-pattern"
_ANNOTATIONS = {
    "description",
    "format",
    "title",
    "default",
    "example",
    "$schema",
    "$id",
    "discriminator",
    _UPSTREAM_PATTERN,
}


def _is_type(name: str, x: Any) -> bool:
    # JSON Schema's types as jsonschema's 2020-12 type checker defines them (an integral float is an integer).
    if name == "object":
        return isinstance(x, dict)
    if name == "array":
        return isinstance(x, list)
    if name == "string":
        return isinstance(x, str)
    if name == "boolean":
        return isinstance(x, bool)
    if name == "null":
        return x is None
    if name == "integer":
        return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    if name == "number":
        return isinstance(x, int | float) and not isinstance(x, bool)
    raise _Unsupported(f"type {name}")


Predicate = Callable[[Any], bool]
Convert = Callable[[Any], Any]


class FastValidity:
    """An exact yes/no for the keywords Kubernetes schemas use, compiled once per schema node.

    jsonschema spends ~30 us per schema node on a valid object (evolving a validator, resolving each $ref):
    about 2 ms for a Deployment, half a second for a few hundred rendered objects. Almost every object is
    valid, so this predicate answers "valid?" first, and only an object it rejects goes through jsonschema,
    whose errors are the ones reported. A schema with any keyword not implemented here raises _Unsupported
    and is left to jsonschema entirely, so the fast path never decides anything jsonschema would not.

    Property, item and map-value schemas compile on first use: a CRD's tree runs to thousands of nodes
    (prometheus-operator's PodSpec copies) of which an object touches a few; _Unsupported may then surface
    while checking, and SchemaValidator falls back to jsonschema for that schema from then on.
    """

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self._defs = defs
        self._refs: dict[str, Predicate] = {}

    def compile(self, node: Any, convert: Convert | None = None) -> Predicate:
        """The predicate of a schema node; `convert` turns each node of the tree into JSON Schema on first use.

        A CRD's structural schema is converted node by node this way (the `$ref`s the conversion adds point at
        the built-in definitions, which are JSON Schema already and compile as they are).
        """
        return self._compile_node(convert(node) if convert is not None else node, convert)

    def _compile_node(self, node: Any, convert: Convert | None) -> Predicate:
        if node is True or node == {}:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise _Unsupported(repr(node)[:40])
        checks: list[Predicate] = []
        for key, value in node.items():
            if key in _ANNOTATIONS or key.startswith("x-kubernetes-"):
                continue
            checks.append(self._keyword(key, value, node, convert))
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(c(x) for c in checks)

    def _lazy(self, node: Any, convert: Convert | None) -> Predicate:
        cell: list[Predicate] = []

        def check(x: Any) -> bool:
            if not cell:
                cell.append(self.compile(node, convert))
            return cell[0](x)

        return check

    def _ref(self, ref: str) -> Predicate:
        name = ref.rpartition("/$defs/")[2]
        if "/$defs/" not in ref or name not in self._defs:
            raise _Unsupported(ref)
        if name not in self._refs:
            cell: list[Predicate] = []
            self._refs[name] = lambda x: cell[0](x)
            cell.append(self.compile(self._defs[name]))
        return self._refs[name]

    def _keyword(self, key: str, value: Any, node: Mapping[str, Any], convert: Convert | None) -> Predicate:
        if key == "$ref" and isinstance(value, str):
            return self._ref(value)
        if key == "type":
            names = [value] if isinstance(value, str) else list(value)
            for n in names:
                _is_type(n, None)  # raises on a type name it does not know
            return lambda x: any(_is_type(n, x) for n in names)
        if key == "properties" and isinstance(value, dict):
            props = {k: self._lazy(v, convert) for k, v in value.items()}
            return lambda x: not isinstance(x, dict) or all(props[k](x[k]) for k in props.keys() & x.keys())
        if key == "additionalProperties":
            if "patternProperties" in node:
                raise _Unsupported("patternProperties")
            known = set(node.get("properties") or {})
            if value is False:
                return lambda x: not isinstance(x, dict) or x.keys() <= known
            extra = self._lazy(value, convert)
            return lambda x: not isinstance(x, dict) or all(extra(v) for k, v in x.items() if k not in known)
        if key == "required" and isinstance(value, list):
            need = list(value)
            return lambda x: not isinstance(x, dict) or all(k in x for k in need)
        if key == "items" and isinstance(value, dict):
            item = self._lazy(value, convert)
            return lambda x: not isinstance(x, list) or all(item(v) for v in x)
        if key == "enum" and isinstance(value, list):
            allowed = list(value)
            return lambda x: any(jsonschema_equal(x, e) for e in allowed)
        if key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
            subs = [self.compile(v, convert) for v in value]
            if key == "oneOf":
                return lambda x: sum(1 for s in subs if s(x)) == 1
            if key == "anyOf":
                return lambda x: any(s(x) for s in subs)
            return lambda x: all(s(x) for s in subs)
        if key == "not":
            sub = self.compile(value, convert)
            return lambda x: not sub(x)
        if key == "pattern" and isinstance(value, str):
            try:
                rx = re.compile(value)
            except re.error:
                raise _Unsupported(f"pattern {value}") from None
            return lambda x: not isinstance(x, str) or rx.search(x) is not None
        if key in _BOUNDS and isinstance(value, int | float) and not isinstance(value, bool):
            return _BOUNDS[key](value)
        raise _Unsupported(key)


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_BOUNDS: dict[str, Callable[[Any], Predicate]] = {
    "minimum": lambda b: lambda x: not _num(x) or x >= b,
    "maximum": lambda b: lambda x: not _num(x) or x <= b,
    "exclusiveMinimum": lambda b: lambda x: not _num(x) or x > b,
    "exclusiveMaximum": lambda b: lambda x: not _num(x) or x < b,
    "minLength": lambda b: lambda x: not isinstance(x, str) or len(x) >= b,
    "maxLength": lambda b: lambda x: not isinstance(x, str) or len(x) <= b,
    "minItems": lambda b: lambda x: not isinstance(x, list) or len(x) >= b,
    "maxItems": lambda b: lambda x: not isinstance(x, list) or len(x) <= b,
    "minProperties": lambda b: lambda x: not isinstance(x, dict) or len(x) >= b,
    "maxProperties": lambda b: lambda x: not isinstance(x, dict) or len(x) <= b,
}


class SchemaValidator:
    """jsonschema's validator for the errors, with the fast validity check in front when the schema allows.

    The jsonschema validator (and the schema it needs) is built on first use: almost every object passes the
    fast check, so for most schemas it never is.
    """

    def __init__(self, slow: Callable[[], jsonschema.protocols.Validator], fast: Predicate | None) -> None:
        self._slow_factory = slow
        self._slow: jsonschema.protocols.Validator | None = None
        self.fast = fast

    @property
    def slow(self) -> jsonschema.protocols.Validator:
        if self._slow is None:
            self._slow = self._slow_factory()
        return self._slow

    def iter_errors(self, instance: Any) -> Iterator[jsonschema.ValidationError]:
        if self.fast is not None:
            try:
                if self.fast(instance):
                    return iter(())
            except _Unsupported:
                self.fast = None
        return self.slow.iter_errors(instance)


def carried_versions() -> list[str]:
    return sorted(
        {m.group(1) for p in _SCHEMA_ROOT.iterdir() if (m := re.match(r"^v([\d.]+)-local-strict$", p.name))},
        key=_version_key,
    )


@cache
def openapi_schemas(kubernetes_version: str) -> OpenAPISchemas:
    """The schema set for a cluster version; raises LookupError when kubernetes-validate carries none that old."""
    wanted = _version_key(kubernetes_version)[:2]
    usable = [v for v in carried_versions() if _version_key(v)[:2] <= wanted]
    if not usable:
        raise LookupError(
            f"kubernetes-validate {KV_VERSION} carries no schema for Kubernetes {kubernetes_version} "
            f"(it has {', '.join(carried_versions())})"
        )
    version = usable[-1]
    root = _SCHEMA_ROOT / f"v{version}-local-strict"
    defs = json.loads((root / "_definitions.json").read_text())
    registry: Registry[Any] = Resource.from_contents(defs) @ Registry()
    gvks: dict[tuple[str, str], str] = {}
    for name, definition in defs.get("$defs", {}).items():
        for gvk in definition.get("x-kubernetes-group-version-kind") or []:
            group, version_, kind = gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")
            gvks[(f"{group}/{version_}" if group else version_, kind)] = name
    groups = {av.rpartition("/")[0] for av, _ in gvks}
    return OpenAPISchemas(
        kubernetes_version, version, root, registry, gvks, groups, FastValidity(defs.get("$defs", {}))
    )


# --- turning validation errors into findings ----------------------------------------------------------------


def _is_placeholder(value: Any) -> bool:
    # The sentinel stands in for a value of any type (an integer port, a whole nodeSelector map), so judging it
    # against the field's type would be a false error. Rather than guess a typed stand-in per field, the
    # objects are validated as recorded and an error on a placeholder is dropped; every other field of the same
    # object is still checked. A string that merely contains the sentinel came from an interpolation.
    return isinstance(value, str) and (UNKNOWN in value or value == SECRET)


def _on_placeholder(error: jsonschema.ValidationError) -> bool:
    """Whether the error is about a value not known at preview: the value itself, or inside a combinator."""
    instance = error.instance
    if _is_placeholder(instance):
        return True
    if error.validator in ("uniqueItems", "contains") and isinstance(instance, list):
        return any(_is_placeholder(v) for v in instance)
    return any(_on_placeholder(e) for e in error.context or ())


_IDENT = re.compile(r"^[A-Za-z_$][\w$-]*$")


def json_path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.match(str(p)):
            out += f".{p}" if out else str(p)
        else:
            out += f"[{json.dumps(str(p))}]"
    return out


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    t = schema.get("type")
    types = [t] if isinstance(t, str) else [x for x in (t or []) if x != "null"]
    for key in ("oneOf", "anyOf"):
        for sub in schema.get(key) or []:
            types += [x for x in _types(sub) if x not in types]
    return types


_DEFAULTED = re.compile(r"\b[Dd]efaults to ")


def _server_defaulted(prop: Any) -> bool:
    """A required property the API server fills in before it validates, so leaving it out is fine.

    The OpenAPI document keeps such fields in `required` but says so in the field's own description
    (Job podFailurePolicy onPodConditions[].status: "Defaults to True."); a CRD says it with `default`.
    """
    if not isinstance(prop, dict):
        return False
    return "default" in prop or bool(_DEFAULTED.search(str(prop.get("description") or "")))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _known_properties(schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties")
    return sorted(props) if isinstance(props, dict) else []


@dataclass
class _Target:
    obj: K8sObject
    check: str
    source: str


def _describe(error: jsonschema.ValidationError, target: _Target) -> Iterator[Finding]:
    path = list(error.absolute_path)
    validator = error.validator
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    # validator_value is typed "Any | Unset"; an error jsonschema yields always carries the keyword's value.
    value: Any = error.validator_value
    obj = target.obj

    def finding(parts: list[Any], message: str, expected: str) -> Finding:
        return Finding(
            check=target.check,
            severity="error",
            urn=obj.urn,
            field=json_path(parts) or "(object)",
            message=f"{obj.kind} {obj.name or '(unnamed)'}: {message}",
            expected=expected,
            source=target.source,
            object=obj.ref,
        )

    if validator == "additionalProperties" and isinstance(instance, dict):
        known = _known_properties(schema)
        patterns = list((schema.get("patternProperties") or {}).keys())
        extras = [k for k in instance if k not in known and not any(re.search(p, k) for p in patterns)]
        for key in extras:
            near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            shown = ", ".join(known[:25]) + (", ..." if len(known) > 25 else "")
            yield finding(
                [*path, key],
                f"unknown field {key!r}{hint}: the API server rejects it under strict field validation "
                "and otherwise drops it",
                f"a field of this object: {shown}" if known else "no fields here",
            )
        return
    if validator == "required" and isinstance(instance, dict):
        props = schema.get("properties") or {}
        for key in value:
            if key in instance or _server_defaulted(props.get(key)):
                continue
            yield finding([*path, key], f"required field {key!r} is missing", f"required: {key}")
        return
    if validator == "type":
        want = [value] if isinstance(value, str) else [t for t in value if t != "null"] or list(value)
        yield finding(
            path,
            f"{_short(instance)} is {_json_type(instance)}, not {' or '.join(want)}",
            f"type: {' or '.join(want)}",
        )
        return
    if validator in ("oneOf", "anyOf"):
        want = _types(schema)
        if want and _json_type(instance) not in want:
            yield finding(
                path,
                f"{_short(instance)} is {_json_type(instance)}, not {' or '.join(want)}",
                f"type: {' or '.join(want)}",
            )
            return
        subs = "; ".join(sorted({e.message for e in error.context or ()}))[:300]
        yield finding(path, f"matches no allowed form ({subs})", f"{validator} of the schema's alternatives")
        return
    if validator == "enum":
        yield finding(
            path,
            f"{_short(instance)} is not an allowed value",
            "one of: " + ", ".join(json.dumps(v) for v in value),
        )
        return
    if validator == "const":
        yield finding(path, f"{_short(instance)} is not allowed", f"exactly {json.dumps(value)}")
        return
    if validator == "pattern":
        value = schema.get(_UPSTREAM_PATTERN, value)
        yield finding(path, f"{_short(instance)} does not match the pattern", f"pattern: {_short(value, 160)}")
        return
    yield finding(path, error.message[:300], f"{validator}: {_short(value, 120)}")


def validate_object(
    validator: SchemaValidator, obj: K8sObject, manifest: Any, check: str, source: str
) -> list[Finding]:
    target = _Target(obj, check, source)
    out: list[Finding] = []
    try:
        for error in validator.iter_errors(manifest):
            if _on_placeholder(error):
                continue
            if obj.patch and error.validator == "required":
                continue
            out.extend(_describe(error, target))
    except (re.error, jsonschema.exceptions.SchemaError, Unresolvable) as exc:
        # A schema this validator cannot apply (a regex dialect it lacks, a broken $ref in a CRD) is the
        # schema's fault, not the object's: say so once instead of failing the plan with a traceback.
        return [
            Finding(check, "warning", obj.urn, "(object)", f"{obj.kind} {obj.name}: not validated: {exc}", "", source,
                    obj.ref)
        ]  # fmt: skip
    # jsonschema raises `required` once per missing key, each carrying the whole list: keep one of each.
    return list(dict.fromkeys(out))


# --- k8s.schema: built-in kinds -----------------------------------------------------------------------------


def _prune_crd_schemas(manifest: dict[str, Any]) -> dict[str, Any]:
    """A CRD with each version's openAPIV3Schema cut to its top level.

    The nested schema tree is JSONSchemaProps all the way down, recursive and strict: validating a chart's CRDs
    whole costs about 10 ms each (kube-prometheus-stack ships ten of up to 1 MB). Those trees are exercised
    where it matters, by validating the custom resources against them (k8s.crd); the CRD's own shape (names,
    scope, versions, served/storage) is still checked here.
    """
    out = dict(manifest)
    spec = out.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("versions"), list):
        return out
    versions = []
    for v in spec["versions"]:
        if isinstance(v, dict) and isinstance(v.get("schema"), dict):
            v = dict(v)
            schema = dict(v["schema"])
            tree = schema.get("openAPIV3Schema")
            if isinstance(tree, dict):
                schema["openAPIV3Schema"] = {
                    k: x
                    for k, x in tree.items()
                    if not isinstance(x, dict | list) or (isinstance(x, list) and all(isinstance(i, str) for i in x))
                }
            v["schema"] = schema
        versions.append(v)
    out["spec"] = {**spec, "versions": versions}
    return out


def _shape_finding(obj: K8sObject, check: str, field_: str, message: str, expected: str, source: str) -> Finding:
    return Finding(check, "error", obj.urn, field_, message, expected, source, obj.ref)


def _verdicts(schemas: OpenAPISchemas) -> VerdictStore:
    """The objects k8s.schema found valid on earlier runs (gpucloud/conformance/verdicts.py).

    Validation is a pure function of the manifest, the patch flag, the schema set and this module's code, so an
    object seen valid before is valid now; a cached plan repeats the same 215 rendered objects every time.
    """
    here = Path(__file__)
    return VerdictStore.load(
        CHECK_SCHEMA, [f"kubernetes-validate={KV_VERSION}", schemas.version], [here, here.with_name("verdicts.py")]
    )


@register_check(CHECK_SCHEMA)
def check_schema(ctx: ConformanceContext) -> Iterator[Finding]:
    """Every built-in Kubernetes object against the cluster version's OpenAPI schema (strict)."""
    objects = _context_objects(ctx)
    if not objects:
        return
    try:
        schemas = openapi_schemas(ctx.kubernetes_version)
    except LookupError as exc:
        yield Finding(CHECK_SCHEMA, "warning", objects[0].urn, "(cluster version)", str(exc), "", "kubernetes-validate")
        return
    verdicts = _verdicts(schemas)
    for obj in objects:
        api_version, kind = obj.api_version, obj.kind
        if not api_version or not kind:
            yield _shape_finding(
                obj, CHECK_SCHEMA, "apiVersion" if not api_version else "kind",
                "object has no apiVersion/kind: the API server cannot route it",
                "apiVersion and kind set", schemas.source,
            )  # fmt: skip
            continue
        if not schemas.is_builtin_group(api_version):
            continue  # a custom resource: k8s.crd
        if (api_version, kind) not in schemas.gvks:
            served = sorted(av for av, k in schemas.gvks if k == kind)
            yield _shape_finding(
                obj,
                CHECK_SCHEMA,
                "apiVersion",
                f"Kubernetes {schemas.version} serves no {kind} in {api_version}",
                f"apiVersion one of: {', '.join(served)}" if served else f"a kind that {api_version} serves",
                schemas.source,
            )
            continue
        manifest = obj.manifest
        if api_version == _CRD_API and kind == "CustomResourceDefinition":
            manifest = _prune_crd_schemas(manifest)
        digest = verdicts.digest(obj.patch, manifest)
        if verdicts.known_valid(digest):
            continue
        validator = schemas.validator(api_version, kind)
        assert validator is not None  # its (apiVersion, kind) is served
        found = validate_object(validator, obj, manifest, CHECK_SCHEMA, schemas.source)
        verdicts.record(digest, found)
        yield from found
    verdicts.save()


# --- k8s.crd: custom resources against the plan's CRDs ------------------------------------------------------


@dataclass
class Crd:
    """One CRD the plan installs (or a vendored file offers), with its served versions' schemas."""

    name: str
    group: str
    kind: str
    scope: str
    versions: dict[str, dict[str, Any] | None]  # served version -> openAPIV3Schema (None: no schema)
    origin: str  # "chart kube-prometheus-stack@75.6.1", "resource mpijobs-crd", "vendor/upstream/crds/..."
    obj: K8sObject | None = None
    validators: dict[str, SchemaValidator] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"CRD {self.name}"


def crd_from_manifest(manifest: Mapping[str, Any], origin: str, obj: K8sObject | None = None) -> Crd | None:
    if manifest.get("kind") != "CustomResourceDefinition":
        return None
    spec = manifest.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(names, dict):
        return None
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return None
    versions: dict[str, dict[str, Any] | None] = {}
    listed = spec.get("versions")
    for v in listed if isinstance(listed, list) else []:
        if not isinstance(v, dict) or v.get("served") is not True or not isinstance(v.get("name"), str):
            continue
        schema = v.get("schema")
        tree = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        versions[v["name"]] = tree if isinstance(tree, dict) else None
    metadata = manifest.get("metadata")
    declared = metadata.get("name") if isinstance(metadata, dict) else None
    name = str(declared or f"{names.get('plural', kind.lower())}.{group}")
    return Crd(name, group, kind, str(spec.get("scope") or "Namespaced"), versions, origin, obj)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML 1.1's `=` value tag appears in CRD enums (mpi-operator); PyYAML has no constructor for it."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


_TEMPLATE_COMMENT = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}", re.DOTALL)


@cache
def _vendored_crd_texts(root: Path) -> tuple[tuple[str, str], ...]:
    """(path, text) of every vendored YAML file that may hold a CRD, read once per process."""
    if not root.is_dir():
        return ()
    out = []
    for path in sorted(root.rglob("*.y*ml")):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        if "CustomResourceDefinition" not in text:
            continue
        rel = str(path.relative_to(root.parent.parent))
        if "{{" in text:
            # A chart that ships its CRDs as templates (keda, karpenter-crd, kueue) wraps them in conditionals
            # and templated labels; without those lines the CRD itself is plain YAML. Good enough to say where
            # a CRD could come from; the plan's own copy arrives rendered by Helm.
            # Template comments span lines (kueue's licence header): drop them whole first.
            text = _TEMPLATE_COMMENT.sub("", text)
            text = "\n".join(line for line in text.splitlines() if "{{" not in line and "}}" not in line)
            rel += " (Helm template)"
        out.append((rel, text))
    return tuple(out)


@cache
def vendored_crds(group: str, kind: str, root: Path = VENDOR_UPSTREAM) -> tuple[Crd, ...]:
    """The CRDs for one group/kind that the vendored upstream bundle offers (chart crds/, CRD files, manifests).

    Read only when a custom resource lacks its CRD in the plan, to say where one could come from; a text
    match picks the few files worth parsing (the bundle's CRDs are megabytes of YAML).
    """
    kind_line = re.compile(rf"^\s*kind:\s*['\"]?{re.escape(kind)}['\"]?\s*$", re.MULTILINE)
    out: list[Crd] = []
    for rel, text in _vendored_crd_texts(root):
        if group not in text or not kind_line.search(text):
            continue
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            crd = crd_from_manifest(doc, rel) if isinstance(doc, dict) else None
            if crd is not None and crd.group == group and crd.kind == kind:
                out.append(crd)
    return tuple(out)


@dataclass
class CrdIndex:
    crds: list[Crd]

    def for_kind(self, group: str, kind: str) -> list[Crd]:
        return [c for c in self.crds if c.group == group and c.kind == kind]


def crd_index(objects: Iterable[K8sObject]) -> CrdIndex:
    crds = []
    for obj in objects:
        if obj.api_version.startswith("apiextensions.k8s.io/") and obj.kind == "CustomResourceDefinition":
            crd = crd_from_manifest(obj.manifest, obj.origin, obj)
            if crd is not None:
                crds.append(crd)
    return CrdIndex(crds)


def _bool_exclusive(node: dict[str, Any], bound: str, exclusive: str) -> None:
    # OpenAPI 3.0 spells an exclusive bound as a boolean beside the bound; JSON Schema 2020-12 as a number.
    flag = node.get(exclusive)
    if isinstance(flag, bool):
        del node[exclusive]
        if flag and bound in node:
            node[exclusive] = node.pop(bound)


def structural_to_jsonschema(node: Any, *, root: bool = False) -> Any:
    """A CRD's structural OpenAPI v3 schema as the JSON Schema 2020-12 the API server effectively applies.

    - fields a schema does not declare are pruned by the API server (or rejected under strict field
      validation) unless `x-kubernetes-preserve-unknown-fields`: additionalProperties false;
    - `x-kubernetes-int-or-string`: integer or string; `nullable`: null allowed;
    - a required field with a `default` is defaulted before validation, so it never counts as missing;
    - `x-kubernetes-embedded-resource` objects always accept apiVersion, kind and metadata;
    - CEL rules (`x-kubernetes-validations`) are not evaluated.
    """
    return _structural_node(node, root=root, child=structural_to_jsonschema)


def _as_is(node: Any) -> Any:
    return node


def _structural_node(node: Any, *, root: bool = False, child: Convert = _as_is) -> Any:
    """One node of `structural_to_jsonschema`: its own keywords converted, its child schemas through `child`.

    With `child` left as is, the children stay structural and are converted when the fast check first
    compiles them (`SchemaValidator` via `OpenAPISchemas.structural_validator`); the schemas this function
    adds are written in structural form too, so that either way each node is converted exactly once.
    """
    if isinstance(node, list):
        return [child(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: child(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = child(value)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [child(v) for v in value]
        elif key in ("description", "example", "x-kubernetes-validations", "default", "format", "$schema", "id"):
            continue
        else:
            out[key] = copy.deepcopy(value) if isinstance(value, dict | list) else value
    if isinstance(out.get("pattern"), str):
        pattern = _python_pattern(out["pattern"])
        if pattern is None:
            del out["pattern"]
        elif pattern != out["pattern"]:
            out[_UPSTREAM_PATTERN] = out["pattern"]  # what findings quote: the CRD's own spelling
            out["pattern"] = pattern
    _bool_exclusive(out, "minimum", "exclusiveMinimum")
    _bool_exclusive(out, "maximum", "exclusiveMaximum")
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        if "anyOf" not in out and "oneOf" not in out:
            out["type"] = ["integer", "string"]
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
    if isinstance(out.get("required"), list):
        out["required"] = [k for k in out["required"] if not (isinstance(props.get(k), dict) and "default" in props[k])]
        if not out["required"]:
            del out["required"]
    preserve = out.pop("x-kubernetes-preserve-unknown-fields", False)
    embedded = out.pop("x-kubernetes-embedded-resource", False)
    if embedded:
        out.setdefault("properties", {})
        for k in ("apiVersion", "kind"):
            out["properties"].setdefault(k, child({"type": "string"}))
        out["properties"].setdefault(
            "metadata", child({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
        )
    is_object = out.get("type") == "object" or "properties" in out
    if is_object and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if root:
        out.setdefault("properties", {})
        out["properties"]["apiVersion"] = child({"type": "string"})
        out["properties"]["kind"] = child({"type": "string"})
        # The API server validates a custom resource's metadata as ObjectMeta whatever the CRD says of it.
        out["properties"]["metadata"] = child({"$ref": _OBJECT_META})
    return out


def _python_pattern(pattern: str) -> str | None:
    """A CRD `pattern` (Go RE2 syntax, as the API server runs it) in a form Python's re compiles, or None.

    RE2 accepts inline flags anywhere (prometheus-operator writes `^(?i)(abort|warn)?$`); Python wants them at
    the very start, which for a leading `^` means the same thing. A pattern Python cannot express is not
    checked rather than crashing the check.
    """
    candidates = [pattern]
    m = re.match(r"^\^(\(\?[aiLmsux]+\))(.*)$", pattern, re.DOTALL)
    if m:
        candidates.append(f"{m.group(1)}^{m.group(2)}")
    for candidate in candidates:
        try:
            re.compile(candidate)
        except re.error:
            continue
        return candidate
    return None


def _drop_nulls(value: Any) -> Any:
    # The API server prunes null fields of a custom resource before it validates (and before defaulting).
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _cr_validator(crd: Crd, version: str, schemas: OpenAPISchemas) -> SchemaValidator | None:
    tree = crd.versions.get(version)
    if tree is None:
        return None
    if version not in crd.validators:
        crd.validators[version] = schemas.structural_validator(tree)
    return crd.validators[version]


# What the Helm check (gpucloud.conformance.helm) leaves in ctx.facts: one entry per release it looked at.
HELM_FACTS_KEY = "helm.releases"
# Releases the Helm check could not render because no pinned chart verifies them (gpucloud.conformance.helm).
HELM_UNVERIFIED_KEY = "helm.unverified"


def _unrendered_releases(ctx: ConformanceContext) -> list[ResourceRecord]:
    """Helm releases/charts whose objects are not in the context, so a CRD they carry may be missing from it.

    A release the Helm check could not render because nothing verifies its chart (outside the lock, another
    version, not vendored: HELM_UNVERIFIED_KEY) and a helm.v3.Chart the offline plan could not expand may install
    any CRD. Otherwise, once the Helm check has rendered anything, a release with no objects failed to render (the
    Helm check reports why): it installs nothing, so a custom resource relying on it does lack its CRD. When
    nothing rendered at all (the Helm check skipped, or no helm binary), the plan's CRDs are not knowable.
    """
    rendered = {d.owner for d in ctx.derived}
    unverified = set(ctx.facts.get(HELM_UNVERIFIED_KEY) or ())
    if HELM_FACTS_KEY in ctx.facts and rendered & set(ctx.facts[HELM_FACTS_KEY]):
        return [
            r
            for r in ctx.plan
            if r.urn in unverified or (r.type.endswith("/v3:Chart") and not ctx.plan.children(r.urn))
        ]
    return [
        r
        for r in ctx.plan
        if r.type.startswith("kubernetes:helm.sh/")
        and r.urn not in rendered
        and not (r.type.endswith("/v3:Chart") and ctx.plan.children(r.urn))
    ]


def _served(crds: Iterable[Crd]) -> str:
    return "; ".join(f"CRD {c.name} serving {', '.join(sorted(c.versions)) or 'nothing'} from {c.origin}" for c in crds)


_CLUSTER_TYPES = (EKS_CLUSTER_TYPE, "eks:index:Cluster")
# CRDs every EKS cluster comes with, installed by the Amazon VPC CNI and the VPC resource controller that EKS
# runs (AWS EKS user guide: custom networking ENIConfig, security groups for pods, network policies). Their
# schemas are not in the vendored bundle, so custom resources of these kinds are taken as served, unchecked.
EKS_BUILTIN_CRDS = {
    ("crd.k8s.amazonaws.com", "ENIConfig"),
    ("vpcresources.k8s.aws", "SecurityGroupPolicy"),
    ("vpcresources.k8s.aws", "CNINode"),
    ("networking.k8s.aws", "PolicyEndpoint"),
}
_PLAN_CRDS = "the plan's CRDs (CustomResourceDefinition resources and the CRDs rendered charts install)"


@register_check(CHECK_CRD)
def check_crd(ctx: ConformanceContext) -> Iterator[Finding]:
    """Custom resources against the CRDs the plan installs; CRDs of one name that disagree on served versions."""
    objects = _context_objects(ctx)
    if not objects:
        return
    try:
        schemas = openapi_schemas(ctx.kubernetes_version)
    except LookupError:
        return  # k8s.schema already says why
    index = crd_index(objects)
    yield from _crd_clashes(index)
    # A plan that creates no cluster (a team stack on the platform's cluster) cannot see the CRDs installed
    # there: a missing CRD is then a warning, and the vendored CRD of that kind stands in for the schema.
    owns_cluster = bool(ctx.plan.of_type(*_CLUSTER_TYPES))
    unrendered: list[ResourceRecord] | None = None
    for obj in objects:
        api_version, kind = obj.api_version, obj.kind
        if not api_version or not kind or schemas.is_builtin_group(api_version) or obj.patch:
            continue
        group, version = obj.group_version
        crds = index.for_kind(group, kind)
        if not crds and (group, kind) in EKS_BUILTIN_CRDS:
            continue
        if not crds:
            if unrendered is None:
                unrendered = _unrendered_releases(ctx)
            yield _missing_crd(obj, group, version, unrendered, owns_cluster)
            if owns_cluster:
                continue
            crds = [c for c in vendored_crds(group, kind) if version in c.versions][:1]
            if not crds:
                continue
        serving = [c for c in crds if version in c.versions]
        if not serving:
            elsewhere = [c for c in vendored_crds(group, kind) if version in c.versions]
            hint = f"; {_served(elsewhere)}" if elsewhere else ""
            yield Finding(
                CHECK_CRD,
                "error",
                obj.urn,
                "apiVersion",
                f"{kind} {obj.name or '(unnamed)'}: {api_version} is not served by the installed "
                f"{', '.join(sorted({c.name for c in crds}))}: the API server rejects the object",
                f"apiVersion one of: {', '.join(sorted({f'{group}/{v}' for c in crds for v in c.versions}))}{hint}",
                _served(crds),
                obj.ref,
            )
            continue
        for crd in serving:
            validator = _cr_validator(crd, version, schemas)
            if validator is None:
                continue
            source = f"CRD {crd.name} {version} from {crd.origin}"
            yield from validate_object(validator, obj, _drop_nulls(obj.manifest), CHECK_CRD, source)


def _missing_crd(
    obj: K8sObject, group: str, version: str, unrendered: list[ResourceRecord], owns_cluster: bool
) -> Finding:
    offered = list(vendored_crds(group, obj.kind))
    where = f"; the vendored upstream bundle has it: {_served(offered)}" if offered else ""
    label = f"{obj.kind} {obj.name or '(unnamed)'}: no CRD for kind {obj.kind} in group {group}"
    expected = f"a CustomResourceDefinition for {obj.kind}.{group} serving {version}, installed by the plan{where}"
    if not owns_cluster:
        expected = f"a CustomResourceDefinition for {obj.kind}.{group} serving {version} in the cluster{where}"
        message = (
            f"{label} in this plan, and the cluster is created elsewhere (no EKS cluster in this plan): make sure "
            "the cluster's owner installs it"
        )
        if any(version in c.versions for c in offered):
            message += "; validated against the vendored CRD instead"
        return Finding(CHECK_CRD, "warning", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)
    if unrendered:
        # A release that was not rendered (the Helm check was skipped or failed) may carry the CRD: say so
        # without calling it missing.
        names = ", ".join(r.name for r in unrendered)
        message = (
            f"undecided: {label} among the plan's objects, and Helm releases were not rendered ({names}): cannot tell "
            "whether one installs it"
        )
        return Finding(CHECK_CRD, "warning", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)
    message = f"{label} is installed by this plan: the API server rejects the object"
    return Finding(CHECK_CRD, "error", obj.urn, "apiVersion", message, expected, _PLAN_CRDS, obj.ref)


def _crd_clashes(index: CrdIndex) -> Iterator[Finding]:
    by_name: dict[str, list[Crd]] = {}
    for crd in index.crds:
        by_name.setdefault(crd.name, []).append(crd)
    for name, crds in by_name.items():
        first = crds[0]
        for other in crds[1:]:
            if set(other.versions) == set(first.versions) or other.obj is None:
                continue
            yield Finding(
                CHECK_CRD,
                "error",
                other.obj.urn,
                "spec.versions",
                f"CRD {name} is installed twice with different served versions: "
                f"{', '.join(sorted(first.versions)) or 'none'} by {first.origin}, "
                f"{', '.join(sorted(other.versions)) or 'none'} by {other.origin}; a cluster holds one CRD "
                "per name, so one install replaces or fails against the other",
                "one CRD per name: install only one of them",
                f"{_served([first, other])}",
                other.obj.ref,
            )


__all__ = [
    "CHECK_CRD",
    "CHECK_SCHEMA",
    "Crd",
    "K8sObject",
    "OpenAPISchemas",
    "check_crd",
    "check_schema",
    "collect_objects",
    "crd_from_manifest",
    "crd_index",
    "json_path",
    "openapi_schemas",
    "plan_object",
    "structural_to_jsonschema",
    "vendored_crds",
]
