"""Pictures of a plan report: the platform (cluster, pools, storage, interruption queues) and its cost split, as
Mermaid for the PR comment (GitHub renders it) and as inline SVG in the self-contained HTML report.

Everything is derived from the report itself (resources, cost items, the scheduling view of the pools), so any
Pulumi program gets the same pictures, not only gpucloud's own components.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpucloud.cost import rate_basis, rate_label
from gpucloud.fleet import types as T
from gpucloud.report.impact_render import impact_html

STACK_TYPE = "pulumi:pulumi:Stack"
CLUSTER_TYPES = (T.EKS_CLUSTER,)
STORAGE_TYPES = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": "FSx for Lustre",
    "aws:fsx/ontapFileSystem:OntapFileSystem": "FSx for ONTAP",
    "aws:fsx/openZfsFileSystem:OpenZfsFileSystem": "FSx for OpenZFS",
    "aws:efs/fileSystem:FileSystem": "EFS",
    "aws:s3/bucket:Bucket": "S3 bucket",
    "aws:s3/bucketV2:BucketV2": "S3 bucket",
}
QUEUE_TYPE = "aws:sqs/queue:Queue"
# Cost items' pricing values grouped into the capacity mix shown per pool.
MIX_ORDER = ("on-demand", "reserved", "capacity-block", "spot")


@dataclass
class Pool:
    """One place GPU (or system) nodes come from, as the scheduler sees it, with what the plan says it costs."""

    name: str
    component: str
    kind: str
    instance_types: list[str]
    nodes_min: int
    nodes_max: int
    gpus_per_node: int
    mix: dict[str, float] = field(default_factory=dict)
    monthly: float = 0.0

    @property
    def gpus_max(self) -> int:
        return self.gpus_per_node * self.nodes_max


@dataclass
class PlatformModel:
    clusters: list[str]
    pools: list[Pool]
    storage: list[tuple[str, str]]
    queues: list[str]
    cost_split: list[tuple[str, float]]


def _gpus_per_node(instance_types: list[str]) -> int:
    from gpucloud.catalog import get_catalog

    counts = []
    for t in instance_types:
        spec = get_catalog().find(t)
        counts.append(spec.accelerator_count if spec is not None else 0)
    # A pool that admits several types is drawn with its smallest node: the figure is a floor, not a promise.
    return min(counts) if counts else 0


def outermost_component(by_urn: Mapping[str, Mapping[str, Any]], urn: str) -> Mapping[str, Any] | None:
    """The outermost component (not the stack) above a resource, or None for a resource at the top."""
    node = by_urn.get(urn)
    top = None
    while node is not None:
        if not node.get("custom") and node.get("type") != STACK_TYPE:
            top = node
        parent = node.get("parent")
        node = by_urn.get(parent) if parent else None
    return top


def platform_model(report: Mapping[str, Any]) -> PlatformModel:
    resources = report.get("resources") or []
    by_urn = {r["urn"]: r for r in resources}
    items: dict[str, list[Mapping[str, Any]]] = {}
    for i in (report.get("cost") or {}).get("items") or []:
        items.setdefault(str(i.get("urn")), []).append(i)
    pools = []
    for p in (report.get("conformance") or {}).get("pools") or []:
        urn = str(p.get("urn") or "")
        top = outermost_component(by_urn, urn)
        mine = items.get(urn) or []
        # A pool's items are its nodes (priced by market) and their volumes (storage): the mix counts nodes.
        mix: dict[str, float] = {}
        for item in mine:
            pricing = str(item.get("pricing") or "")
            if pricing and pricing != "storage" and item.get("instance_type"):
                mix[pricing] = mix.get(pricing, 0.0) + float(item.get("quantity") or 0)
        types = [str(t) for t in p.get("instance_types") or []]
        pools.append(
            Pool(
                name=str(p.get("pool")),
                component=str(top["name"]) if top is not None else str(p.get("pool")),
                kind=str(p.get("kind")),
                instance_types=types,
                nodes_min=int(p.get("min") or 0),
                nodes_max=int(p.get("max") or 0),
                gpus_per_node=_gpus_per_node(types),
                mix={k: v for k, v in mix.items() if v},
                monthly=round(sum(float(i.get("monthly") or 0.0) for i in mine), 2),
            )
        )
    clusters = [str(r["name"]) for r in resources if r.get("type") in CLUSTER_TYPES]
    storage = [(str(r["name"]), STORAGE_TYPES[r["type"]]) for r in resources if r.get("type") in STORAGE_TYPES]
    queues = [str(r["name"]) for r in resources if r.get("type") == QUEUE_TYPE]
    return PlatformModel(clusters, pools, storage, queues, cost_split(report))


def cost_by_component(report: Mapping[str, Any]) -> list[tuple[str, str, float, float]]:
    """Items summed per top-level component (a pool, the network ...): (name, type, monthly, ceiling).

    Resources outside any component are grouped under their own name.
    """
    by_urn = {r["urn"]: r for r in report.get("resources") or []}
    groups: dict[str, list[Any]] = {}

    for item in report["cost"].get("items") or []:
        top = outermost_component(by_urn, str(item.get("urn")))
        key = top["urn"] if top is not None else str(item.get("urn"))
        label = (top["name"], top["type"]) if top is not None else (str(item.get("name")), str(item.get("type")))
        entry = groups.setdefault(key, [label[0], label[1], 0.0, 0.0])
        entry[2] += float(item.get("monthly", 0.0))
        entry[3] += float(item.get("monthly_ceiling", 0.0))
    return [(str(n), str(t), round(m, 2), round(c, 2)) for n, t, m, c in groups.values()]


def cost_split(report: Mapping[str, Any], top: int = 8) -> list[tuple[str, float]]:
    """Monthly cost per top-level component, largest first; the tail beyond `top` summed as "other"."""
    rows = sorted(((n, m) for n, _, m, _ in cost_by_component(report) if m > 0), key=lambda r: -r[1])
    head, tail = rows[:top], rows[top:]
    if tail:
        head.append(("other", round(sum(m for _, m in tail), 2)))
    return head


def _component_pools(model: PlatformModel) -> dict[str, list[Pool]]:
    groups: dict[str, list[Pool]] = {}
    for p in model.pools:
        groups.setdefault(p.component, []).append(p)
    return groups


def _mix_text(pools: list[Pool]) -> str:
    total: dict[str, float] = {}
    for p in pools:
        for k, v in p.mix.items():
            total[k] = total.get(k, 0.0) + v
    order = [k for k in MIX_ORDER if k in total] + sorted(k for k in total if k not in MIX_ORDER)
    return " + ".join(f"{total[k]:g} {k}" for k in order) or "0 nodes at desired size"


def _gpu_text(pools: list[Pool]) -> str:
    gpus = sum(p.gpus_max for p in pools)
    return f"up to {gpus} GPUs" if gpus else "no GPUs"


def _mermaid_id(prefix: str, index: int) -> str:
    return f"{prefix}{index}"


def _mermaid_label(*parts: str) -> str:
    """Lines of a quoted Mermaid label: each escaped (quotes and markup as entity codes), joined by <br/>."""
    return "<br/>".join(p.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;") for p in parts)


def mermaid_platform(model: PlatformModel) -> str:
    lines = ["flowchart LR"]
    cluster_ids = []
    for i, name in enumerate(model.clusters or ["cluster"]):
        cid = _mermaid_id("c", i)
        cluster_ids.append(cid)
        lines.append(f'    {cid}(["EKS {_mermaid_label(name)}"])')
    anchor = cluster_ids[0]
    for i, (component, pools) in enumerate(_component_pools(model).items()):
        pid = _mermaid_id("p", i)
        kinds = sorted({p.kind for p in pools})
        types = sorted({t for p in pools for t in p.instance_types})
        label = _mermaid_label(
            component,
            ", ".join(kinds),
            ", ".join(types[:3]) + (" …" if len(types) > 3 else ""),
            _mix_text(pools),
            _gpu_text(pools),
        )
        lines.append(f'    {pid}["{label}"]')
        lines.append(f"    {anchor} --> {pid}")
    for i, (name, kind) in enumerate(model.storage):
        sid = _mermaid_id("s", i)
        lines.append(f'    {sid}[("{_mermaid_label(kind, name)}")]')
        lines.append(f"    {anchor} --- {sid}")
    for i, name in enumerate(model.queues):
        qid = _mermaid_id("q", i)
        lines.append(f'    {qid}>"{_mermaid_label("interruptions", name)}"]')
        lines.append(f"    {qid} -.-> {anchor}")
    return "\n".join(lines)


def mermaid_cost(model: PlatformModel, title: str = "Monthly cost by component (USD)") -> str:
    lines = [f"pie showData title {title}"]
    lines += [f'    "{_mermaid_label(name)}" : {monthly:.2f}' for name, monthly in model.cost_split]
    return "\n".join(lines)


# -- HTML -----------------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1f2328;max-width:1200px}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;
text-align:left;vertical-align:top}th{background:#f6f8fa;cursor:pointer}td.n{text-align:right;font-variant-numeric:
tabular-nums}.pass{color:#1a7f37}.fail{color:#cf222e}.badge{display:inline-block;padding:.1rem .5rem;border-radius:
1rem;background:#f6f8fa;margin-right:.5rem}code{font-size:.85rem;word-break:break-all}svg text{font-family:inherit}
"""

