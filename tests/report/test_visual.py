"""Output for people: text that fits the terminal without losing names, the PR comment's summary, collapsible
sections and Mermaid diagrams (rendered by the real Mermaid library in headless Chromium), and the offline HTML
report (opened by headless Chromium, which must find no script error)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpucloud.cli import main
from gpucloud.cli.io import output_width, width_arg
from gpucloud.plan import run_program
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown, render_text
from gpucloud.report.visual import (
    mermaid_cost,
    mermaid_platform,
    platform_model,
    render_html,
    shorten_names,
)
from tests.report.browser import dump_dom

ROOT = Path(__file__).resolve().parents[2]
MERMAID = ROOT / "vendor" / "mermaid-11.17.2" / "mermaid.min.js"
BAD = ROOT / "tests" / "fixtures" / "bad_program"


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    out = {}
    for stack in ("prod", "staging"):
        config = json.loads((ROOT / "policies" / "configs" / f"{stack}.json").read_text())
        out[stack] = build_report(run_program(ROOT, stack), policy_config=config)
    out["bad"] = build_report(run_program(BAD, "dev"))
    return out


# -- text ------------------------------------------------------------------------------------------------------


def test_shorten_names_drops_the_shared_prefix_only_when_a_name_does_not_fit() -> None:
    names = ["gpucloud-prod-train-h100", "gpucloud-prod-train-h200", "gpucloud-prod-net"]
    assert shorten_names(names, 30) == {n: n for n in names}
    assert shorten_names(names, 12) == {
        "gpucloud-prod-train-h100": "…train-h100",
        "gpucloud-prod-train-h200": "…train-h200",
        "gpucloud-prod-net": "…net",
    }
    # No shared prefix worth eliding: names stay whole and wrap in their cell.
    assert shorten_names(["alpha-one-very-long", "beta-two-very-long"], 8) == {
        "alpha-one-very-long": "alpha-one-very-long",
        "beta-two-very-long": "beta-two-very-long",
    }


@pytest.mark.parametrize("width", [80, 100, 132])
def test_text_fits_the_width_and_keeps_every_component_name(reports: dict[str, Any], width: int) -> None:
    text = render_text(reports["prod"], width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in "".join(re.findall(r"gpucloud-prod-[a-z0-9-]*…", text))  # never cut inside a name
    for component in ("train-h100", "train-h200", "infer-l40s", "storage", "net"):
        assert re.search(rf"(gpucloud-prod-|…){component}\b", text), component
    if width < 120:
        # Narrow: no unit-price column, sizes as desired/max.
        assert "qty/max" in text and "unit $" not in text
    else:
        assert "unit $" in text


def test_output_width_is_the_flag_the_terminal_or_80(monkeypatch: pytest.MonkeyPatch) -> None:
    assert output_width(133) == 133
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert output_width(None) == 80
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "101")
    assert output_width(None) == 101
    assert output_width(None, to_file=True) == 80
    assert width_arg("90") == 90
    for bad, message in (("wide", "'wide' is not a number of columns"), ("20", "20 columns is too narrow")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            width_arg(bad)


def test_cli_text_defaults_to_80_columns_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    # The bad program has mandatory violations (exit 1); the output is what matters here.
    assert main(["plan", "--program", str(BAD), "--stack", "dev"]) == 1
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert main(["plan", "--program", str(BAD), "--stack", "dev", "--width", "150"]) == 1
    wide = capsys.readouterr().out
    assert max(len(line) for line in wide.splitlines()) > 80


# -- markdown ----------------------------------------------------------------------------------------------------


def test_markdown_summary_then_collapsible_details(reports: dict[str, Any]) -> None:
    report = reports["prod"]
    md = render_markdown(report)
    head = md.split("<details", 1)[0]
    # One screen: title, verdict lines and the two diagrams come before any collapsible section.
    assert head.count("```mermaid") == 2
    assert "**Conformance:** 0 errors" in head
    unpriced = report["cost"]["unpriced"]
    undecided = report["policies"]["not_evaluated"]
    assert f"<details><summary>Not priced ({len(unpriced)})</summary>" in md
    assert f"<details><summary>Policy checks not decided ({len(undecided)})</summary>" in md
    for u in unpriced:
        assert f"`{u['urn'].rsplit('::', 1)[-1]}`" in md
    assert f"{len(unpriced)} not priced · {len(undecided)} policy checks not decided" in head


def test_markdown_lists_remediations_and_opens_mandatory_violations(reports: dict[str, Any]) -> None:
    report = json.loads(json.dumps(reports["bad"]))
    report["policies"]["violations"][0]["remediation"] = {"httpTokens": "required"}
    md = render_markdown(report)
    assert "<details open><summary>Guardrail violations (" in md
    assert "<details><summary>Remediations (1)</summary>" in md
    assert '{"httpTokens": "required"}' in md


def test_platform_model_reads_pools_mix_and_gpus_from_the_report(reports: dict[str, Any]) -> None:
    model = platform_model(reports["prod"])
    by = {p.name.rsplit("-", 1)[0]: p for p in model.pools}
    h100 = by["gpucloud-prod-train-h100-on-demand"]
    assert (h100.component, h100.gpus_per_node, h100.kind) == ("gpucloud-prod-train-h100", 8, "managed node group")
    assert h100.mix == {"on-demand": 2.0}
    assert by["gpucloud-prod-train-h200-capacity-block"].mix == {"capacity-block": 4.0}
    staging = platform_model(reports["staging"])
    (karpenter,) = [p for p in staging.pools if p.kind == "Karpenter NodePool"]
    assert karpenter.component == "gpucloud-staging-infer-l40s"
    assert ("FSx for Lustre", "gpucloud-prod-storage-fsx-fs") in [(k, n) for n, k in model.storage]
    assert model.cost_split[0][0] == "gpucloud-prod-train-h200"
    flow = mermaid_platform(model)
    assert '["gpucloud-prod-train-h100<br/>managed node group<br/>p5.48xlarge<br/>2 on-demand<br/>up to' in flow
    assert mermaid_cost(model).startswith("pie showData title Monthly cost by component (USD)")


def test_mermaid_diagrams_render_in_the_real_mermaid_library(reports: dict[str, Any], tmp_path: Path) -> None:
    diagrams = []
    for name, report in reports.items():
        model = platform_model(report)
        diagrams += [(f"{name}-platform", mermaid_platform(model)), (f"{name}-cost", mermaid_cost(model))]
    # A label with every character that needs escaping, so escaping is exercised too.
    tricky = platform_model(reports["bad"])
    tricky.clusters = ['weird "name" <b>&']
    diagrams.append(("escaping", mermaid_platform(tricky)))
    page = tmp_path / "mermaid.html"
    page.write_text(
        "<!DOCTYPE html><html><body>"
        f'<script src="{MERMAID.as_uri()}"></script><script>'
        f"const diagrams = {json.dumps(diagrams)};"
        "mermaid.initialize({startOnLoad: false});"
        "(async () => { const out = [];"
        "  for (const [id, text] of diagrams) {"
        "    try { const r = await mermaid.render('m' + out.length, text);"
        "          out.push(id + ':' + (r.svg.includes('<svg') ? 'ok' : 'nosvg')); }"
        "    catch (e) { out.push(id + ':error:' + String(e && e.message || e).slice(0, 200)); } }"
        "  document.body.setAttribute('data-results', out.join('|')); })();"
        "</script></body></html>"
    )
    dom = dump_dom(page)
    match = re.search(r'data-results="([^"]*)"', dom)
    assert match, dom[-2000:]
    results = match.group(1).split("|")
    assert results == [f"{name}:ok" for name, _ in diagrams]


# -- HTML --------------------------------------------------------------------------------------------------------


def test_html_report_is_self_contained_and_runs_clean_in_chromium(reports: dict[str, Any], tmp_path: Path) -> None:
    report = reports["prod"]
    page = tmp_path / "plan.html"
    config = str(ROOT / "policies" / "configs" / "prod.json")
    args = ["plan", "--stack", "prod", "--program", str(ROOT), "--policy-config", config, "--format", "html"]
    assert main([*args, "--out", str(page)]) == 0
    text = page.read_text()
    # Offline: nothing is fetched from anywhere.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    dom = dump_dom(page)
    assert re.search(r'<body[^>]*data-ready="1"', dom), dom[:500]
    errors = re.search(r'<pre id="js-errors" hidden="">(.*?)</pre>', dom, re.S)
    assert errors is not None and errors.group(1) == ""
    assert dom.count("<svg") == 2
    assert 'aria-label="platform diagram"' in dom and 'aria-label="cost by component"' in dom
    pools_table = dom.split("<h2>Pools</h2>", 1)[1].split("</table>", 1)[0]
    assert pools_table.count("<tr>") == 1 + len(report["conformance"]["pools"])
    assert "gpucloud-prod-train-h200-capacity-block" in pools_table


def test_html_escapes_what_the_program_names(reports: dict[str, Any]) -> None:
    report = json.loads(json.dumps(reports["bad"]))
    report["stack"] = "<script>alert(1)</script>"
    out = render_html(report)
    assert "<script>alert(1)</script>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
