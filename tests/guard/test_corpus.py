"""The red-team corpus (tests/guard/corpus/<id>/, format in the module below): every bad program produces
exactly its listed violations, every good twin exactly its own (normally none), and fail-closed cases list
exactly the resources that could not be decided.

Each program is raw pulumi_aws / pulumi_kubernetes, run with `runpy` under `gpucloud.plan.run_callable`
(preview semantics, project "corpus", stack "prod") and judged by the pack with the case's policy config,
the same path `gpucloud plan` takes (cost section included, so spend caps apply).
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from doc_paths import documents
from doc_paths import rows as doc_rows

from gpucloud.plan import run_callable
from gpucloud.report.pipeline import build_report

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
CONFIGS = ROOT / "policies" / "configs"
AREAS = ("unknown", "capacity", "gpu", "world", "iam", "data", "logs", "k8s", "fp", "misc", "evasion")
EXPECT_KEYS = {
    "title",
    "config",
    "config_overrides",
    "bad",
    "good",
    "undecided_bad",
    "undecided_good",
    "region",
    "evasion",
    "tf_note",
}


def cases() -> list[Path]:
    return (
        sorted(d for d in CORPUS.iterdir() if d.is_dir() and not d.name.startswith(("_", ".")))
        if CORPUS.is_dir()
        else []
    )


def expectation(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "expect.json").read_text())
    return data


def _merge(base: Any, override: Any) -> Any:
    """An override entry merges into the config's entry; a bare level string stays as enforcementLevel."""
    if isinstance(override, Mapping):
        start = (
            dict(base) if isinstance(base, Mapping) else ({"enforcementLevel": base} if isinstance(base, str) else {})
        )
        start.update(override)
        return start
    return override


def policy_config(expect: Mapping[str, Any]) -> dict[str, Any]:
    given = expect.get("config", "prod")
    config: dict[str, Any] = (
        json.loads((CONFIGS / f"{given}.json").read_text()) if isinstance(given, str) else dict(given)
    )
    for key, value in (expect.get("config_overrides") or {}).items():
        config[key] = _merge(config.get(key), value)
    return config


def _name(urn: str | None) -> str:
    return (urn or "").rsplit("::", 1)[-1]


def judge(program: Path, expect: Mapping[str, Any]) -> dict[str, Any]:
    """The plan report's `policies` section for one corpus program."""
    plan = run_callable(
        lambda: runpy.run_path(str(program), run_name="__main__"),
        project="corpus",
        stack="prod",
        region=str(expect.get("region", "us-east-1")),
    )
    assert not [w for w in plan.warnings if "error" in str(w).lower()], plan.warnings
    section: dict[str, Any] = build_report(plan, policy_config=policy_config(expect), conformance=False)["policies"]
    return section


def violations(section: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Decided violations: a resource blocked only because it could not be decided is listed as undecided."""
    return {(v["policy"], _name(v["urn"])) for v in section["violations"] if not v.get("undecided")}


def undecided(section: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(u["policy"], _name(u["urn"])) for u in section.get("undecided", [])}


def _pairs(value: Any) -> set[tuple[str, str]]:
    return {(str(p), str(r)) for p, r in value}


PROGRAMS = [
    pytest.param(case, variant, id=f"{case.name}:{variant}")
    for case in cases()
    for variant in ("bad", "good")
    if (case / f"{variant}.py").is_file()
]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_case_is_well_formed(case: Path) -> None:
    expect = expectation(case)
    assert set(expect) <= EXPECT_KEYS, f"{case.name}/expect.json: unknown keys {sorted(set(expect) - EXPECT_KEYS)}"
    assert case.name.split("-", 1)[0] in AREAS, f"{case.name}: the id must start with one of {AREAS}"
    assert isinstance(expect.get("title"), str) and expect["title"], f"{case.name}: expect.json needs a title"
    assert (case / "bad.py").is_file() and (case / "bad.tf").is_file(), f"{case.name}: bad.py and bad.tf"
    assert expect["bad"] or expect.get("undecided_bad"), f"{case.name}: a bad program must produce something"
    if case.name.startswith("evasion-"):
        assert expect.get("evasion") is True, f'{case.name}: evasion cases say "evasion": true'
        assert not (case / "good.py").exists(), f"{case.name}: evasion cases have no good twin"
    else:
        assert (case / "good.py").is_file() and (case / "good.tf").is_file(), f"{case.name}: good.py and good.tf"
        assert "good" in expect, f"{case.name}: expect.json lists the good twin's violations (normally [])"


@pytest.mark.parametrize(("case", "variant"), PROGRAMS)
def test_corpus_program(case: Path, variant: str) -> None:
    expect = expectation(case)
    section = judge(case / f"{variant}.py", expect)
    want = _pairs(expect.get(variant, []))
    got = violations(section)
    assert got == want, (
        f"{case.name}/{variant}.py: missing {sorted(want - got)}, unexpected {sorted(got - want)}\n"
        + "\n".join(v["message"] for v in section["violations"])
    )
    key = f"undecided_{variant}"
    if key in expect:
        assert undecided(section) == _pairs(expect[key]), (
            f"{case.name}/{variant}.py: undecided {section.get('undecided')}"
        )
    elif variant == "good":
        # A good twin is shown safe, not merely not shown unsafe.
        assert undecided(section) == set(), f"{case.name}/good.py: undecided {section.get('undecided')}"
    # docs/guardrails.md names every resource type a policy reports on (its Paths column).
    table = doc_rows()
    for finding in [*section["violations"], *section.get("undecided", [])]:
        type_token = finding["urn"].split("::")[-2].split("$")[-1]
        assert documents(table[finding["policy"]], type_token), (
            f"{case.name}/{variant}.py: {finding['policy']} reports a {type_token}, which docs/guardrails.md does "
            "not list among its paths"
        )
