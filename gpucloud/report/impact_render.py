"""The change-impact section (`change_impact`, from `gpucloud plan --compare BASE.json`) as text lines, as
markdown for the pull-request comment, as a SARIF run (sarif.py appends it) and as the HTML page's section
(visual.py). Plain strings and dicts: the renderers put them in their own output."""

from __future__ import annotations

import hashlib
import html
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


IMPACT_URI = "https://github.com/gpucloud/gpucloud/blob/main/docs/change-impact.md"
# One rule per kind of finding; a code-scanning view groups alerts by rule.
_RULES = (
    ("impact/data-replaced", "A data-holding resource is replaced or deleted: its data does not move (blocking).",
     "error", "#data-replaced-or-deleted"),
    ("impact/gpu-pool-disrupted", "A GPU pool's nodes are replaced, drained or removed by the change.",
     "warning", "#disruption-per-pool"),
    ("impact/undecided", "A changed resource whose type has no replace semantics: update or replace undecided.",
     "note", "#what-it-reports"),
)  # fmt: skip


def _location(urn: str, artifact_uri: str) -> dict[str, Any]:
    return {
        "physicalLocation": {"artifactLocation": {"uri": artifact_uri}, "region": {"startLine": 1}},
        "logicalLocations": [{"name": urn.rsplit("::", 1)[-1], "fullyQualifiedName": urn, "kind": "resource"}],
    }


def impact_sarif_run(ci: Mapping[str, Any], stack: str, artifact_uri: str) -> dict[str, Any]:
    """A SARIF run for the change impact: data replaced or deleted (error while blocking, note once declared),
    GPU pools replaced, drained or removed (warning; a pool that only may be disrupted is a note), and changed
    resources whose update-or-replace is undecided (note)."""
    index = {rule: i for i, (rule, *_rest) in enumerate(_RULES)}
    results: list[dict[str, Any]] = []

    def add(rule: str, level: str, urn: str, text: str, props: Mapping[str, Any]) -> None:
        fingerprint = hashlib.sha256(f"{rule}\0{urn}\0{text}".encode()).hexdigest()[:32]
        results.append(
            {
                "ruleId": rule,
                "ruleIndex": index[rule],
                "level": level,
                "message": {"text": text},
                "locations": [_location(urn, artifact_uri)],
                "partialFingerprints": {"gpucloudImpact/v1": fingerprint},
                "properties": {**props, "urn": urn, "stack": stack},
            }
        )

    for f in ci.get("data") or []:
        props = {k: f.get(k) for k in ("type", "change", "forced_by", "declared", "blocking")}
        add("impact/data-replaced", "error" if f.get("blocking") else "note", str(f.get("urn", "")),
            str(f.get("message", "")), props)  # fmt: skip
    d = ci.get("disruption") or {}
    for p in d.get("pools") or []:
        if not p.get("gpus_per_node"):
            continue  # CPU pools: nothing here is GPU capacity at risk
        nodes, gpus, hours = _pool_cells(p)
        action = str(p.get("action", ""))
        text = f"pool {p.get('name')}: {action}, {nodes} nodes ({gpus}), {hours} GPU-hours at risk: {p.get('reason')}"
        props = {k: p.get(k) for k in ("type", "action", "nodes", "gpus_per_node", "gpu_hours_at_risk")}
        add("impact/gpu-pool-disrupted", "note" if action.startswith("may") else "warning", str(p.get("urn", "")),
            text, props)  # fmt: skip
    for c in ci.get("changes") or []:
        if c.get("undecided"):
            add("impact/undecided", "note", str(c.get("urn", "")), f"{c.get('name')}: {c.get('undecided')}",
                {"type": c.get("type"), "paths": list(c.get("paths") or [])})  # fmt: skip
    base = ci.get("base") or {}
    return {
        "tool": {
            "driver": {
                "name": "gpucloud-change-impact",
                "informationUri": IMPACT_URI,
                "rules": [
                    {
                        "id": rule,
                        "name": rule,
                        "shortDescription": {"text": text},
                        "helpUri": f"{IMPACT_URI}{anchor}",
                        "defaultConfiguration": {"level": level},
                    }
                    for rule, text, level, anchor in _RULES
                ],
            }
        },
        "automationDetails": {"id": f"gpucloud-impact/{stack}/"},
        "results": results,
        "properties": {
            "base": f"{base.get('project')}/{base.get('stack')}",
            "summary": dict(ci.get("summary") or {}),
            "gpu_nodes": int(d.get("gpu_nodes", 0) or 0),
            "gpu_hours_at_risk": float(d.get("gpu_hours_at_risk", 0.0) or 0.0),
            "blocking": int(ci.get("blocking", 0)),
        },
    }


def impact_html(ci: Mapping[str, Any] | None) -> list[str]:
    """The HTML page's change-impact section: the summary line, data findings, pools and resource changes."""
    if not ci:
        return []

    def table(headers: list[str], rows: list[list[Any]]) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
        return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    blocking = int(ci.get("blocking", 0))
    verdict = '<span class="fail">FAIL</span>' if blocking else '<span class="pass">PASS</span>'
    out = ["<h2>Change impact</h2>", f"<p>{verdict} {html.escape(summary_line(ci))}</p>"]
    data = [[("blocking" if f.get("blocking") else "declared"), f.get("name"), f.get("change"),
              ", ".join(f.get("forced_by") or []) or "-", f.get("message")] for f in ci.get("data") or []]  # fmt: skip
    if data:
        out += ["<h3>Data replaced or deleted</h3>", table(["data", "resource", "change", "forced by", "why"], data)]
    d = ci.get("disruption") or {}
    pools = [[p.get("name"), p.get("action"), *_pool_cells(p), p.get("reason")] for p in d.get("pools") or []]
    if pools:
        headers = ["pool", "action", "nodes", "GPU nodes", "GPU-hours at risk", "why"]
        out += ["<h3>GPU pools</h3>", table(headers, pools),
                f"<p>GPU-hours at risk: {html.escape(str(d.get('assumption')))}.</p>"]  # fmt: skip
    changes = [[c.get("change"), c.get("name"), c.get("type"), _why(c)] for c in _sorted_changes(ci)]
    out += ["<h3>Resource changes</h3>", table(["change", "resource", "type", "why"], changes) if changes
            else "<p>None.</p>"]  # fmt: skip
    return out
