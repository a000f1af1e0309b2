"""Docs that stay true: links and path references resolve, the architecture page's CLI and JSON contract match
the code, and no internal notes are left in user-facing pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from gpucloud.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# `path/like/this.ext` in backticks: a reference to a file of this repository.
PATH_REF = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.(?:md|py|yaml|yml|json|toml|txt|sh))`")
EXTERNAL = ("http://", "https://", "mailto:")


def _targets(page: Path) -> list[str]:
    return [t for t in LINK.findall(page.read_text()) if not t.startswith(EXTERNAL) and not t.startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    missing = [t for t in _targets(page) if not (page.parent / t.split("#", 1)[0]).exists()]
    assert missing == [], f"{page.relative_to(ROOT)} links to missing files: {missing}"


def _resolves(page: Path, ref: str) -> bool:
    if (page.parent / ref).exists() or (ROOT / ref).exists():
        return True
    # A bare file name (`lock.yaml`) is fine when exactly that file exists somewhere in the repository.
    return "/" not in ref and any(ROOT.glob(f"[!.]*/**/{ref}"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_path_reference_exists(page: Path) -> None:
    refs = [r for r in PATH_REF.findall(page.read_text()) if not r.startswith(("Pulumi.<", "<"))]
    missing = sorted({r for r in refs if "<" not in r and "*" not in r and not _resolves(page, r)})
    assert missing == [], f"{page.relative_to(ROOT)} names files that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_internal_notes(page: Path) -> None:
    text = page.read_text()
    assert not re.search(r"\b(TODO|FIXME|XXX)\b|internal note|note to self", text, re.I), page.name


def test_architecture_documents_every_plan_flag() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    plan = sub.choices["plan"]
    flags = {o for a in plan._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    undocumented = sorted(f for f in flags if f not in text)
    assert undocumented == []
    for command in sub.choices:
        assert f"gpucloud {command}" in text, command


def test_architecture_json_example_validates_against_the_schema() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    (example,) = re.findall(r"```json\n(.*?)```", text, re.S)
    schema = json.loads((ROOT / "gpucloud" / "report" / "plan.schema.json").read_text())
    jsonschema.validate(json.loads(example), schema)
