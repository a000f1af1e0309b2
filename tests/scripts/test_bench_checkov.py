"""scripts/bench_checkov.py: how it reads Checkov's report and scores both tools (the runs themselves are a bench)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "guard" / "corpus"


def _bench() -> Any:
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("bench_checkov", ROOT / "scripts" / "bench_checkov.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_checkov"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> Any:
    return _bench()


def _case(tmp: Path, name: str, expect: dict[str, Any]) -> Path:
    d = tmp / name
    d.mkdir()
    (d / "expect.json").write_text(json.dumps(expect))
    return d


def test_parse_checkov_reads_failed_checks_and_parse_errors_per_twin(bench: Any) -> None:
    report = {
        "check_type": "terraform",
        "results": {
            "failed_checks": [
                {"check_id": "CKV_AWS_79", "file_path": "/world-x/bad/main.tf"},
                {"check_id": "CKV_AWS_8", "file_path": "/world-x/bad/main.tf"},
                {"check_id": "CKV_AWS_23", "file_path": "/world-x/good/main.tf"},
            ],
            "parsing_errors": ["/tmp/bench-checkov-1/iam-y/good/main.tf"],
        },
    }
    found, errors = bench.parse_checkov([report])
    assert found == {("world-x", "bad"): {"CKV_AWS_79", "CKV_AWS_8"}, ("world-x", "good"): {"CKV_AWS_23"}}
    assert errors == ["iam-y/good.tf"]


def test_violation_class_includes_undecided_blocking(bench: Any) -> None:
    assert bench.violation_class({"bad": [["a", "r"]], "undecided_bad": [["b", "r"], ["a", "s"]]}) == {"a", "b"}
    assert bench.violation_class({"bad": []}) == set()


def test_compare_scores_hits_strict_and_mapped_false_positives(bench: Any, tmp_path: Path) -> None:
    hit = _case(tmp_path, "data-hit", {"bad": [["kms-key-rotation", "k"]], "good": []})
    miss = _case(tmp_path, "gpu-miss", {"bad": [["gpu-family-allowlist", "p"]], "good": []})
    evasion = _case(tmp_path, "evasion-u", {"bad": [], "undecided_bad": [["s3-tls-only", "b"]], "evasion": True})
    dirs = [hit, miss, evasion]
    checkov = {
        ("data-hit", "bad"): {"CKV_AWS_7"},
        ("data-hit", "good"): {"CKV2_AWS_64"},  # key policy noise: strict counts it, mapped does not
        ("gpu-miss", "bad"): {"CKV_AWS_79"},  # a finding, but not of the case's class
        ("gpu-miss", "good"): {"CKV_AWS_79"},  # a mapped check on a good twin
        ("evasion-u", "bad"): {"CKV_AWS_379"},
        ("evasion-u", "good"): {"CKV_AWS_7"},  # an evasion has no good twin: never counted
    }
    gpucloud = {
        ("data-hit", "bad"): {"kms-key-rotation"},
        ("gpu-miss", "bad"): {"gpu-family-allowlist"},
        ("evasion-u", "bad"): {"s3-tls-only"},
        ("data-hit", "good"): set(),
    }
    tools = bench.compare(dirs, checkov, gpucloud)
    ck, gc = tools["checkov"], tools["gpucloud"]
    assert (ck["bad"], ck["good"], ck["hits"], ck["flagged"]) == (3, 2, 2, 2)
    assert ck["missed"] == ["gpu-miss"]
    assert ck["recall"] == pytest.approx(2 / 3)
    assert ck["precision"] == pytest.approx(0.5)
    assert ck["flagged_good"] == {"data-hit": ["CKV2_AWS_64"], "gpu-miss": ["CKV_AWS_79"]}
    assert (ck["mapped_flagged"], ck["mapped_precision"]) == (1, pytest.approx(2 / 3))
    assert ck["mapped_flagged_good"] == {"gpu-miss": ["CKV_AWS_79"]}
    assert (gc["hits"], gc["flagged"], gc["recall"], gc["precision"], gc["missed"]) == (3, 0, 1.0, 1.0, [])


def test_any_gpucloud_finding_on_a_good_twin_is_a_false_positive(bench: Any, tmp_path: Path) -> None:
    d = _case(tmp_path, "fp-x", {"bad": [["cost-tags", "a"]], "good": []})
    gc = bench.compare([d], {}, {("fp-x", "bad"): {"cost-tags"}, ("fp-x", "good"): {"monthly-spend-cap"}})["gpucloud"]
    assert (gc["flagged"], gc["precision"], gc["flagged_good"]) == (1, 0.5, {"fp-x": ["monthly-spend-cap"]})


def test_policy_config_merges_overrides_like_the_corpus_runner() -> None:
    _bench()  # puts scripts/ on the path
    import bench_worker

    cfg = bench_worker.policy_config(
        {"config": "prod", "config_overrides": {"monthly-spend-cap": {"unknowns": "warn"}, "cost-tags": "disabled"}}
    )
    assert cfg["monthly-spend-cap"]["unknowns"] == "warn"
    assert cfg["monthly-spend-cap"]["maxMonthlyUsd"] == 900000
    assert cfg["cost-tags"] == "disabled"
    inline = bench_worker.policy_config({"config": {"all": "advisory"}, "config_overrides": {"lt-imdsv2": {"x": 1}}})
    assert inline == {"all": "advisory", "lt-imdsv2": {"x": 1}}


def test_every_mapped_policy_is_a_pack_policy_and_ids_are_checkov_ids(bench: Any) -> None:
    from gpucloud.policies.gpucloud_policies.registry import by_name

    assert set(bench.CHECKOV_IDS) <= set(by_name())
    assert "lb-internal-only" not in bench.CHECKOV_IDS
    for policy, ids in bench.CHECKOV_IDS.items():
        for check in ids:
            assert check.startswith(("CKV_AWS_", "CKV2_AWS_", "CKV_K8S_")), (policy, check)


def test_every_corpus_case_scores_against_a_class(bench: Any) -> None:
    """A bad twin with an empty class could never be a hit for either tool."""
    for d in bench.cases(CORPUS, []):
        assert bench.violation_class(bench.expectation(d)), d.name
