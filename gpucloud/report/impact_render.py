"""The change-impact section (`change_impact`, from `gpucloud plan --compare BASE.json`) as text lines and as
markdown for the pull-request comment. Plain strings: render.py prints them in its own console."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_ORDER = ("replace", "delete", "update", "create")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def summary_line(ci: Mapping[str, Any]) -> str:
    s = ci.get("summary") or {}
    base = ci.get("base") or {}
    d = ci.get("disruption") or {}
    return (
        f"Change impact against {base.get('project')}/{base.get('stack')}: {_n(int(s.get('changes', 0)), 'change')} "
        f"({s.get('create', 0)} create, {s.get('update', 0)} update, {s.get('replace', 0)} replace, "
        f"{s.get('delete', 0)} delete; {s.get('undecided', 0)} undecided), "
        f"{_n(int(d.get('gpu_nodes', 0)), 'GPU node')} drained or replaced, "
        f"{float(d.get('gpu_hours_at_risk', 0.0)):g} GPU-hours at risk, "
        f"{_n(int(ci.get('blocking', 0)), 'blocking data finding')}"
    )


def _why(c: Mapping[str, Any]) -> str:
    parts = []
    if c.get("forced_by"):
        parts.append(f"forced by {', '.join(c['forced_by'])}")
    if c.get("paths"):
        parts.append(f"changed: {', '.join(c['paths'][:6])}{' ...' if len(c['paths']) > 6 else ''}")
    if c.get("may_change"):
        parts.append(f"may change (unknown at preview): {', '.join(c['may_change'][:4])}")
    if c.get("may_replace_by"):
        parts.append(f"replaced if {', '.join(c['may_replace_by'])} changes")
    if c.get("replace_if"):
        parts.append(f"replaced if {'; '.join(c['replace_if'])}")
    if c.get("undecided"):
        parts.append(str(c["undecided"]))
    return "; ".join(parts)


def _sorted_changes(ci: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rank = {k: i for i, k in enumerate(_ORDER)}
    return sorted(ci.get("changes") or [], key=lambda c: (rank.get(str(c.get("change")), 9), str(c.get("name"))))


def _pool_cells(p: Mapping[str, Any]) -> tuple[str, str, str]:
    nodes = "unknown" if p.get("nodes") is None else str(p["nodes"])
    gpus = "unknown" if p.get("gpu_nodes") is None else f"{p['gpu_nodes']} x {p.get('gpus_per_node', 0)} GPUs"
    hours = "unknown" if p.get("gpu_hours_at_risk") is None else f"{float(p['gpu_hours_at_risk']):g}"
    return nodes, gpus, hours


def impact_text(ci: Mapping[str, Any] | None) -> list[str]:
    if not ci:
        return []
    lines = [summary_line(ci)]
    for c in _sorted_changes(ci):
        lines.append(f"  {c.get('change'):<8} {c.get('name')} ({c.get('type')}){': ' + _why(c) if _why(c) else ''}")
    d = ci.get("disruption") or {}
    for p in d.get("pools") or []:
        nodes, gpus, hours = _pool_cells(p)
        lines.append(
            f"  pool {p.get('name')}: {p.get('action')}, {nodes} nodes ({gpus}), {hours} GPU-hours at risk: "
            f"{p.get('reason')}"
        )
    if d.get("pools"):
        lines.append(f"  GPU-hours at risk assume: {d.get('assumption')}")
    for f in ci.get("data") or []:
        lines.append(f"  {'BLOCKING' if f.get('blocking') else 'declared'} data: {f.get('message')}")
    return lines


def impact_markdown(ci: Mapping[str, Any] | None) -> list[str]:
    if not ci:
        return []
    blocking = int(ci.get("blocking", 0))
    lines = [f"{'❌' if blocking else '✅'} **{summary_line(ci)}**", ""]
    data = ci.get("data") or []
    if data:
        lines += ["| data | resource | change | forced by | |", "|---|---|---|---|---|"]
        for f in data:
            lines.append(
                f"| {'❌ blocking' if f.get('blocking') else 'declared'} | `{f.get('name')}` | {f.get('change')} | "
                f"{', '.join(f.get('forced_by') or []) or '-'} | {_cell(f.get('message'))} |"
            )
        lines.append("")
    d = ci.get("disruption") or {}
    if d.get("pools"):
        lines += ["| pool | action | nodes | GPU nodes | GPU-hours at risk | why |", "|---|---|--:|--:|--:|---|"]
        for p in d["pools"]:
            nodes, gpus, hours = _pool_cells(p)
            lines.append(
                f"| `{p.get('name')}` | {p.get('action')} | {nodes} | {gpus} | {hours} | {_cell(p.get('reason'))} |"
            )
        lines += ["", f"_GPU-hours at risk: {d.get('assumption')}._", ""]
    changes = _sorted_changes(ci)
    if changes:
        body = ["| change | resource | type | why |", "|---|---|---|---|"]
        body += [f"| {c.get('change')} | `{c.get('name')}` | `{c.get('type')}` | {_cell(_why(c))} |" for c in changes]
        open_ = any(c.get("change") in ("replace", "delete") for c in changes)
        lines += [f"<details{' open' if open_ else ''}><summary>Resource changes ({len(changes)})</summary>", "",
                  *body, "", "</details>", ""]  # fmt: skip
    return lines


def _cell(value: Any) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")