# Sortable tables; errors are recorded in #js-errors so a test (or a reader) can see the page ran cleanly.
_JS = """
(function(){
  var errors=document.getElementById('js-errors');
  window.addEventListener('error',function(e){errors.textContent+=String(e.message)+'\\n';});
  document.querySelectorAll('table.sortable th').forEach(function(th,col){
    th.addEventListener('click',function(){
      var body=th.closest('table').tBodies[0];
      var rows=Array.prototype.slice.call(body.rows);
      var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
      rows.sort(function(a,b){
        var x=a.cells[col].dataset.v||a.cells[col].textContent,y=b.cells[col].dataset.v||b.cells[col].textContent;
        var nx=parseFloat(x),ny=parseFloat(y);
        var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);
        return asc?c:-c;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  document.body.dataset.ready='1';
})();
"""


def _esc(value: Any) -> str:
    return html.escape(str(value if value is not None else ""))


def _money(value: float) -> str:
    return f"${value:,.2f}"


def svg_platform(model: PlatformModel) -> str:
    """Cluster on the left, one box per pool component, storage and queues below: plain SVG, no script."""
    groups = list(_component_pools(model).items())
    box_w, box_h, gap = 300, 92, 14
    right_h = max(1, len(groups)) * (box_h + gap)
    extra = model.storage + [(q, "interruption queue") for q in model.queues]
    height = max(right_h, 120) + (len(extra) * 34 + 20 if extra else 0) + 20
    width = 760
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="platform diagram" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">'
    ]
    cy = max(right_h, 120) / 2
    name = model.clusters[0] if model.clusters else "cluster"
    parts.append(f'<rect x="10" y="{cy - 35}" width="220" height="70" rx="35" fill="#ddf4ff" stroke="#0969da"/>')
    parts.append(f'<text x="120" y="{cy - 4}" text-anchor="middle" font-size="13" font-weight="bold">EKS</text>')
    parts.append(f'<text x="120" y="{cy + 14}" text-anchor="middle" font-size="11">{_esc(name)}</text>')
    for i, (component, pools) in enumerate(groups):
        y = 10 + i * (box_h + gap)
        x = 440
        types = sorted({t for p in pools for t in p.instance_types})
        lines = [
            component,
            ", ".join(sorted({p.kind for p in pools})),
            ", ".join(types[:3]) + (" …" if len(types) > 3 else ""),
            f"{_mix_text(pools)} · {_gpu_text(pools)}",
        ]
        parts.append(f'<line x1="230" y1="{cy}" x2="{x}" y2="{y + box_h / 2}" stroke="#8c959f"/>')
        parts.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="6" fill="#fff8c5" stroke="#9a6700"/>')
        for j, text in enumerate(lines):
            weight = ' font-weight="bold"' if j == 0 else ""
            parts.append(f'<text x="{x + 8}" y="{y + 20 + j * 19}" font-size="11"{weight}>{_esc(text)}</text>')
    base = max(right_h, 120) + 20
    for i, (label, kind) in enumerate(extra):
        y = base + i * 34
        parts.append(f'<rect x="10" y="{y}" width="520" height="26" rx="4" fill="#f6f8fa" stroke="#8c959f"/>')
        parts.append(f'<text x="18" y="{y + 17}" font-size="11">{_esc(kind)}: {_esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_cost(model: PlatformModel) -> str:
    rows = model.cost_split
    width, bar_h = 760, 22
    height = max(1, len(rows)) * (bar_h + 6) + 10
    top = max((m for _, m in rows), default=0.0) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="cost by component" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">'
    ]
    for i, (name, monthly) in enumerate(rows):
        y = 5 + i * (bar_h + 6)
        w = max(1.0, 380 * monthly / top)
        parts.append(f'<text x="0" y="{y + 15}" font-size="11">{_esc(name)}</text>')
        parts.append(f'<rect x="260" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#54aeff"/>')
        parts.append(f'<text x="{266 + w:.1f}" y="{y + 15}" font-size="11">{_esc(_money(monthly))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def provenance_groups(items: list[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """(provenance label, item names) per distinct rate provenance, estimates last: every figure's source."""
    groups: dict[str, list[str]] = {}
    for item in items:
        basis = item.get("rate_basis") or rate_basis(item.get("rate_source"), item.get("rate_as_of"))
        groups.setdefault(rate_label(basis), []).append(str(item.get("name")))
    return sorted(groups.items(), key=lambda kv: (kv[0].startswith("estimate"), kv[0]))


def _table(headers: list[str], rows: list[list[Any]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            if i in numeric and isinstance(value, int | float):
                cells.append(f'<td class="n" data-v="{value}">{_esc(_money(value))}</td>')
            else:
                cells.append(f"<td>{_esc(value)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def render_html(report: Mapping[str, Any]) -> str:
    """One self-contained page (no external fetch): summary, platform diagram, cost chart, findings, pools."""
    model = platform_model(report)
    cost = report.get("cost") or {}
    policies = report.get("policies") or {}
    conformance = report.get("conformance") or {}
    mandatory = int(policies.get("mandatory_violations", 0))
    errors = int(conformance.get("errors", 0))
    title = f"gpucloud plan: {report.get('project')} / {report.get('stack')}"

    def verdict(bad: int) -> str:
        return '<span class="fail">FAIL</span>' if bad else '<span class="pass">PASS</span>'

    findings = [
        [v.get("enforcement"), v.get("policy"), str(v.get("urn", "")).rsplit("::", 1)[-1], v.get("message")]
        for v in policies.get("violations") or []
    ]
    conf_rows = [
        [f.get("severity"), f.get("check"), str(f.get("urn", "")).rsplit("::", 1)[-1], f.get("field"), f.get("message")]
        for f in conformance.get("findings") or []
    ]
    pool_rows = [
        [p.component, p.name, p.kind, ", ".join(p.instance_types), f"{p.nodes_min}-{p.nodes_max}", p.gpus_max,
         _mix_text([p]), p.monthly]
        for p in model.pools
    ]  # fmt: skip
    unpriced = [[str(u.get("urn", "")).rsplit("::", 1)[-1], u.get("reason")] for u in cost.get("unpriced") or []]
    undecided = [
        [n.get("policy"), str(n.get("urn", "")).rsplit("::", 1)[-1], n.get("reason")]
        for n in policies.get("not_evaluated") or []
    ]
    opaque = [[o.get("name"), o.get("type"), o.get("reason")] for o in report.get("opaque_components") or []]
    sections = [
        f"<h1>{_esc(title)}</h1>",
        '<p><span class="badge">Guardrails: ' + verdict(mandatory) + f" {mandatory} mandatory</span>"
        '<span class="badge">Conformance: ' + verdict(errors) + f" {errors} errors</span>"
        f'<span class="badge">{len(report.get("resources") or [])} resources</span>'
        f'<span class="badge">{_esc(_money(float(cost.get("monthly", 0.0))))}/month '
        f"(ceiling {_esc(_money(float(cost.get('monthly_ceiling', 0.0))))})</span></p>",
        "<h2>Platform</h2>",
        svg_platform(model),
        "<h2>Cost by component (USD per month)</h2>",
        svg_cost(model),
        "<h2>Pools</h2>",
        _table(["component", "pool", "kind", "instance types", "nodes", "max GPUs", "mix", "monthly"], pool_rows, {7}),
        "<h2>Rates by provenance</h2>",
        _table(["rate provenance", "items"], [[label, ", ".join(names)] for label, names in provenance_groups(items)])
        if (items := cost.get("items") or [])
        else "<p>None.</p>",
        *_mix_html(report.get("mix_advice")),
        *impact_html(report.get("change_impact")),
        "<h2>Guardrail findings</h2>",
        _table(["enforcement", "policy", "resource", "message"], findings) if findings else "<p>None.</p>",
        "<h2>Conformance findings</h2>",
        _table(["severity", "check", "resource", "field", "message"], conf_rows) if conf_rows else "<p>None.</p>",
        "<h2>Not priced</h2>",
        _table(["resource", "reason"], unpriced) if unpriced else "<p>None.</p>",
        "<h2>Policy checks not decided</h2>",
        _table(["policy", "resource", "reason"], undecided) if undecided else "<p>None.</p>",
        "<h2>Opaque components</h2>",
        _table(["component", "type", "reason"], opaque) if opaque else "<p>None.</p>",
    ]
    data = json.dumps({"stack": report.get("stack"), "monthly": cost.get("monthly")})
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
        + "".join(sections)
        + f'<pre id="js-errors" hidden></pre><script type="application/json" id="report-data">{_esc(data)}</script>'
        + f"<script>{_JS}</script></body></html>\n"
    )


def _mix_html(advice: Mapping[str, Any] | None) -> list[str]:
    """The capacity-mix advice table: each GPU pool today, the optimum, the saving over the horizon."""
    if not advice or not advice.get("pools"):
        return []
    rows = []
    for p in advice["pools"]:
        current, best = p.get("current") or {}, p.get("advice") or {}
        rows.append(
            [p.get("pool"), p.get("instance_type"), p.get("nodes"), p.get("tolerance"), current.get("describe", ""),
             best.get("describe", "") if p.get("status") == "advice" else p.get("status"),
             p.get("saving_usd") if p.get("saving_usd") is not None else "", p.get("reason") or ""]
        )  # fmt: skip
    horizon = f"{float(advice.get('horizon_months', 0)):g}"
    headers = ["pool", "instance type", "nodes", "spot tolerance", "today", "advice", "saving", "why / note"]
    return [f"<h2>Capacity-mix advice ({_esc(horizon)}-month horizon, USD)</h2>", _table(headers, rows, {6})]


def shorten_names(names: list[str], width: int) -> dict[str, str]:
    """Names shortened for a column `width` wide, keeping every unique part.

    When any name is too long, the prefix all names share (the stack prefix, "gpucloud-prod-") is shown as "…"
    on every name, so they still line up and stay distinct; what is still too long wraps in its cell (nothing is
    cut from the part that tells two resources apart).
    """
    out = {n: n for n in names}
    if all(len(n) <= width for n in names):
        return out
    common = _common_prefix(names)
    if len(common) < 6:
        return out
    return {n: "…" + n[len(common) :] for n in names}


def _common_prefix(names: list[str]) -> str:
    if len(names) < 2:
        return ""
    first, last = min(names), max(names)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    prefix = first[:i]
    # Cut at a word boundary so "…" replaces whole segments such as "gpucloud-prod-".
    cut = prefix.rfind("-")
    return prefix[: cut + 1] if cut >= 0 else ""
