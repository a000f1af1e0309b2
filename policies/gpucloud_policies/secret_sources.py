"""Where a plan keeps values a reader could see in plain text, for the secret guardrails (readers/secrets.py
judges each value).

- user data: per pool from the fleet model (``gpucloud.fleet.pools``: every launch path, with the user data it
  boots with, decoded), and the launch templates / configurations no pool of the plan uses, decoded the same way;
- Kubernetes: container ``env[].value`` of every pod spec the finder finds (k8s.py), ConfigMap ``data`` and
  ``binaryData``;
- SSM parameters that are not ``SecureString``, Lambda function environments, ECS task definitions'
  container environments.

Each value comes with the resource a finding goes to and the field it sits in. An unknown value is returned as
unknown (``known`` false), so a guardrail can mark the resource undecided instead of passing it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import fleet
from gpucloud.fleet import types as T
from gpucloud.fleet.values import decode_user_data

from .base import UnknownValueError, get, has, items, keys, maps, plain, text
from .k8s import derived, objects, pods

LAUNCH_CONFIG = T.LAUNCH_CONFIGURATION
SSM_PARAMETER = "aws:ssm/parameter:Parameter"
LAMBDA_FUNCTION = "aws:lambda/function:Function"
ECS_TASK = "aws:ecs/taskDefinition:TaskDefinition"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
USER_DATA_TYPES = (T.LAUNCH_TEMPLATE, LAUNCH_CONFIG, T.INSTANCE, T.SPOT_INSTANCE_REQUEST, *T.EC2_NODE_CLASSES)
OTHER_TYPES = (SSM_PARAMETER, LAMBDA_FUNCTION, ECS_TASK, CONFIG_MAP)


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
