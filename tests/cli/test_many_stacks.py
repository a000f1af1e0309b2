"""`gpucloud stacks` and `gpucloud plan --all | --changed | --shard` on a small repository of tiny programs:
one process, dependency order, one combined report per format, the worst exit code; and the stack-aware
single-stack plan (policy config by stack name, then by the spec's environment)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpucloud.cli import main
from gpucloud.cli.plan import resolve_policy_config
from gpucloud.cli.plan_all import (
    _mix_line,
    _mix_summary,
    cost_estimate,
    default_jobs,
    usable_cores,
    warm_order,
    worst,
)
from gpucloud.report import validate_combined

ROOT = Path(__file__).resolve().parents[2]

PLATFORM = """
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
if config.get("fail"):
    raise ValueError("the platform program failed on purpose")
aws.sns.Topic("alerts", tags={"Team": "platform"})
pulumi.export("bucketPrefix", "data")
"""

TEAM = """
import pulumi
import pulumi_aws as aws

platform = pulumi.StackReference(f"{pulumi.get_organization()}/plat/" + pulumi.Config().require("platform"))
aws.sns.Topic("team", tags={"Team": platform.require_output("bucketPrefix")})
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_repo(root: Path, fail_stack: str | None = None) -> Path:
    write(root / "Pulumi.yaml", yaml.safe_dump({"name": "plat", "runtime": "python", "stackConfigDir": "stacks"}))
    write(root / "__main__.py", PLATFORM)
    for stack in ("dev", "prod"):
        config: dict = {"aws:region": "us-west-2"}
        if stack == fail_stack:
            config["plat:fail"] = "yes"
        write(root / "stacks" / f"Pulumi.{stack}.yaml", yaml.safe_dump({"config": config}))
    team = root / "stacks" / "teams" / "t1"
    write(team / "Pulumi.yaml", yaml.safe_dump({"name": "team-t1", "runtime": "python"}))
    write(team / "__main__.py", TEAM)
    team_config = {
        "aws:region": "us-west-2",
        "team-t1:platform": "dev",
        "gpucloud:offlineStackReferences": {"plat/dev": {"bucketPrefix": "from-dev"}},
    }
    write(team / "Pulumi.dev.yaml", yaml.safe_dump({"config": team_config}))
    (root / "policies" / "configs").mkdir(parents=True)
    write(root / "policies" / "configs" / "prod.json", json.dumps({"budget-and-anomaly": "mandatory"}))
    return root


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def combined(repo: Path) -> dict:
    out = repo.parent / "combined.json"
    # prod's config makes its budget guardrail mandatory: the one stack with a violation sets the exit code.
    assert main(["plan", "--all", "--root", str(repo), "--format", "json", "--out", str(out)]) == 1
    result: dict = json.loads(out.read_text())
    return result


