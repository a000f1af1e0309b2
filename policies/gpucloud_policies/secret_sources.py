"""Where a plan keeps values a reader could see in plain text, for the secret guardrails (readers/secrets.py
judges each value).

- user data: per pool from the fleet model (``gpucloud.fleet.pools``: every launch path, with the user data it
  boots with, decoded), and the launch templates / configurations no pool of the plan uses, decoded the same way;
- Kubernetes: container ``env[].value`` of every pod spec the finder finds (k8s.py), ConfigMap ``data`` and
  ``binaryData``;
- SSM parameters that are not ``SecureString``, Lambda function environments, ECS task definitions'
  container environments;
- every other type of the surface inventory (gpucloud.surface) whose secrets surface has a plain-text store:
  the inventory's own property paths ending in environment maps, variables, parameters, user data, connection
  strings or object data (``STORES``), walked by readers/paths.py (``inventory_values``). The other secrets paths
  are the credential itself (``masterPassword``, ``privateKey``, ``accessToken``): a value there is expected to be
  a credential, AWS keeps it write-only, and a policy cannot tell a literal from a Pulumi secret (pulumi-policy
  1.21.0 policy.py hands validate() secrets as plaintext: ``deserialize_properties`` without ``proxy_secrets``),
  so those pairs are out of scope with that reason in scope.json.

Each value comes with the resource a finding goes to and the field it sits in. An unknown value is returned as
unknown (``known`` false), so a guardrail can mark the resource undecided instead of passing it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import fleet, surface
from gpucloud.fleet import types as T
from gpucloud.fleet.values import decode_user_data

from . import coverage
from .base import UnknownValueError, get, has, items, keys, maps, plain, text
from .k8s import derived, objects, pods
from .readers import paths

LAUNCH_CONFIG = T.LAUNCH_CONFIGURATION
SSM_PARAMETER = "aws:ssm/parameter:Parameter"
LAMBDA_FUNCTION = "aws:lambda/function:Function"
ECS_TASK = "aws:ecs/taskDefinition:TaskDefinition"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
USER_DATA_TYPES = (T.LAUNCH_TEMPLATE, LAUNCH_CONFIG, T.INSTANCE, T.SPOT_INSTANCE_REQUEST, *T.EC2_NODE_CLASSES)
OTHER_TYPES = (SSM_PARAMETER, LAMBDA_FUNCTION, ECS_TASK, CONFIG_MAP)
# Leaf names of the secrets surface (gpucloud/surface/classify.py ``_SECRETS``) that hold values stored and shown
# in plain text (described by the API, printed in consoles, read from IMDS), where a credential is a leak.
STORES = re.compile(
    r"^(?:userData|userDataBase64|environment|environmentVariables|variables|parameters|connectionString|data|"
    r"binaryData)$"
)


@dataclass(frozen=True)
class Value:
    urn: str
    field: str
    value: str | None  # None when unknown at preview
    name: str = ""  # the variable's name where it has one (env NAME=value)

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def scanned(self) -> str:
        """The text the detector reads: ``NAME=value`` for named values, so a secret-looking name counts."""
        return f"{self.name}={self.value}" if self.name and self.value is not None else self.value or ""


def _has_user_data(props: Any) -> bool:
    return has(props, "userData") or has(props, "userDataBase64") or has(get(props, "spec"), "userData")


def _record(r: Any) -> dict[str, Any]:
    deps = {k: [d.urn for d in v] for k, v in (r.property_dependencies or {}).items()}
    return {
        "urn": r.urn,
        "type": r.resource_type,
        "name": r.name,
        "inputs": plain(r.props),
        "propertyDependencies": deps,
    }


def user_data(resources: list[Any]) -> Iterator[Value]:
    """The user data each pool boots with, then that of templates and configurations no pool uses."""
    carriers = [r for r in resources if r.resource_type in USER_DATA_TYPES]
    manifests = [m for _, _, m in derived() or []]
    # No template, configuration, instance or node class carries user data: no pool boots with any (the fleet,
    # the expensive part, is not built).
    if not any(_has_user_data(r.props) for r in carriers) and not any(
        isinstance(m.get("spec"), Mapping) and "userData" in m["spec"] for m in manifests
    ):
        return
    records = [_record(r) for r in resources if r.resource_type in (*fleet_types(), *USER_DATA_TYPES)]
    used: set[str] = set()
    for pool in fleet.pools(records, manifests):
        used.update(u for u in (pool.launch_template, pool.launch_configuration, pool.urn) if u)
        if not pool.user_data_known:
            yield Value(pool.urn, "userData", None)
        elif pool.user_data:
            yield Value(pool.urn, "userData", pool.user_data)
    for rec in records:
        if rec["type"] not in (T.LAUNCH_TEMPLATE, LAUNCH_CONFIG) or rec["urn"] in used:
            continue
        for key in ("userData", "userDataBase64"):
            raw = rec["inputs"].get(key)
            if raw is None:
                continue
            decoded = decode_user_data(raw)
            yield Value(rec["urn"], key, decoded)


# The user data of the plan last judged, shared by the two guardrails that read it (building the fleet is the
# expensive part). Keyed by the very resources list the engine hands both stack policies, held alive here so its
# identity cannot be reused by another plan's list while cached; a different list simply recomputes.
_LAST: dict[str, Any] = {}


def plan_user_data(resources: Any) -> list[Value]:
    """``user_data`` for a stack policy's ``args.resources``, computed once per plan."""
    if _LAST.get("of") is not resources:
        _LAST.clear()
        _LAST.update(of=resources, values=list(user_data(list(resources))))
    found: list[Value] = _LAST["values"]
    return found


