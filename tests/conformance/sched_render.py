"""Test helper: the objects the plan's helm.v3.Releases render from the vendored charts, as DerivedObjects.

A stand-in for the Helm derivation check, so the scheduling tests read realistic chart output (real
`helm template` of the pinned chart with the release's planned values, unknowns as placeholder strings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpucloud.charts.helm import HelmError, helm_template
from gpucloud.conformance import DerivedObject
from gpucloud.plan.model import Plan, ResourceRecord, is_unknown

CHARTS = Path(__file__).resolve().parents[2] / "vendor" / "upstream" / "charts"


def _placeholders(value: Any, path: str = "") -> Any:
    if is_unknown(value):
        return f"placeholder-{path.rsplit('.', 1)[-1] or 'value'}"
    if isinstance(value, dict):
        return {k: _placeholders(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_placeholders(v, path) for v in value]
    return value


def chart_dir(r: ResourceRecord) -> Path | None:
    chart = str(r.inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
    d = CHARTS / f"{chart}-{r.inputs.get('version')}"
    return d if d.is_dir() else None


def render_release(r: ResourceRecord, kube_version: str = "1.34.0") -> list[DerivedObject]:
    d = chart_dir(r)
    if d is None:
        return []
    name = r.inputs.get("name")
    release = str(name) if isinstance(name, str) and not is_unknown(name) else r.name[:40]
    docs = helm_template(
        d,
        release=release,
        namespace=str(r.inputs.get("namespace") or "default"),
        values=_placeholders(r.inputs.get("values") or {}),
        kube_version=kube_version,
    )
    return [DerivedObject(r.urn, f"chart {d.name.rsplit('-', 1)[0]}@{r.inputs.get('version')}", m) for m in docs]


def render_plan(plan: Plan, failures: list[str] | None = None) -> list[DerivedObject]:
    """Every renderable Release; a chart Helm refuses is left out (and named in `failures`)."""
    out: list[DerivedObject] = []
    for r in plan.of_type("kubernetes:helm.sh/v3:Release"):
        try:
            out += render_release(r)
        except HelmError as exc:
            if failures is not None:
                failures.append(f"{r.name}: {str(exc)[:200]}")
    return out
