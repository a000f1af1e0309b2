"""Text (terminal) and Markdown (PR comment) views of a plan report."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from gpucloud.plan.model import UNKNOWN, UNKNOWN_OUTPUT
from gpucloud.report.impact_render import impact_markdown, impact_text
from gpucloud.report.visual import (
    cost_by_component,
    mermaid_cost,
    mermaid_platform,
    platform_model,
    provenance_groups,
    shorten_names,
)

STACK_TYPE = "pulumi:pulumi:Stack"


def _fold_table(title: str, narrow: bool = False) -> Table:
    """A table whose cells wrap (fold) instead of cutting text with an ellipsis: names stay whole.

    Narrow terminals get a lighter frame (no outer edge padding, one rule under the header), which gives the
    cells about a column of space per column back.
    """
    if narrow:
        return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    return Table(title=title, title_justify="left")


def _col(table: Table, name: str, right: bool = False, no_wrap: bool = False, max_width: int | None = None) -> None:
    table.add_column(name, justify="right" if right else "left", overflow="fold", no_wrap=no_wrap, max_width=max_width)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _tree_roots(resources: list[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, list[Any]]]:
    urns = {r["urn"] for r in resources}
    children: dict[str, list[Mapping[str, Any]]] = {}
    roots = []
    for r in resources:
        parent = r.get("parent")
        if parent and parent in urns:
            children.setdefault(parent, []).append(r)
        else:
            roots.append(r)
    return roots, children


def _detail(r: Mapping[str, Any]) -> str:
    """A few inputs that matter most for GPU capacity, shown inline in the tree."""
    inputs = r.get("inputs") or {}
    bits = []
    for key in ("instanceTypes", "instanceType", "capacityType", "deploymentType", "storageCapacity"):
        value = inputs.get(key)
        if value is not None and value != UNKNOWN:
            bits.append(f"{key}={value if not isinstance(value, list) else ','.join(map(str, value))}")
    scaling = inputs.get("scalingConfig")
    if isinstance(scaling, Mapping):
        bits.append("size={}/{}/{}".format(*(int(scaling.get(k) or 0) for k in ("minSize", "desiredSize", "maxSize"))))
    return " ".join(bits)


def render_text(report: Mapping[str, Any], width: int = 80, color: bool = False) -> str:
    """The terminal view, `width` columns wide (the CLI passes the terminal's width, 80 when not a terminal)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system="standard" if color else None, highlight=False)
    resources: list[Mapping[str, Any]] = report["resources"]
    console.print(
        f"[bold]gpucloud plan[/bold]  project [bold]{report['project']}[/bold]  stack "
        f"[bold]{report['stack']}[/bold]  {len(resources)} resources"
    )
    roots, children = _tree_roots(resources)
    tree = Tree("resources", guide_style="dim")

    def add(node: Tree, r: Mapping[str, Any]) -> None:
        detail = _detail(r)
        name = f"[bold]{r['name']}[/bold]" if not r.get("custom") else r["name"]
        branch = node.add(f"{name}  [dim]{r['type']}[/dim]" + (f"  {detail}" if detail else ""))
        for c in children.get(r["urn"], []):
            add(branch, c)

    for r in roots:
        add(tree, r)
    console.print(tree)

    counts = Counter(r["type"] for r in resources if r.get("custom"))
    table = _fold_table("Resources by type")
    _col(table, "type")
    _col(table, "count", right=True)
    for type_, n in sorted(counts.items()):
        table.add_row(type_, str(n))
    table.add_row("[bold]total (custom resources)[/bold]", f"[bold]{sum(counts.values())}[/bold]")
    console.print(table)

    _component_text(console, report, width)
    _cost_text(console, report["cost"], width)
    _mix_text(console, report.get("mix_advice"), width)
    for line in impact_text(report.get("change_impact")):
        console.print(escape(line), highlight=False)
    outputs = {k: v for k, v in (report.get("outputs") or {}).items() if v not in (UNKNOWN, UNKNOWN_OUTPUT)}
    if outputs:
        out_table = _fold_table("Stack outputs known at plan time")
        _col(out_table, "output")
        _col(out_table, "value")
        for k, v in sorted(outputs.items()):
            out_table.add_row(escape(k), escape(str(v)))  # "[unknown]" is not a markup tag
        console.print(out_table)
    _policies_text(console, report["policies"])
    _conformance_text(console, report.get("conformance"))
    for entry in report.get("log") or []:
        console.print(f"[cyan]{entry['severity']}:[/cyan] {escape(entry['message'])}", highlight=False)
    for w in report.get("warnings") or []:
        console.print(f"[yellow]warning:[/yellow] {escape(str(w))}")
    return buf.getvalue()


def provenance_lines(items: list[Mapping[str, Any]]) -> list[str]:
    return ["Rates by provenance:"] + [f"  {label}: {', '.join(names)}" for label, names in provenance_groups(items)]


def _cost_text(console: Console, cost: Mapping[str, Any], width: int = 80) -> None:
    items = cost.get("items") or []
    if items:
        table = _fold_table("Estimated cost (USD per month)", narrow=width < 120)
        # Narrow terminals drop the unit price (the monthly figures carry the result) and show nodes as
        # desired/max; figures never wrap, names and types fold in their cells instead of being cut.
        wide = width >= 120
        cols = ["resource", "instance type", "pricing"]
        cols += ["qty", "max", "unit $"] if wide else ["qty/max"]
        cols += ["monthly", "ceiling"]
        for col in cols:
            numeric = col in ("qty", "max", "qty/max", "unit $", "monthly", "ceiling")
            # Instance types and pricing kinds are at most 14 characters; the rest of the line goes to the name.
            _col(table, col, right=numeric, no_wrap=numeric, max_width=14 if col in cols[1:3] else None)
        names = shorten_names([str(i.get("name")) for i in items], max(14, width - (92 if wide else 50)))
        for item in items:
            qty, most = f"{item.get('quantity', 0):g}", f"{item.get('max_quantity', 0):g}"
            sizes = (
                [qty, most, f"{item.get('unit_price', 0):,.4g}/{item.get('unit', 'hour')}"]
                if wide
                else [f"{qty}/{most}"]
            )
            table.add_row(
                names[str(item.get("name"))],
                str(item.get("instance_type") or ""),
                str(item.get("pricing")),
                *sizes,
                _money(item.get("monthly", 0.0)),
                _money(item.get("monthly_ceiling", 0.0)),
            )
        console.print(table)
        for line in provenance_lines(items):
            console.print(line, markup=False, highlight=False)
    console.print(
        f"[bold]Cost:[/bold] {_money(cost.get('monthly', 0.0))}/month at desired sizes, "
        f"{_money(cost.get('monthly_ceiling', 0.0))}/month at maximum sizes "
        f"({cost.get('hours_per_month', 730)} h/month)"
        + (f", {cost['region']} rates as of {cost.get('as_of')}" if cost.get("region") else "")
    )
    if cost.get("ceiling_unbounded"):
        console.print("[bold red]The ceiling is UNBOUNDED: a resource can grow without limit (see warnings)[/bold red]")
    for warning in cost.get("warnings") or []:
        console.print(f"[yellow]cost warning:[/yellow] {escape(str(warning))}")
    unpriced = cost.get("unpriced") or []
    if unpriced:
        console.print(f"[dim]{len(unpriced)} resources not priced (see --format json)[/dim]")
    if any(i.get("pricing") == "capacity-block" for i in items):
        console.print("[dim]capacity-block: the block is prepaid at purchase; shown as its hourly rate x 730 h[/dim]")
    diff = cost.get("diff")
    if isinstance(diff, Mapping):
        table = _fold_table("Cost change against the base plan (USD per month)")
        for col in ("resource", "change", "monthly delta", "ceiling delta"):
            _col(table, col, right="delta" in col)
        for c in diff.get("items") or []:
            table.add_row(
                str(c.get("name")),
                str(c.get("change")),
                _signed(c.get("monthly_delta", 0.0)),
                _signed(c.get("monthly_ceiling_delta", 0.0)),
            )
        table.add_row(
            "[bold]total[/bold]",
            "",
            _signed(diff.get("monthly_delta", 0.0)),
            _signed(diff.get("monthly_ceiling_delta", 0.0)),
        )
        console.print(table)


def mix_summary(advice: Mapping[str, Any]) -> str:
    """One line: what the capacity-mix advice would save, over which horizon, and how many pools it covers."""
    horizon = f"{float(advice.get('horizon_months', 0)):g}"
    advised = int(advice.get("advised", 0))
    estimated = advice.get("estimated_saving_usd")
    # Savings from published or refreshed rates; what rests on estimates only when asked for, and said so.
    extra = f" (+ {_money(float(estimated))} on estimated rates)" if estimated else ""
    return (
        f"{advised} pool{'' if advised == 1 else 's'} could save {_money(float(advice.get('saving_usd', 0.0)))}"
        f"{extra} over {horizon} months; {int(advice.get('already_optimal', 0))} already optimal, "
        f"{int(advice.get('not_advised', 0))} without advice ({advice.get('region')} rates)"
    )


def _mix_cells(pool: Mapping[str, Any]) -> tuple[str, str, str]:
    """(today, advice, saving) for one pool of the mix advice."""
    current, advice = pool.get("current") or {}, pool.get("advice") or {}
    if pool.get("status") == "no-advice":
        return "", "no advice", ""
    if pool.get("status") == "already-optimal":
        return str(current.get("describe")), "already optimal", ""
    saving = float(pool.get("saving_usd") or 0.0)
    shown = f"{_signed(saving)} ({pool.get('saving_percent')}%)"
    if pool.get("saving_basis") == "estimate":
        shown += " estimate"
    return str(current.get("describe")), str(advice.get("describe")), shown


def _mix_notes(pool: Mapping[str, Any]) -> list[str]:
    name = f"{pool.get('pool')} ({pool.get('instance_type')})"
    notes = []
    if pool.get("reason"):
        notes.append(f"{name}: {pool['reason']}")
    checkpoint = (pool.get("advice") or {}).get("checkpoint_minutes")
    # Only a synchronous job loses work between checkpoints; independent replicas just restart.
    if pool.get("status") == "advice" and checkpoint and pool.get("coupling") == "synchronous":
        notes.append(f"{name}: checkpoint every {checkpoint:g} min with the spot nodes advised")
    return notes


def _mix_text(console: Console, advice: Mapping[str, Any] | None, width: int = 80) -> None:
    if not advice or not advice.get("pools"):
        return
    horizon = f"{float(advice.get('horizon_months', 0)):g}"
    table = _fold_table(f"Capacity-mix advice ({horizon}-month horizon, USD)", narrow=width < 120)
    for col in ("pool", "today", "advice", "saving"):
        _col(table, col, right=col == "saving", no_wrap=col == "saving")
    names = shorten_names([str(p.get("pool")) for p in advice["pools"]], max(12, (width - 40) // 3))
    for pool in advice["pools"]:
        today, advised, saving = _mix_cells(pool)
        table.add_row(f"{names[str(pool.get('pool'))]} {pool.get('instance_type')}", today, advised, saving)
    console.print(table)
    console.print(f"[bold]Mix advice:[/bold] {escape(mix_summary(advice))}")
    for pool in advice["pools"]:
        for note in _mix_notes(pool):
            console.print(f"[dim]{escape(note)}[/dim]")


def mix_advice_markdown(advice: Mapping[str, Any] | None) -> list[str]:
    """The collapsible mix-advice section of the PR comment (nothing when the report has none)."""
    if not advice or not advice.get("pools"):
        return []
    body = ["| pool | type | nodes | today | advice | saving |", "|---|---|--:|---|---|--:|"]
    for pool in advice["pools"]:
        today, advised, saving = _mix_cells(pool)
        body.append(
            f"| `{pool.get('pool')}` | {pool.get('instance_type')} | {pool.get('nodes')} | {_cell(today)} | "
            f"{_cell(advised)} | {saving} |"
        )
    notes = [note for pool in advice["pools"] for note in _mix_notes(pool)]
    body += ["", *(f"- {_cell(n)}" for n in notes)] if notes else []
    body += ["", f"_{_cell(advice.get('model'))}_"]
    return _details(f"Capacity-mix advice: {_cell(mix_summary(advice))}", body, open_=False)


def _signed(value: float) -> str:
    return f"{'+' if value > 0 else '-' if value < 0 else ''}{_money(abs(value))}"


def _has_components(report: Mapping[str, Any]) -> bool:
    return any(not r.get("custom") and r.get("type") != STACK_TYPE for r in report.get("resources") or [])


def _component_text(console: Console, report: Mapping[str, Any], width: int = 80) -> None:
    rows = cost_by_component(report)
    if not rows or not _has_components(report):
        return
    table = _fold_table("Cost per pool / component (USD per month)")
    for col in ("component", "type", "monthly", "ceiling"):
        _col(table, col, right=col in ("monthly", "ceiling"), no_wrap=col in ("monthly", "ceiling"))
    names = shorten_names([r[0] for r in rows], max(16, (width - 34) // 2))
    for name, type_, monthly, ceiling in rows:
        # gpucloud:nodepool:GpuNodePool -> GpuNodePool when narrow: the class name is the part people read.
        shown = type_ if width >= 120 else type_.rsplit(":", 1)[-1]
        table.add_row(names[name], shown, _money(monthly), _money(ceiling))
    console.print(table)


def _policies_text(console: Console, policies: Mapping[str, Any]) -> None:
    violations = policies.get("violations") or []
    for v in violations:
        style = "red" if v.get("enforcement") == "mandatory" else "yellow"
        console.print(
            f"[{style}]{v.get('enforcement')}[/{style}] {v.get('policy')} ({v.get('severity')}): "
            f"{escape(str(v.get('urn')))}\n    {escape(str(v.get('message')))}"
        )
    not_evaluated = policies.get("not_evaluated") or []
    if not_evaluated:
        console.print(f"[yellow]{len(not_evaluated)} policy checks could not run on unknown values (advisory)[/yellow]")
    for line in undecided_lines(policies):
        console.print(f"[yellow]{escape(line)}[/yellow]")
    for line in remediation_lines(policies):
        console.print(f"[cyan]{escape(line)}[/cyan]")
    mandatory = int(policies.get("mandatory_violations", 0))
    verdict = "[red]FAIL[/red]" if mandatory else "[green]PASS[/green]"
    console.print(
        f"[bold]Guardrails ({policies.get('pack')}):[/bold] {verdict}  {mandatory} mandatory, "
        f"{len(violations) - mandatory} advisory violations"
    )


def undecided_lines(policies: Mapping[str, Any]) -> list[str]:
    """One line per resource a policy could not decide at preview: what it counts as, and the unknown field."""
    return [
        f"undecided ({u.get('action')}): {u.get('policy')} on {str(u.get('urn', '')).rsplit('::', 1)[-1]}: "
        f"{u.get('field') or 'stack'} is unknown at preview ({u.get('reason')})"
        for u in policies.get("undecided") or []
    ]


def remediation_lines(policies: Mapping[str, Any]) -> list[str]:
    """What the pack's remediations would set on each resource at `up` (level remediate)."""
    return [
        f"remediate: {r.get('policy')} on {str(r.get('urn', '')).rsplit('::', 1)[-1]} sets "
        + ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in (r.get("changes") or {}).items())
        for r in policies.get("remediations") or []
    ]


def _short(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _conformance_text(console: Console, conformance: Mapping[str, Any] | None) -> None:
    if not conformance:
        return
    for f in conformance.get("findings") or []:
        style = "red" if f.get("severity") == "error" else "yellow"
        where = _short(str(f.get("urn", "")))
        if f.get("object"):
            where += f" -> {f['object']}"
        console.print(
            f"[{style}]{f.get('severity')}[/{style}] {f.get('check')}: {escape(where)}"
            + (f" [dim]{escape(str(f.get('field')))}[/dim]" if f.get("field") else "")
            + f"\n    {escape(str(f.get('message')))}"
            + (f"\n    expected: {escape(str(f.get('expected')))}" if f.get("expected") else "")
            + f"\n    [dim]source: {escape(str(f.get('source')))}[/dim]"
        )
    placements = conformance.get("placements") or []
    if placements:
        table = _fold_table("Where each workload can run")
        for col in ("workload", "pods", "pools"):
            _col(table, col, right=col == "pods")
        for p in placements:
            pools = ", ".join(p.get("pools") or []) or f"[dim]{escape(str(p.get('note') or 'none'))}[/dim]"
            table.add_row(escape(str(p.get("workload"))), str(p.get("pods") or ""), pools)
        console.print(table)
    errors = int(conformance.get("errors", 0))
    verdict = "[red]FAIL[/red]" if errors else "[green]PASS[/green]"
    console.print(
        f"[bold]Conformance (Kubernetes {conformance.get('kubernetes_version')}):[/bold] {verdict}  {errors} errors, "
        f"{int(conformance.get('warnings', 0))} warnings; {len(conformance.get('derived_objects') or [])} objects "
        f"rendered from charts; checks: {', '.join(conformance.get('checks') or []) or 'none'}"
    )


def _conformance_markdown(conformance: Mapping[str, Any] | None) -> list[str]:
    if not conformance:
        return []
    errors = int(conformance.get("errors", 0))
    findings = conformance.get("findings") or []
    lines = [
        "#### Conformance against upstream",
        "",
        f"{'❌' if errors else '✅'} Kubernetes {conformance.get('kubernetes_version')}: **{errors}** errors, "
        f"**{int(conformance.get('warnings', 0))}** warnings · {len(conformance.get('derived_objects') or [])} "
        "objects rendered from the pinned charts",
        "",
    ]
    if findings:
        lines += [
            f"<details{' open' if errors else ''}><summary>Conformance findings ({len(findings)})</summary>",
            "",
            "| severity | check | resource | field | problem | expected | source |",
            "|---|---|---|---|---|---|---|",
        ]

        def cell(value: Any) -> str:
            return str(value or "").replace("\n", " ").replace("|", "\\|")

        for f in findings:
            where = f"`{_short(str(f.get('urn', '')))}`" + (f" → `{f['object']}`" if f.get("object") else "")
            lines.append(
                f"| {f.get('severity')} | `{f.get('check')}` | {where} | `{cell(f.get('field'))}` | "
                f"{cell(f.get('message'))} | {cell(f.get('expected'))} | {cell(f.get('source'))} |"
            )
        lines += ["", "</details>", ""]
    placements = conformance.get("placements") or []
    if placements:
        lines += ["<details><summary>Where each workload can run</summary>", "", "| workload | pods | pools |"]
        lines += ["|---|--:|---|"]
        for p in placements:
            pools = ", ".join(f"`{x}`" for x in p.get("pools") or []) or str(p.get("note") or "none").replace("|", "/")
            lines.append(f"| `{p.get('workload')}` | {p.get('pods') or ''} | {pools} |")
        lines += ["", "</details>", ""]
    return lines


def _cell(value: Any) -> str:
    return str(value if value is not None else "").replace("\n", " ").replace("|", "\\|")


def _details(summary: str, body: list[str], open_: bool = False) -> list[str]:
    """A collapsible section; GitHub needs the blank line after <summary> to render the markdown inside."""
    return [f"<details{' open' if open_ else ''}><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _remediations(policies: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(policy, resource, change) for every violation that carries what `remediate` would change."""
    out = []
    for v in policies.get("violations") or []:
        change = v.get("remediation")
        if change:
            text = change if isinstance(change, str) else json.dumps(change, sort_keys=True)
            out.append((str(v.get("policy")), _short(str(v.get("urn", ""))), text))
    for r in policies.get("remediations") or []:
        change = r.get("change", r.get("changes"))
        text = change if isinstance(change, str) else json.dumps(change, sort_keys=True)
        out.append((str(r.get("policy")), _short(str(r.get("urn", ""))), text))
    return out


def render_markdown(report: Mapping[str, Any]) -> str:
    """The PR comment: a one-screen summary with the platform and cost diagrams, details in collapsible parts."""
    resources = report["resources"]
    cost = report["cost"]
    policies = report["policies"]
    mandatory = int(policies.get("mandatory_violations", 0))
    violations = policies.get("violations") or []
    conformance = report.get("conformance") or {}
    unpriced = cost.get("unpriced") or []
    undecided = policies.get("not_evaluated") or []
    lines = [
        f"### gpucloud plan: `{report['project']}` / `{report['stack']}`",
        "",
        f"{'❌' if mandatory else '✅'} **Guardrails:** {mandatory} mandatory, "
        f"{len(violations) - mandatory} advisory violations · "
        f"**{len(resources)}** resources · **{_money(cost.get('monthly', 0.0))}**/month "
        f"(ceiling {_money(cost.get('monthly_ceiling', 0.0))}"
        f"{', UNBOUNDED' if cost.get('ceiling_unbounded') else ''})",
        "",
        *[line for w in cost.get("warnings") or [] for line in (f"> ⚠️ {w}", "")],
    ]
    if conformance:
        errors = int(conformance.get("errors", 0))
        lines += [
            f"{'❌' if errors else '✅'} **Conformance:** {errors} errors, {int(conformance.get('warnings', 0))} "
            f"warnings · {len(unpriced)} not priced · {len(undecided)} policy checks not decided",
            "",
        ]
    diff = cost.get("diff")
    if isinstance(diff, Mapping):
        lines += [
            f"**Cost change:** {_signed(float(diff.get('monthly_delta', 0.0)))}/month · ceiling "
            f"{_signed(float(diff.get('monthly_ceiling_delta', 0.0)))}/month",
            "",
        ]
    lines += impact_markdown(report.get("change_impact"))
    lines += mix_advice_markdown(report.get("mix_advice"))
    model = platform_model(report)
    if model.pools or model.clusters:
        lines += ["```mermaid", mermaid_platform(model), "```", ""]
    if model.cost_split:
        lines += ["```mermaid", mermaid_cost(model), "```", ""]
    if violations:
        body = ["| enforcement | policy | severity | resource | message |", "|---|---|---|---|---|"]
        for v in violations:
            body.append(
                f"| {v.get('enforcement')} | `{v.get('policy')}` | {v.get('severity')} | "
                f"`{_short(str(v.get('urn', '')))}` | {_cell(v.get('message'))} |"
            )
        lines += _details(f"Guardrail violations ({len(violations)})", body, open_=mandatory > 0)
    fixes = _remediations(policies)
    if fixes:
        body = ["| policy | resource | what `remediate` would change |", "|---|---|---|"]
        body += [f"| `{p}` | `{r}` | {_cell(c)} |" for p, r, c in fixes]
        lines += _details(f"Remediations ({len(fixes)})", body)
    fail_closed = policies.get("undecided") or []
    if fail_closed:
        body = ["| policy | resource | unknown field | counts as | why |", "|---|---|---|---|---|"]
        body += [
            f"| `{u.get('policy')}` | `{_short(str(u.get('urn', '')))}` | `{_cell(u.get('field') or 'stack')}` | "
            f"{'violation (block)' if u.get('action') == 'block' else 'warning'} | {_cell(u.get('reason'))} |"
            for u in fail_closed
        ]
        lines += _details(f"Undecided at preview ({len(fail_closed)})", body, open_=any(
            u.get("action") == "block" for u in fail_closed))  # fmt: skip
    if undecided:
        body = ["| policy | resource | why it could not be decided |", "|---|---|---|"]
        body += [f"| `{n.get('policy')}` | `{_short(str(n.get('urn', '')))}` | {_cell(n.get('reason'))} |"
                 for n in undecided]  # fmt: skip
        lines += _details(f"Policy checks not decided ({len(undecided)})", body)
    items = cost.get("items") or []
    if items:
        body = [
            "| resource | instance type | pricing | qty | max | monthly | ceiling |",
            "|---|---|---|--:|--:|--:|--:|",
        ]
        for item in items:
            body.append(
                f"| `{item.get('name')}` | {item.get('instance_type') or ''} | {item.get('pricing')} | "
                f"{item.get('quantity', 0):g} | {item.get('max_quantity', 0):g} | {_money(item.get('monthly', 0.0))} | "
                f"{_money(item.get('monthly_ceiling', 0.0))} |"
            )
        body += ["", "| rate provenance | items |", "|---|---|"]
        body += [f"| {_cell(label)} | {_cell(', '.join(names))} |" for label, names in provenance_groups(items)]
        lines += _details(f"Cost (USD per month): {len(items)} priced items", body)
    groups = cost_by_component(report)
    if groups and _has_components(report):
        body = ["| component | type | monthly | ceiling |", "|---|---|--:|--:|"]
        body += [f"| `{n}` | `{t}` | {_money(m)} | {_money(c)} |" for n, t, m, c in groups]
        lines += _details("Cost per pool / component (USD per month)", body)
    if unpriced:
        body = ["| resource | why it is not priced |", "|---|---|"]
        body += [f"| `{_short(str(u.get('urn', '')))}` | {_cell(u.get('reason'))} |" for u in unpriced]
        lines += _details(f"Not priced ({len(unpriced)})", body)
    if isinstance(diff, Mapping):
        changes = diff.get("items") or []
        if changes:
            body = ["| resource | change | monthly Δ | ceiling Δ |", "|---|---|--:|--:|"]
            for c in changes:
                body.append(
                    f"| `{c.get('name')}` | {c.get('change')} | {_money(c.get('monthly_delta', 0.0))} | "
                    f"{_money(c.get('monthly_ceiling_delta', 0.0))} |"
                )
            lines += _details(f"Cost change against the base plan ({len(changes)} resources)", body)
    lines += _conformance_markdown(report.get("conformance"))
    counts = Counter(r["type"] for r in resources if r.get("custom"))
    body = ["| type | count |", "|---|--:|", *(f"| `{t}` | {n} |" for t, n in sorted(counts.items()))]
    lines += _details("Resources by type", body)
    for entry in report.get("log") or []:
        lines.append(f"> {entry['severity']}: {entry['message']}")
    for w in report.get("warnings") or []:
        lines.append(f"> ⚠️ {w}")
    return "\n".join(lines).rstrip() + "\n"
