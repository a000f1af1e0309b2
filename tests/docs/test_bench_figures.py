"""Figures quoted in the docs come from the benchmarks' own output (issue 16, "docs that stay true").

Every `<!-- bench:NAME -->` block in docs/*.md must equal what scripts/bench_record.py renders from the JSON the
bench recorded (docs/bench/NAME.json); every recorded bench is quoted; and throughput or ratio figures of the
benched kinds appear nowhere in the docs outside those blocks, so two docs cannot quote two different figures.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_record  # noqa: E402

DOCS = sorted((ROOT / "docs").glob("*.md"))
RECORDED = sorted(p.stem for p in (ROOT / "docs" / "bench").glob("*.json"))


def _blocks() -> list[tuple[str, str, str]]:
    return [(doc.name, name, body) for doc in DOCS for name, body in bench_record.blocks(doc.read_text())]


def _outside_blocks(text: str) -> str:
    return bench_record.BLOCK.sub("", text)


def test_every_recorded_bench_has_a_renderer_and_is_quoted() -> None:
    quoted = {name for _, name, _ in _blocks()}
    assert RECORDED, "docs/bench/ holds no recorded bench"
    for name in RECORDED:
        assert name in bench_record.RENDERERS, f"docs/bench/{name}.json has no renderer in scripts/bench_record.py"
        assert name in quoted, f"docs/bench/{name}.json is quoted by no <!-- bench:{name} --> block in docs/"


@pytest.mark.parametrize(("doc", "name", "body"), _blocks(), ids=lambda v: v if len(v) < 40 else "")
def test_doc_block_is_what_the_bench_recorded(doc: str, name: str, body: str) -> None:
    assert (ROOT / "docs" / "bench" / f"{name}.json").is_file(), f"{doc}: block {name!r} has no recorded bench"
    assert body == bench_record.rendered(name), (
        f"docs/{doc}: the {name!r} block differs from docs/bench/{name}.json; rerun the bench with --record "
        "or `python scripts/bench_record.py` after changing a renderer"
    )


def test_recorded_json_names_its_machine() -> None:
    for name in RECORDED:
        data: dict[str, Any] = json.loads((ROOT / "docs" / "bench" / f"{name}.json").read_text())
        machine = data["machine"]
        assert set(machine) == {"date_utc", "cores", "python", "commit", "load_before", "load_after"}, name
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", machine["date_utc"]), name


@pytest.mark.parametrize(
    "pattern",
    [
        r"[\d,]+ (?:resource-policy )?checks/s",  # guardrail throughput
        r"\d+(?:\.\d+)?x (?:the wall time of )?one cold prod plan",  # plan --all ratios
        r"recall[^.\n|]{0,20}\d+(?:\.\d+)? ?%",  # Checkov comparison
    ],
)
def test_benched_figures_appear_only_inside_blocks(pattern: str) -> None:
    for doc in DOCS:
        hits = re.findall(pattern, _outside_blocks(doc.read_text()))
        assert not hits, f"docs/{doc.name} quotes {hits} outside a bench block: put it in one or drop it"


def test_refresh_rewrites_a_stale_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mechanism itself: a block whose figures differ from its JSON is reported and rewritten."""
    docs = tmp_path / "docs"
    (docs / "bench").mkdir(parents=True)
    data = {
        "machine": {
            "date_utc": "2026-12-01 00:00",
            "cores": 2,
            "python": "3.11.7",
            "commit": "abc1234",
            "load_before": 0.1,
            "load_after": 0.2,
        },
        "result": {
            "resources": 10,
            "resource_policies": 3,
            "stack_policies": 2,
            "violations": 4,
            "not_evaluated": 0,
            "repeat": 3,
            "best_s": 0.5,
            "checks": 30,
            "checks_per_s": 60.0,
        },
    }
    (docs / "bench" / "policies.json").write_text(json.dumps(data))
    doc = docs / "x.md"
    doc.write_text("intro\n<!-- bench:policies -->\nold figure: 999 checks/s\n<!-- /bench:policies -->\nend\n")
    monkeypatch.setattr(bench_record, "DOCS", docs)
    monkeypatch.setattr(bench_record, "BENCH_DIR", docs / "bench")
    monkeypatch.setattr(bench_record, "ROOT", tmp_path)
    assert bench_record.refresh(write=False) == ["docs/x.md: policies"]
    assert "999" in doc.read_text()
    bench_record.refresh(write=True)
    text = doc.read_text()
    assert "**60 resource-policy checks/s** (target at least 30,000/s), **NOT met**." in text
    assert text.startswith("intro\n<!-- bench:policies -->\n_Recorded 2026-12-01 00:00 UTC")
    assert text.endswith("<!-- /bench:policies -->\nend\n")
    assert bench_record.refresh(write=False) == []
