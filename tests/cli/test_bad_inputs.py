"""The first hour, as a table: everything a user can write wrong (files that are missing, unreadable, binary,
in another encoding or of the wrong shape; bad flags; bad values) gets one message in the house style and the
documented exit code. For every case: no traceback, never exit 4 (internal error), and nothing invalid accepted
(a case that must succeed says so, with what it must show).

Each case names its exit code and a part of its message. Files are written into a fresh directory per case;
`{tmp}` in an argument is that directory, `{root}` the repository."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gpucloud.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROJECT = b"name: p\nruntime: python\n"
PROGRAM = b"import pulumi\npulumi.export('obj', pulumi.Config().get_object('obj'))\n"
STACK = b"config: {}\n"
BINARY = bytes(range(256)) * 4  # NUL bytes included
LATIN1 = "config:\n  p:city: Malm\u00f6\n".encode("latin-1")
UTF16 = "config: {}\n".encode("utf-16")
BASE_PLAN = json.dumps({"schema": "gpucloud.plan/v1"}).encode()


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    code: int
    message: str  # a part of stderr (of stdout for a case that succeeds)
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def project(**files: bytes) -> dict[str, bytes]:
    """A minimal Pulumi project, with `files` (Pulumi.dev.yaml etc.) replacing its parts."""
    base = {"Pulumi.yaml": PROJECT, "__main__.py": PROGRAM, "Pulumi.dev.yaml": STACK}
    return {**base, **{k.replace("__", "."): v for k, v in files.items()}}


PLAN = ("plan", "--program", "{tmp}", "--no-policy-config")
PLAN_CONFIG = ("plan", "--program", "{tmp}")

CASES = [
    # --- stack and project files ---------------------------------------------------------------------------
    Case(
        "yaml-date-in-stack-file-is-the-string-written",
        (*PLAN, "--format", "json"),
        0,
        '"when": "2026-07-01"',
        project(Pulumi__dev__yaml=b"config:\n  p:obj:\n    when: 2026-07-01\n    at: 2026-07-01 10:00:00\n"),
    ),
    Case(
        "binary-stack-file",
        PLAN,
        2,
        "Pulumi.dev.yaml is a binary file (NUL byte at offset 0), not text; give a text file",
        project(Pulumi__dev__yaml=BINARY),
    ),
    Case(
        "latin-1-stack-file",
        PLAN,
        2,
        "Pulumi.dev.yaml is not UTF-8 text (byte 0xf6 at offset 22); save it as UTF-8",
        project(Pulumi__dev__yaml=LATIN1),
    ),
    Case(
        "utf-16-stack-file",
        PLAN,
        2,
        "Pulumi.dev.yaml is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8",
        project(Pulumi__dev__yaml=UTF16),
    ),
    Case(
        "config-written-as-a-list",
        PLAN,
        2,
        "Pulumi.dev.yaml: config: must be a mapping of keys to values, got a YAML list",
        project(Pulumi__dev__yaml=b"config:\n  - aws:region: us-east-1\n"),
    ),
    Case(
        "config-key-not-a-string",
        PLAN,
        2,
        "Pulumi.dev.yaml: config: key 1 is not a string",
        project(Pulumi__dev__yaml=b"config:\n  1: one\n"),
    ),
    Case(
        "stack-file-is-a-list",
        PLAN,
        2,
        "Pulumi.dev.yaml: must be a mapping with a 'config' key",
        project(Pulumi__dev__yaml=b"- config\n"),
    ),
    Case(
        "stack-file-not-yaml",
        PLAN,
        2,
        "Pulumi.dev.yaml:3: not valid YAML: did not find expected node content",
        project(Pulumi__dev__yaml=b"config:\n  a: [1,\n"),
    ),
    Case(
        "project-config-written-as-a-list",
        PLAN,
        2,
        "Pulumi.yaml: config: must be a mapping of keys to values, got a YAML list",
        project(Pulumi__yaml=PROJECT + b"config:\n  - a\n"),
    ),
    Case("binary-project-file", PLAN, 2, "Pulumi.yaml is a binary file", project(Pulumi__yaml=BINARY)),
    Case("unknown-stack", (*PLAN, "--stack", "qa"), 2, "unknown stack 'qa' for project 'p'", project()),
    Case(
        "program-dir-missing", ("plan", "--program", "{tmp}/nowhere"), 2, "--program {tmp}/nowhere is not a directory"
    ),
    Case(
        "platform-object-is-a-list",
        ("preflight", "--stack", "dev", "--program", "{tmp}"),
        2,
        "gpucloud:platform: must be an object, got list",
        project(Pulumi__dev__yaml=b"config:\n  gpucloud:platform: [1, 2]\n"),
    ),
    Case(
        "preflight-stack-without-a-platform",
        ("preflight", "--stack", "dev", "--program", "{tmp}"),
        2,
        "stack 'dev' has no gpucloud:platform object in its stack file",
        project(),
    ),
    # --- policy config ----------------------------------------------------------------------------------
    Case(
        "policy-config-is-a-directory",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/configs"),
        2,
        "--policy-config {tmp}/configs is a directory, not a file; give the path of a file inside it",
        {**project(), "configs/keep": b""},
    ),
    Case(
        "policy-config-missing",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/none.json"),
        2,
        "--policy-config file {tmp}/none.json does not exist",
        project(),
    ),
    Case(
        "policy-config-binary",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/c.json"),
        2,
        "--policy-config file {tmp}/c.json is a binary file",
        {**project(), "c.json": BINARY},
    ),
    Case(
        "policy-config-latin-1",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/c.json"),
        2,
        "--policy-config file {tmp}/c.json is not UTF-8 text (byte 0xe9 at offset 10)",
        {**project(), "c.json": '{"a": "caf\u00e9"}'.encode("latin-1")},
    ),
    Case(
        "policy-config-not-json",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/c.json"),
        2,
        "--policy-config file {tmp}/c.json is not valid JSON (line 1",
        {**project(), "c.json": b"{policy: on}"},
    ),
    Case(
        "policy-config-a-list",
        (*PLAN_CONFIG, "--policy-config", "{tmp}/c.json"),
        2,
        "must hold a JSON object keyed by policy name",
        {**project(), "c.json": b"[1]"},
    ),
    Case(
        "policy-config-and-none",
        (*PLAN, "--policy-config", "{tmp}/c.json"),
        2,
        "--policy-config and --no-policy-config contradict each other",
        {**project(), "c.json": b"{}"},
    ),
    # --- --compare base ---------------------------------------------------------------------------------
    Case(
        "compare-binary",
        (*PLAN, "--compare", "{tmp}/base.json"),
        2,
        "--compare file {tmp}/base.json is a binary file",
        {**project(), "base.json": BINARY},
    ),
    Case(
        "compare-latin-1",
        (*PLAN, "--compare", "{tmp}/base.json"),
        2,
        "--compare file {tmp}/base.json is not UTF-8 text",
        {**project(), "base.json": b'{"schema": "\xe9"}'},
    ),
    Case(
        "compare-directory",
        (*PLAN, "--compare", "{tmp}"),
        2,
        "--compare {tmp} is a directory, not a file",
        project(),
    ),
    Case(
        "compare-not-a-plan",
        (*PLAN, "--compare", "{tmp}/base.json"),
        2,
        '--compare file {tmp}/base.json is not a gpucloud plan JSON (expected "schema": "gpucloud.plan/v1")',
        {**project(), "base.json": b'{"schema": "other"}'},
    ),
    Case(
        "compare-schema-violation",
        (*PLAN, "--compare", "{tmp}/base.json"),
        2,
        "the base must follow gpucloud/report/plan.schema.json",
        {**project(), "base.json": BASE_PLAN},
    ),
    # --- --out and output flags -------------------------------------------------------------------------
    Case(
        "out-is-a-directory",
        (*PLAN, "--out", "{tmp}"),
        2,
        "cannot write --out {tmp}: it is a directory; give a file path",
        project(),
    ),
    Case(
        "out-in-a-missing-directory",
        (*PLAN, "--out", "{tmp}/no/such/plan.txt"),
        2,
        "cannot write --out {tmp}/no/such/plan.txt: No such file or directory; the previous file, if any, is unchanged",
        project(),
    ),
    Case("width-too-narrow", (*PLAN, "--width", "10"), 2, "10 columns is too narrow; use --width 40 or more"),
    Case("width-not-a-number", (*PLAN, "--width", "wide"), 2, "'wide' is not a number of columns"),
    Case("as-of-not-a-date", (*PLAN, "--as-of", "tomorrow"), 2, "--as-of 'tomorrow' is not a date", project()),
    Case("mix-horizon-negative", (*PLAN, "--mix-horizon", "-1"), 2, "--mix-horizon"),
    Case("unknown-flag", ("plan", "--stakc", "dev"), 2, "unrecognized arguments: --stakc dev"),
    Case("unknown-command", ("deploy",), 2, "invalid choice: 'deploy'"),
    Case("bad-format", ("plan", "--format", "pdf"), 2, "argument --format: invalid choice: 'pdf'"),
    # --- prices -----------------------------------------------------------------------------------------
    Case(
        "price-cache-binary-garbage-is-ignored-with-a-warning",
        ("prices", "show", "--format", "json"),
        0,
        '"cache": null',
        {"prices.json": BINARY},
        {"GPUCLOUD_PRICE_CACHE": "{tmp}/prices.json"},
    ),
    Case(
        "price-cache-latin-1-is-ignored-with-a-warning",
        ("prices", "show", "--format", "json"),
        0,
        '"cache": null',
        {"prices.json": b'{"schema": "\xe9"}'},
        {"GPUCLOUD_PRICE_CACHE": "{tmp}/prices.json"},
    ),
    Case("prices-show-unknown-region", ("prices", "show", "--region", "xx-nowhere-1"), 2, "unknown AWS region"),
    Case(
        "prices-show-region-in-capitals",
        ("prices", "show", "--region", "US-EAST-1"),
        2,
        "--region: unknown AWS region 'US-EAST-1' (did you mean 'us-east-1'?)",
    ),
    Case(
        "prices-show-type-in-capitals",
        ("prices", "show", "--region", "us-east-1", "--types", "G6E.XLARGE"),
        2,
        "--types: unknown instance type 'G6E.XLARGE' (did you mean 'g6e.xlarge'?)",
    ),
    Case(
        "prices-show-types-without-region",
        ("prices", "show", "--types", "g6e.xlarge"),
        2,
        "--types needs --region",
    ),
    Case(
        "prices-refresh-spot-days-zero",
        ("prices", "refresh", "--spot-days", "0"),
        2,
        "--spot-days: 0 days is outside what spot price history answers; give more than 0 and at most 90",
    ),
    Case("prices-refresh-spot-days-text", ("prices", "refresh", "--spot-days", "week"), 2, "'week' is not a number"),
    Case(
        "prices-refresh-unknown-region-before-any-call",
        ("prices", "refresh", "--region", "us-east-1", "xx-nowhere-1"),
        2,
        "--region: unknown AWS region 'xx-nowhere-1'",
        {},
        {"GPUCLOUD_PRICE_CACHE": "{tmp}/prices.json"},
    ),
    Case(
        "prices-refresh-type-in-capitals",
        ("prices", "refresh", "--types", "P5.48XLARGE"),
        2,
        "--types: unknown instance type 'P5.48XLARGE' (did you mean 'p5.48xlarge'?)",
        {},
        {"GPUCLOUD_PRICE_CACHE": "{tmp}/prices.json"},
    ),
    # --- mix and recommend ------------------------------------------------------------------------------
    Case(
        "mix-fleet-over-the-spec-limit",
        ("mix", "g6e.xlarge", "--nodes", "100000"),
        2,
        "nodePools[0].maxSize: Input should be less than or equal to 1000 (got 100000)",
    ),
    Case(
        "mix-pool-name-the-spec-rejects",
        ("mix", "g6e.xlarge", "--nodes", "4", "--pool-name", "GPU Pool"),
        2,
        "nodePools[0].name: 'GPU Pool' is not a lowercase DNS label",
    ),
    Case("mix-type-in-capitals", ("mix", "G6E.XLARGE", "--nodes", "2"), 2, "(did you mean 'g6e.xlarge'?)"),
    Case("mix-zero-nodes", ("mix", "g6e.xlarge", "--nodes", "0"), 2, "--nodes must be a whole number of at least 1"),
    Case("mix-nodes-not-a-number", ("mix", "g6e.xlarge", "--nodes", "many"), 2, "invalid int value: 'many'"),
    Case("recommend-unknown-model", ("recommend", "pretrain", "--model", "gpt-9"), 2, "invalid choice: 'gpt-9'"),
    # --- other commands ---------------------------------------------------------------------------------
    Case("cost-bad-start-date", ("cost", "--stack", "dev", "--start", "June"), 2, "--start"),
    Case("preflight-program-missing", ("preflight", "--stack", "dev", "--program", "{tmp}/x"), 2, "is not a directory"),
    Case("stacks-root-missing", ("stacks", "--root", "{tmp}/x"), 2, "{tmp}/x"),
]


def _fill(text: str, tmp: Path) -> str:
    return text.replace("{tmp}", str(tmp)).replace("{root}", str(ROOT))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for var, value in case.env.items():
        monkeypatch.setenv(var, _fill(value, tmp_path))
    monkeypatch.chdir(tmp_path)
    code = main([_fill(a, tmp_path) for a in case.argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "internal error" not in err
    assert code == case.code, err
    if case.code == 0:
        assert _fill(case.message, tmp_path) in out
    else:
        assert _fill(case.message, tmp_path) in err, err
        assert out == ""
        assert err.startswith(("gpucloud: error: ", "usage: gpucloud")), err


def test_the_table_covers_every_class_of_the_first_hour() -> None:
    ids = {c.id for c in CASES}
    wanted = {
        "yaml-date-in-stack-file-is-the-string-written",
        "binary-stack-file",
        "latin-1-stack-file",
        "policy-config-binary",
        "compare-binary",
        "config-written-as-a-list",
        "price-cache-binary-garbage-is-ignored-with-a-warning",
        "mix-fleet-over-the-spec-limit",
        "prices-show-unknown-region",
        "policy-config-is-a-directory",
        "mix-type-in-capitals",
    }
    assert wanted <= ids
    assert len(CASES) == len(ids)


def test_yaml_date_reaches_the_program_as_the_string_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data in project(Pulumi__dev__yaml=b"config:\n  p:obj: {when: 2026-07-01, n: 3}\n").items():
        (tmp_path / name).write_bytes(data)
    assert main([*(_fill(a, tmp_path) for a in PLAN), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outputs"] == {"obj": {"when": "2026-07-01", "n": 3}}


def test_team_pool_missing_on_the_platform_is_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    team = tmp_path / "vision"
    shutil.copytree(ROOT / "stacks" / "teams" / "vision", team)
    stack = team / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("      pool: dev-l4\n", "      pool: dev-l9\n", 1))
    code = main(["plan", "--program", str(team), "--no-policy-config"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "has risen" not in err and "While processing" not in err
    assert err.count("\n") == 1
    assert "queue pools ['dev-l9'] have no Kueue flavour on the platform" in err
    assert "(registering 'vision-queue-cluster-queue', 'kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue')" in err


def test_unknown_outputs_show_as_unknown_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    # The dev platform's subnet ids are only known after `up`: JSON says "[unknown]", and so must text (rich
    # markup once swallowed the brackets and printed ['', '']).
    code = main(["plan", "--program", str(ROOT), "--width", "200"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(line for line in out.splitlines() if " privateSubnetIds " in line)
    assert "['[unknown]', '[unknown]']" in line
    assert "['', '']" not in out


def test_binary_manifest_file_of_a_config_file_is_an_expansion_error(tmp_path: Path) -> None:
    # yaml.v2.ConfigFile / ConfigGroup read manifests from disk while the program runs; a binary one is the
    # provider's "cannot construct" error (a program error, exit 2), not a UnicodeDecodeError.
    from gpucloud.plan.k8s_components import ExpansionError, _read_files

    (tmp_path / "m.yaml").write_bytes(BINARY)
    with pytest.raises(ExpansionError) as err:
        _read_files(["m.yaml"], tmp_path, use_glob=False)
    assert str(err.value) == "YAML file m.yaml is a binary file (NUL byte at offset 0), not text; give a text file"