def fleet_types() -> tuple[str, ...]:
    return (*T.POOL_TYPES, *T.KARPENTER_NODEPOOLS)


def kubernetes(resources: list[Any]) -> Iterator[Value]:
    for obj in objects(resources):
        if obj.kind == "ConfigMap":
            for section in ("data", "binaryData"):
                m = get(obj.body, section)
                for k in keys(m):
                    try:
                        v = m[k]
                    except UnknownValueError:
                        yield Value(obj.urn, f"{obj.ref} {section}.{k}", None)
                        continue
                    if isinstance(v, str):
                        yield Value(obj.urn, f"{obj.ref} {section}.{k}", v, k if section == "data" else "")
            continue
        try:
            found = pods(obj)
        except UnknownValueError:
            continue
        for pod in found:
            for lst in ("containers", "initContainers", "ephemeralContainers"):
                for i, c in enumerate(maps(get(pod.spec, lst))):
                    for e in maps(get(c, "env")):
                        try:
                            v = get(e, "value")
                        except UnknownValueError:
                            yield Value(obj.urn, f"{obj.ref} {pod.path}.{lst}[{i}].env", None)
                            continue
                        if isinstance(v, str):
                            where = f"{obj.ref} {pod.path}.{lst}[{i}].env {text(get(e, 'name'))}"
                            yield Value(obj.urn, where, v, text(get(e, "name")))


def _env_pairs(container: Any) -> Iterator[tuple[str, Any]]:
    for e in items(get(container, "environment")):
        if isinstance(e, Mapping):
            yield text(e.get("name")), e.get("value")


def _values(urn: str, holder: Any, fields: dict[str, str], name: str | None = None) -> Iterator[Value]:
    """``holder[key]`` for each key of ``fields`` (key -> the finding's field), each with its variable name (the
    key where ``name`` is None); an unknown value is an unknown Value for its field alone, so a value computed at
    preview never hides the known ones beside it (an unknown Lambda variable before a plaintext token)."""
    for key, field in fields.items():
        try:
            v = get(holder, key)
        except UnknownValueError:
            yield Value(urn, field, None)
            continue
        if isinstance(v, str):
            yield Value(urn, field, v, key if name is None else name)