def test_stacks_lists_every_stack_in_dependency_order(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    code, out, err = run_cli(capsys, "stacks", "--root", str(repo), "--format", "json")
    assert (code, err) == (0, "")
    stacks = json.loads(out)["stacks"]
    assert [s["id"] for s in stacks] == ["plat/dev", "plat/prod", "team-t1/dev"]
    assert stacks[2]["depends_on"] == ["plat/dev"]
    assert stacks[2]["program"] == "stacks/teams/t1"
    # The policy config each stack is judged by, for the PR workflow's `pulumi preview` matrix: prod has its own,
    # dev and the team stack (no environment in their spec) have none.
    assert [s["policy_config"] for s in stacks] == [None, "policies/configs/prod.json", None]
    code, out, _ = run_cli(capsys, "stacks", "--root", str(repo))
    assert out.splitlines() == [
        "stack        program          stack file                       environment  depends on  references",
        "plat/dev     .                stacks/Pulumi.dev.yaml           -            -           -",
        "plat/prod    .                stacks/Pulumi.prod.yaml          -            -           -",
        "team-t1/dev  stacks/teams/t1  stacks/teams/t1/Pulumi.dev.yaml  -            plat/dev    plat/dev",
    ]


def test_plan_all_combined_json(combined: dict) -> None:
    validate_combined(combined)
    assert combined["schema"] == "gpucloud.plans/v1"
    assert combined["exit_code"] == 1
    assert [s["id"] for s in combined["stacks"]] == ["plat/dev", "plat/prod", "team-t1/dev"]
    assert combined["summary"]["stacks"] == 3
    assert combined["summary"]["failed"] == 1
    assert combined["summary"]["mandatory_violations"] == 1
    by_id = {s["id"]: s for s in combined["stacks"]}
    assert {i: s["exit_code"] for i, s in by_id.items()} == {"plat/dev": 0, "plat/prod": 1, "team-t1/dev": 0}
    # Each stack is judged by its own config: prod has policies/configs/prod.json, the others none.
    assert by_id["plat/prod"]["policy_config"].endswith("policies/configs/prod.json")
    assert by_id["plat/dev"]["policy_config"] == "none (no policies/configs/<stack>.json or <environment>.json)"
    # The summary adds up the stacks' capacity-mix savings (same --mix-horizon, default 12 months).
    reports = [s["report"] for s in combined["stacks"]]
    assert combined["summary"]["mix_saving_usd"] == round(sum(r["mix_advice"]["saving_usd"] for r in reports), 2)
    assert combined["summary"]["mix_horizon_months"] == 12
    assert combined["summary"]["mix_pools_advised"] == sum(r["mix_advice"]["advised"] for r in reports)
    team = by_id["team-t1/dev"]["report"]
    bucket = next(r for r in team["resources"] if r["type"] == "aws:sns/topic:Topic")
    assert bucket["inputs"]["tags"] == {"Team": "from-dev"}  # the offline answer, keyed without an org
    assert team["stack"] == "dev" and team["project"] == "team-t1"


def test_a_failing_stack_does_not_stop_the_others(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = make_repo(tmp_path, fail_stack="dev")
    code, out, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--format", "json")
    assert code == 2
    combined = json.loads(out)
    validate_combined(combined)
    codes = {s["id"]: s["exit_code"] for s in combined["stacks"]}
    assert codes == {"plat/dev": 2, "plat/prod": 1, "team-t1/dev": 0}
    failed = combined["stacks"][0]
    assert "report" not in failed
    assert failed["error"] == ("program error in __main__.py:7: ValueError: the platform program failed on purpose")
    assert combined["summary"]["failed"] == 2


def test_plan_all_text_markdown_and_sarif(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    code, text, _ = run_cli(capsys, "plan", "--all", "--root", str(repo))
    assert code == 1
    assert text.count("=== ") == 4
    assert "=== plat/dev (stacks/Pulumi.dev.yaml; policy config: none (no policies" in text
    lines = text.splitlines()
    assert lines[-5] == "=== 3 stacks, exit 1"
    # The summary table leaves the stack file to each stack's "===" line: 80 columns hold it.
    assert lines[-4].split() == ["stack", "exit", "monthly", "mandatory", "conformance", "errors"]
    assert lines[-2].split() == ["plat/prod", "1", "$0.00", "1", "0"]
    assert max(len(line) for line in lines[-4:]) <= 80
    code, markdown, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--format", "markdown")
    assert code == 1
    assert markdown.startswith("## gpucloud plan: 3 stacks, exit 1\n")
    sections = [line for line in markdown.splitlines() if line.startswith("<details><summary>") and ": exit " in line]
    assert sections == [
        "<details><summary>plat/dev: exit 0</summary>",
        "<details><summary>plat/prod: exit 1</summary>",
        "<details><summary>team-t1/dev: exit 0</summary>",
    ]
    assert "<details><summary>team-t1/dev: exit 0</summary>" in markdown
    assert "| plat/prod | stacks/Pulumi.prod.yaml | 1 | $0.00 | 1 | 0 |" in markdown
    code, sarif_text, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--format", "sarif")
    assert code == 1
    sarif = json.loads(sarif_text)
    assert sarif["version"] == "2.1.0"
    ids = [run["automationDetails"]["id"] for run in sarif["runs"] if "automationDetails" in run]
    # One category per stack and tool: GitHub code scanning rejects a file with two runs of one category.
    assert len(ids) == len(set(ids))
    assert "gpucloud-plan/team-t1/dev/" in ids
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in sarif["runs"]
        for result in run["results"]
        for loc in result["locations"]
    }
    assert uris == {"stacks/Pulumi.dev.yaml", "stacks/Pulumi.prod.yaml", "stacks/teams/t1/Pulumi.dev.yaml"}


def test_shard_splits_the_stacks(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    seen = []
    for i in (1, 2):
        code, out, _ = run_cli(capsys, "stacks", "--root", str(repo), "--shard", f"{i}/2", "--format", "json")
        assert code == 0
        seen.append([s["id"] for s in json.loads(out)["stacks"]])
    assert seen == [["plat/dev", "team-t1/dev"], ["plat/prod"]]
    code, out, _ = run_cli(capsys, "plan", "--shard", "1/2", "--root", str(repo), "--format", "json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)["stacks"]] == ["plat/dev", "team-t1/dev"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True
    )


def test_changed_plans_only_what_the_diff_reaches(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    code, out, _ = run_cli(capsys, "plan", "--changed", "HEAD", "--root", str(repo), "--format", "json")
    assert code == 0
    assert json.loads(out)["stacks"] == []
    (repo / "stacks" / "Pulumi.prod.yaml").write_text("config:\n  aws:region: us-east-1\n")
    code, out, _ = run_cli(capsys, "stacks", "--changed", "HEAD", "--root", str(repo), "--format", "json")
    assert [s["id"] for s in json.loads(out)["stacks"]] == ["plat/prod"]
    # The team stack reads plat/dev: a change to the platform program reaches all three.
    (repo / "__main__.py").write_text(PLATFORM + "\n# changed\n")
    code, out, _ = run_cli(capsys, "stacks", "--changed", "HEAD", "--root", str(repo), "--format", "json")
    assert [s["id"] for s in json.loads(out)["stacks"]] == ["plat/dev", "plat/prod", "team-t1/dev"]
    code, _, err = run_cli(capsys, "plan", "--changed", "nope", "--root", str(repo))
    assert code == 2
    assert err.startswith("gpucloud: error: --changed nope: git rev-parse --verify failed (")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--all", "--stack", "dev"], "--stack names one stack's input and cannot be combined with --all"),
        (["plan", "--all", "--compare", "x.json"], "--compare names one stack's input and cannot be combined"),
        (["plan", "--all", "--policy-config", "x.json"], "--policy-config names one stack's input"),
        (["plan", "--all", "--program", "stacks"], "--program selects one project; with --all/--changed/--shard"),
        (["plan", "--all", "--jobs", "0"], "--jobs 0: give 1 or more worker processes"),
        (["plan", "--jobs", "2"], "--jobs applies to --all/--changed/--shard only"),
        (["plan", "--shard", "3/2"], "--shard '3/2': I must be between 1 and N"),
        (["plan", "--all", "--root", "/nonexistent"], "--root /nonexistent is not a directory"),
        (["stacks", "--root", "/nonexistent"], "--root /nonexistent is not a directory"),
        (
            ["plan", "--policy-config", "a.json", "--no-policy-config"],
            "--policy-config and --no-policy-config contradict each other; give one of them",
        ),
    ],
)
def test_bad_combinations_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("gpucloud: error: ") and message in err, err


def test_jobs_two_gives_the_same_result_as_one(capsys: pytest.CaptureFixture[str], repo: Path, combined: dict) -> None:
    code, out, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--jobs", "2", "--format", "json")
    assert code == 1
    forked = json.loads(out)

    def strip(doc: dict) -> list:
        return [{k: v for k, v in s.items() if k != "seconds"} for s in doc["stacks"]]

    assert strip(forked) == strip(combined)


def test_worst_exit_code() -> None:
    assert worst([]) == 0
    assert worst([0, 1, 0]) == 1
    assert worst([1, 5]) == 5
    assert worst([5, 2, 1]) == 2
    assert worst([2, 4, 0]) == 4
    assert worst([3, 5]) == 3
    assert worst([0, 99, 2]) == 99  # an unknown code counts as the worst


def test_default_jobs() -> None:
    # A pool from 2 cores on: measured to pay there once the cheapest stack warmed the imports.
    assert [default_jobs(n) for n in (None, 1, 2, 3, 4, 16)] == [1, 1, 2, 3, 4, 8]


def test_usable_cores_follow_the_cpu_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert usable_cores() == 3
    monkeypatch.delattr(os, "sched_getaffinity")
    assert usable_cores() == 16


def stack_info(stack_file: str, references: tuple[str, ...] = ()) -> object:
    from gpucloud.stacks.discovery import StackInfo

    return StackInfo("p", Path(stack_file).stem, ".", stack_file, references=references)


def test_the_pool_warms_with_the_cheapest_stack_and_hands_out_the_largest_first(tmp_path: Path) -> None:
    for name, size in (("a.yaml", 2600), ("b.yaml", 5700), ("c.yaml", 2500), ("team.yaml", 6000), ("t2.yaml", 300)):
        write(tmp_path / name, "x" * size)
    stacks = [
        stack_info("a.yaml"),
        stack_info("b.yaml"),
        stack_info("c.yaml"),
        stack_info("team.yaml", ("p/a",)),
        stack_info("t2.yaml", ("p/a",)),
    ]
    assert cost_estimate(tmp_path, stacks[3]) == (0, 6000)
    assert cost_estimate(tmp_path, stacks[1]) == (1, 5700)
    assert cost_estimate(tmp_path, stack_info("missing.yaml")) == (1, 0)
    # The smaller team stack first (it warms the imports in the parent), then platform stacks largest first,
    # then the team stacks.
    assert warm_order(tmp_path, stacks) == [4, 1, 0, 2, 3]
    # Equal estimates keep the stacks' order.
    same = [stack_info("a.yaml"), stack_info("a.yaml"), stack_info("a.yaml")]
    assert warm_order(tmp_path, same) == [0, 1, 2]


def test_a_pool_plans_the_cheapest_stack_in_this_process(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from gpucloud.cli import plan_all

    seen: list[tuple[str, bool]] = []
    parent = os.getpid()
    planned = plan_all.plan_stack

    def spy(root: Path, info: object, args: argparse.Namespace) -> object:
        seen.append((info.id, os.getpid() == parent))  # type: ignore[attr-defined]
        return planned(root, info, args)

    monkeypatch.setattr(plan_all, "plan_stack", spy)
    code, out, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--jobs", "2", "--format", "json")
    assert code == 1
    # Only the parent's own call is seen here (the workers' lists die with them): the team stack, the cheapest.
    assert seen == [("team-t1/dev", True)]
    assert [s["id"] for s in json.loads(out)["stacks"]] == ["plat/dev", "plat/prod", "team-t1/dev"]
    # One job: no pool, every stack in this process, in dependency order.
    seen.clear()
    code, out, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--jobs", "1", "--format", "json")
    assert code == 1
    assert seen == [("plat/dev", True), ("plat/prod", True), ("team-t1/dev", True)]


def namespace(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(**{"policy_config": None, "no_policy_config": False, **kw})


def test_policy_config_follows_the_stack_then_its_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "Pulumi.yaml", "name: p\nruntime: python\n")
    write(tmp_path / "__main__.py", "")
    for stack, env in (("prod-eu", "prod"), ("dev", "dev"), ("scratch", None)):
        spec = {"gpucloud:platform": {"environment": env}} if env else {}
        write(tmp_path / f"Pulumi.{stack}.yaml", yaml.safe_dump({"config": spec}))
    write(tmp_path / "policies" / "configs" / "prod.json", '{"all": "mandatory"}')
    write(tmp_path / "policies" / "configs" / "dev.json", '{"cost-tags": "advisory"}')
    assert resolve_policy_config(namespace(), tmp_path, "prod-eu") == (
        {"all": "mandatory"},
        "policies/configs/prod.json",
    )
    assert resolve_policy_config(namespace(), tmp_path, "dev") == (
        {"cost-tags": "advisory"},
        "policies/configs/dev.json",
    )
    assert resolve_policy_config(namespace(), tmp_path, "scratch") == (
        None,
        "none (no policies/configs/<stack>.json or <environment>.json)",
    )
    assert resolve_policy_config(namespace(no_policy_config=True), tmp_path, "prod-eu") == (
        None,
        "none (--no-policy-config)",
    )
    flag = namespace(policy_config=str(tmp_path / "policies" / "configs" / "dev.json"))
    assert resolve_policy_config(flag, tmp_path, "prod-eu") == ({"cost-tags": "advisory"}, "policies/configs/dev.json")
    write(tmp_path / "policies" / "configs" / "list.json", "[]")
    with pytest.raises(Exception, match="must hold a JSON object keyed by policy name"):
        resolve_policy_config(namespace(policy_config="policies/configs/list.json"), tmp_path, "dev")


def test_python_dash_m_gpucloud() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpucloud", "--version"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert (proc.returncode, proc.stdout) == (0, "gpucloud 0.2.0\n")


def _advice(saving: float, advised: int, horizon: float = 12) -> dict:
    return {"mix_advice": {"saving_usd": saving, "advised": advised, "horizon_months": horizon}}


def test_mix_summary_adds_the_stacks_savings_and_says_when_there_is_none() -> None:
    # 1,320,263.10 + 0.006 + 2,000.00 = 1,322,263.106: 1,322,263.11 to the cent. A stack without advice (a failed
    # plan) adds nothing.
    reports = [_advice(1_320_263.10, 3), _advice(0.006, 0), _advice(2_000.0, 1), {"cost": {}}]
    assert _mix_summary(reports) == {"mix_saving_usd": 1_322_263.11, "mix_horizon_months": 12, "mix_pools_advised": 4}
    assert (
        _mix_line(_mix_summary(reports)) == "capacity-mix advice: $1,322,263.11 saved over 12 months (4 pools advised)"
    )
    assert (
        _mix_line(_mix_summary([_advice(10.0, 1, 36)]))
        == "capacity-mix advice: $10.00 saved over 36 months (1 pools advised)"
    )
    # Advice everywhere already optimal: the JSON says $0 over the horizon, the text says nothing.
    assert _mix_line(_mix_summary([_advice(0.0, 0)])) is None
    none = _mix_summary([{"cost": {}}])
    assert none == {"mix_saving_usd": None, "mix_horizon_months": None, "mix_pools_advised": 0}
    assert _mix_line(none) is None


def test_no_mix_advice_leaves_the_combined_saving_null(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    code, out, _ = run_cli(capsys, "plan", "--all", "--root", str(repo), "--format", "json", "--no-mix-advice")
    assert code == 1
    result = json.loads(out)
    validate_combined(result)
    assert (result["summary"]["mix_saving_usd"], result["summary"]["mix_pools_advised"]) == (None, 0)


def test_a_stuck_worker_does_not_hang_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # A forked worker that never answers (a lock inherited from another thread of the parent) is given up on: the
    # pool is terminated and the stacks still open are planned in this process.
    import os
    import time
    from types import SimpleNamespace

    from gpucloud.cli import plan_all

    parent = os.getpid()
    stacks = [SimpleNamespace(stack_file=f"s{i}.yaml", references=(), name=f"s{i}") for i in range(4)]

    def fake_plan(root: Path, info: object, args: object) -> plan_all.StackResult:
        if os.getpid() != parent and getattr(info, "name", "") == "s2":
            time.sleep(3600)
        return plan_all.StackResult(info, 0, 0.0, "none", extra={"pid": os.getpid()})

    monkeypatch.setattr(plan_all, "plan_stack", fake_plan)
    monkeypatch.setattr(plan_all, "WORKER_WAIT_FLOOR_S", 2.0)
    args = argparse.Namespace(timeout=0.5)
    started = time.monotonic()
    results = plan_all.plan_many(tmp_path, stacks, args, jobs=2)
    assert time.monotonic() - started < 60
    assert [r.info.name for r in results] == ["s0", "s1", "s2", "s3"]
    # s2 hung in its worker and was planned again here.
    assert results[2].extra["pid"] == parent
    assert "no worker finished a stack in 2 s; planning the" in capsys.readouterr().err


def test_the_pool_waits_at_least_five_minutes_or_twice_the_plan_timeout() -> None:
    from gpucloud.cli.plan_all import worker_wait_seconds

    assert worker_wait_seconds(argparse.Namespace(timeout=None)) == 300.0
    assert worker_wait_seconds(argparse.Namespace(timeout=400.0)) == 800.0