def _parameter_name(r: Any) -> str:
    try:
        return text(get(r.props, "name")) or r.name
    except UnknownValueError:
        return r.name  # a computed name: the logical name still says what the parameter holds


def services(resources: list[Any]) -> Iterator[Value]:
    for r in resources:
        t = r.resource_type
        field = "value"  # the field a whole-resource unknown (the type, the environment block) is reported on
        try:
            if t == SSM_PARAMETER:
                field = "type"
                if text(get(r.props, "type")) == "SecureString":
                    continue
                fields = {"value": "value", "insecureValue": "insecureValue"}
                yield from _values(r.urn, r.props, fields, _parameter_name(r))
            elif t == LAMBDA_FUNCTION:
                field = "environment.variables"
                env = get(r.props, "environment", "variables")
                yield from _values(r.urn, env, {k: f"environment.variables.{k}" for k in keys(env)})
            elif t == ECS_TASK:
                field = "containerDefinitions"
                raw = get(r.props, "containerDefinitions")
                defs = json.loads(raw) if isinstance(raw, str) else plain(raw)
                for i, c in enumerate(defs if isinstance(defs, list) else []):
                    for name, v in _env_pairs(c):
                        if isinstance(v, str):
                            yield Value(r.urn, f"containerDefinitions[{i}].environment {name}", v, name)
        except UnknownValueError:
            yield Value(r.urn, field, None)
        except ValueError:
            continue  # containerDefinitions that are not JSON: ECS rejects them, nothing a reader would see


def all_values(resources: Any) -> Iterator[Value]:
    yield from plan_user_data(resources)
    resources = list(resources)
    yield from kubernetes(resources)
    yield from services(resources)
    yield from inventory_values(resources)


def store_paths(token: str) -> list[str]:
    """The inventory's secrets paths of a type that end in a plain-text store (``STORES``)."""
    return [p for p in surface.types().get(token, {}).get("secrets", []) if STORES.match(p.rsplit(".", 1)[-1])]


@functools.cache
def inventory_types() -> frozenset[str]:
    """Types read by ``inventory_values``: every inventory type with a plain-text store on its secrets surface,
    except those a dedicated reader above reads and those the scope table puts out of scope (a Secret)."""
    dedicated = {*USER_DATA_TYPES, *fleet_types(), *OTHER_TYPES}
    table = coverage.scope()
    return frozenset(
        t
        for t in surface.types()
        if t not in dedicated
        and store_paths(t)
        and not table.get(t, {}).get("secrets", coverage.NOT_YET_READ).startswith("out of scope")
    )


def _token(manifest: Mapping[str, Any]) -> str:
    api, kind = text(manifest.get("apiVersion")), text(manifest.get("kind"))
    return f"kubernetes:{api if '/' in api else 'core/' + api}:{kind}" if api and kind else ""


def _store_values(urn: str, token: str, props: Any, label: str = "") -> Iterator[Value]:
    for path in store_paths(token):
        for where, value in paths.values(props, path):
            for place, name, v in paths.strings(value, where, ""):
                # A whole-value store (user data, a connection string) is scanned as written, so its encodings
                # decode; an entry of a map or a name/value list is scanned as NAME=value.
                yield Value(urn, f"{label}{place}", v, name)


def inventory_values(resources: list[Any]) -> Iterator[Value]:
    """The plain-text stores of every type in ``inventory_types``, registered or rendered by a chart."""
    wanted = inventory_types()
    for r in resources:
        if r.resource_type in wanted:
            yield from _store_values(r.urn, r.resource_type, r.props)
    for owner, source, manifest in derived() or []:
        token = _token(manifest)
        if token in wanted:
            meta = manifest.get("metadata")
            name = text(meta.get("name")) if isinstance(meta, Mapping) else ""
            label = " ".join(x for x in (text(manifest.get("kind")), name) if x)
            yield from _store_values(owner, token, manifest, f"{label} (from {source}) ")
