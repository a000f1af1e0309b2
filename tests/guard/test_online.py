"""The pack served over the Analyzer gRPC protocol, started the Pulumi CLI's way, against the offline evaluation.

One pack process per policy config (module-scoped, closed at the end); every stack, the team stack, the bad
program and each guardrail corpus case is planned once and judged by both paths.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from gpucloud.cost import price_plan
from gpucloud.guard import evaluate, online
from gpucloud.guard.online import marshal as online_marshal
from gpucloud.plan import run_callable, run_program
from gpucloud.plan.model import UNKNOWN, Plan

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "policies" / "configs"
CORPUS = ROOT / "tests" / "guard" / "corpus"

# Policies whose input the engine never sends an analyzer: AnalyzerResourceOptions has no retainOnDelete (proto
# analyzer.proto; step_generator.go fills protect, ignoreChanges, deleteBeforeReplace, aliases, customTimeouts,
# parent only). The offline plan records the option, so offline decides what the CLI can only call undecided.
ENGINE_INVISIBLE = {"data-retain-on-delete": "retainOnDelete", "retained-data-key": "retainOnDelete"}


def _python() -> str:
    # The CLI runs the pack in PulumiPolicy.yaml's virtualenv (the repository's .venv after `make`); a checkout
    # that uses another virtualenv runs it in this interpreter, with the same arguments and environment.
    venv = online.pack_virtualenv(online.PACK_DIR)
    candidate = venv / "bin" / "python" if venv is not None else None
    return str(candidate) if candidate is not None and candidate.exists() else sys.executable


def _load_config(spec: Any, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    config = json.loads((CONFIGS / f"{spec}.json").read_text()) if isinstance(spec, str) else dict(spec or {})
    for key, value in (overrides or {}).items():
        base = config.get(key)
        config[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    return config


class Servers:
    """One running pack per distinct policy config, started on first use."""

    def __init__(self) -> None:
        self.stack = contextlib.ExitStack()
        self.running: dict[str, tuple[online.PackServer, list[online.PolicyInfo]]] = {}

    def get(self, config: Mapping[str, Any], project: str, stack: str) -> online.PackServer:
        key = json.dumps(config, sort_keys=True)
        if key not in self.running:
            server, policies, _ = self.stack.enter_context(
                online.serve(project, stack, python=_python(), config=config, rpc_timeout=120)
            )
            self.running[key] = (server, policies)
        return self.running[key][0]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    pool = Servers()
    with pool.stack:
        yield pool


def offline(plan: Plan, config: Mapping[str, Any]) -> Any:
    """What `gpucloud plan` evaluates: the pack on the plan, with the cost section it priced."""
    return evaluate(plan, policy_config=config, cost=price_plan(plan))


def differences(off: Any, on: online.OnlineResult) -> list[str]:
    """Every disagreement between the two paths, each naming the policy and the resource."""
    problems: list[str] = []
    off_v = online.keys(off.violations, "policy", "urn", "enforcement")
    on_v = online.keys(on.violations, "policy", "urn", "enforcement")
    off_u = online.keys(off.not_evaluated, "policy", "urn")
    on_u = online.keys(on.not_evaluated, "policy", "urn")
    for policy, field in ENGINE_INVISIBLE.items():
        # Online the option is missing, so each resource the offline path flagged must be flagged or undecided
        # online, and whatever the online path says beyond the offline verdict must be for want of that option
        # (a fail-closed pack may turn it into a violation).
        said = {(n["policy"], n["urn"]): n["reason"] for n in on.not_evaluated if n["policy"] == policy}
        said.update({(v["policy"], v["urn"]): v["message"] for v in on.violations if v["policy"] == policy})
        flagged = {(name, urn) for name, urn, _level in off_v if name == policy}
        for name, urn in sorted(flagged - set(said)):
            problems.append(f"{name} on {urn}: offline violation, online neither a violation nor undecided")
        for (name, urn), text in sorted(said.items()):
            if (name, urn) not in flagged and field not in text:
                problems.append(f"{name} on {urn}: online verdict without an offline one: {text}")
        off_v = {v for v in off_v if v[0] != policy}
        on_v = {v for v in on_v if v[0] != policy}
        on_u = {u for u in on_u if u[0] != policy}
        off_u = {u for u in off_u if u[0] != policy}
    for policy, urn, level in sorted(off_v - on_v):
        problems.append(f"{policy} on {urn}: {level} violation offline only")
    for policy, urn, level in sorted(on_v - off_v):
        problems.append(f"{policy} on {urn}: {level} violation online only")
    for policy, urn in sorted(off_u - on_u):
        problems.append(f"{policy} on {urn}: undecided offline only")
    for policy, urn in sorted(on_u - off_u):
        problems.append(f"{policy} on {urn}: undecided online only")
    off_r = {(r["policy"], r["urn"]): r["properties"] for r in off.remediations}
    on_r = {(r["policy"], r["urn"]): r["properties"] for r in on.remediations}
    for policy, urn in sorted(set(off_r) ^ set(on_r)):
        side = "offline" if (policy, urn) in off_r else "online"
        problems.append(f"{policy} on {urn}: remediation {side} only")
    for key in sorted(set(off_r) & set(on_r)):
        if json.loads(json.dumps(off_r[key])) != on_r[key]:
            problems.append(f"{key[0]} on {key[1]}: remediations differ: {off_r[key]} vs {on_r[key]}")
    return problems


# ---------------------------------------------------------------------------------------------------------------
# Cases: shipped stacks, the team stack, the bad program, and every corpus program that exists


def _stack_cases() -> list[Any]:
    return [
        pytest.param((ROOT, "dev", "dev"), id="stack-dev"),
        pytest.param((ROOT, "staging", "staging"), id="stack-staging"),
        pytest.param((ROOT, "prod", "prod"), id="stack-prod"),
        pytest.param((ROOT / "stacks" / "teams" / "vision", "dev", "dev"), id="team-vision"),
        pytest.param((ROOT / "tests" / "fixtures" / "bad_program", "dev", "dev"), id="bad-program"),
        pytest.param((ROOT / "tests" / "fixtures" / "bad_program", "dev", REMEDIATING), id="bad-program-remediate"),
    ]


# The shipped configs remediate nothing; this one makes both remediating policies rewrite the bad program.
REMEDIATING = (
    "dev",
    {
        "cost-tags": {
            "enforcementLevel": "remediate",
            "tagDefaults": {"CostCenter": "ml", "Team": "ml", "Project": "p", "Env": "dev", "ExpiresOn": "2027-01-01"},
        },
        "lt-imdsv2": "remediate",
    },
)


def _corpus_cases() -> list[Any]:
    cases = []
    for expect in sorted(CORPUS.glob("*/expect.json")) if CORPUS.is_dir() else []:
        for variant in ("bad", "good"):
            if (expect.parent / f"{variant}.py").is_file():
                cases.append(pytest.param((expect.parent, variant), id=f"{expect.parent.name}-{variant}"))
    return cases


@pytest.mark.parametrize("case", _stack_cases())
def test_stack_verdicts_agree(case: tuple[Path, str, Any], servers: Servers) -> None:
    program, stack, config_name = case
    plan = run_program(program, stack)
    config = _load_config(*config_name) if isinstance(config_name, tuple) else _load_config(config_name)
    off = offline(plan, config)
    on = online.preview(servers.get(config, plan.project, plan.stack), plan)
    assert differences(off, on) == []
    if config_name is REMEDIATING:
        assert online.keys(on.remediations, "policy") == {("cost-tags",), ("lt-imdsv2",)}
    # The pack answered for every resource the engine holds: the program's, the root stack and default providers.
    assert on.analyze_calls == len(online.engine_resources(plan))


CORPUS_CASES = _corpus_cases()


@pytest.mark.skipif(not CORPUS_CASES, reason="no guardrail corpus in this checkout yet (tests/guard/corpus)")
@pytest.mark.parametrize("case", CORPUS_CASES or [pytest.param(None, id="none")])
def test_corpus_verdicts_agree(case: tuple[Path, str], servers: Servers) -> None:
    import runpy

    directory, variant = case
    expect = json.loads((directory / "expect.json").read_text())
    config = _load_config(expect.get("config", "prod"), expect.get("config_overrides"))
    path = directory / f"{variant}.py"
    plan = run_callable(
        lambda: runpy.run_path(str(path), run_name="__main__"),
        project="corpus",
        stack="prod",
        region=str(expect.get("region", "us-east-1")),
    )
    off = offline(plan, config)
    on = online.preview(servers.get(config, plan.project, plan.stack), plan)
    assert differences(off, on) == []


# ---------------------------------------------------------------------------------------------------------------
# Secrets and unknowns: the encoding matters, and breaking it is caught

TOKEN = "AKIA" + "ABCDEFGHIJKLMNOP"


def _secret_program() -> None:
    # A launch template whose user data is a secret holding an access key ID, next to a role policy whose document
    # is unknown at preview (it embeds a KMS key ARN: the key id is chosen by KMS; a bucket ARN would be derived
    # from the bucket's known name).
    key = aws.kms.Key("data", enable_key_rotation=True)
    aws.ec2.LaunchTemplate(
        "lt",
        instance_type="g6e.xlarge",
        user_data=pulumi.Output.secret(base64.b64encode(f"export AWS_ACCESS_KEY_ID={TOKEN}".encode()).decode()),
    )
    role = aws.iam.Role("role", assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": []}))
    aws.iam.RolePolicy(
        "rp",
        role=role.id,
        policy=key.arn.apply(
            lambda arn: json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": arn}]}
            )
        ),
    )


@pytest.fixture(scope="module")
def secret_case(servers: Servers) -> tuple[Plan, dict[str, Any], Any, online.PackServer]:
    plan = run_callable(_secret_program, project="corpus", stack="prod")
    config = _load_config("prod")
    return plan, config, offline(plan, config), servers.get(config, plan.project, plan.stack)


def test_secret_and_unknown_reach_the_pack_as_the_engine_sends_them(secret_case: Any) -> None:
    plan, _config, off, server = secret_case
    lt = next(r for r in online.engine_resources(plan) if r.name == "lt")
    wire = online.marshal_properties(lt.inputs)
    assert wire["userData"][online.SIG_KEY] == online.SECRET_SIG
    assert TOKEN in base64.b64decode(wire["userData"]["value"]).decode()
    rp = next(r for r in online.engine_resources(plan) if r.name == "rp")
    assert online.marshal_properties(rp.inputs)["policy"] == UNKNOWN
    on = online.preview(server, plan)
    lt_urn = "urn:pulumi:prod::corpus::aws:ec2/launchTemplate:LaunchTemplate::lt"
    rp_urn = "urn:pulumi:prod::corpus::aws:iam/rolePolicy:RolePolicy::rp"
    assert ("lt-no-secrets-in-userdata", lt_urn, "mandatory") in online.keys(
        on.violations, "policy", "urn", "enforcement"
    )
    assert ("iam-no-admin-star", rp_urn) in online.keys(on.not_evaluated, "policy", "urn")
    assert differences(off, on) == []


def test_breaking_the_secret_encoding_fails_the_differential(secret_case: Any, monkeypatch: Any) -> None:
    plan, _config, off, server = secret_case
    original = online.marshal_value

    def masked(value: Any) -> Any:
        # What a report shows instead of the value: the engine never sends that to an analyzer.
        return "[secret]" if isinstance(value, online.Secret) else original(value)

    monkeypatch.setattr(online_marshal, "marshal_value", masked)
    problems = differences(off, online.preview(server, plan))
    assert (
        "lt-no-secrets-in-userdata on urn:pulumi:prod::corpus::aws:ec2/launchTemplate:LaunchTemplate::lt: "
        "mandatory violation offline only" in problems
    )


def test_breaking_the_unknown_encoding_fails_the_differential(secret_case: Any, monkeypatch: Any) -> None:
    plan, _config, off, server = secret_case
    original = online.marshal_value

    def known_empty(value: Any) -> Any:
        return "" if value == UNKNOWN else original(value)

    monkeypatch.setattr(online_marshal, "marshal_value", known_empty)
    problems = differences(off, online.preview(server, plan))
    assert (
        "iam-no-admin-star on urn:pulumi:prod::corpus::aws:iam/rolePolicy:RolePolicy::rp: undecided offline only"
        in (problems)
    )


# ---------------------------------------------------------------------------------------------------------------
# The CLI's start-up: info, schemas, config


@pytest.fixture(scope="module")
def info(servers: Servers) -> Any:
    server = servers.get(_load_config("prod"), "gpucloud", "prod")
    return server.analyzer_info(), server.plugin_info()


def test_analyzer_info_lists_every_policy_with_level_and_schema(info: Any) -> None:
    from gpucloud.policies.gpucloud_policies import GUARDRAILS

    analyzer, plugin = info
    assert analyzer.name == "gpucloud-guardrails"
    assert analyzer.supportsConfig is True
    assert plugin.version == "1.21.0"
    policies = {p.name: p for p in online.policy_infos(analyzer)}
    assert sorted(policies) == sorted(g.name for g in GUARDRAILS)
    for g in GUARDRAILS:
        p = policies[g.name]
        assert p.enforcement_level == g.enforcement.value
        assert p.policy_type == ("POLICY_TYPE_STACK" if g.kind == "stack" else "POLICY_TYPE_RESOURCE")
        schema_props = (p.config_schema or {}).get("properties") or {}
        assert set(schema_props) == {*g.config, "enforcementLevel"}


@pytest.mark.parametrize("name", sorted(p.stem for p in CONFIGS.glob("*.json")))
def test_shipped_config_passes_the_cli_validation(name: str, info: Any) -> None:
    analyzer, _ = info
    policies = online.policy_infos(analyzer)
    given = online.parse_config_file(json.loads((CONFIGS / f"{name}.json").read_text()))
    _reconciled, errors = online.reconcile_config(policies, online.initial_config(analyzer), given)
    assert errors == []
    # The CLI accepts a key no policy declares (its schema has no additionalProperties), so a misspelt key would
    # silently keep the default online: every key of a shipped config must be one the policy declares.
    declared = {p.name: set((p.config_schema or {}).get("properties") or {}) for p in policies}
    for policy, entry in given.items():
        if policy == "all":
            continue
        assert policy in declared, f"{name}.json: {policy} is no policy of the pack"
        assert set(entry.properties or {}) <= declared[policy], f"{name}.json: {policy} has undeclared keys"


def test_cli_validation_rejects_wrong_types_and_levels(info: Any) -> None:
    analyzer, _ = info
    policies = online.policy_infos(analyzer)
    given = online.parse_config_file({"gpu-count-cap": {"maxGpusPerPool": "sixteen"}})
    _, errors = online.reconcile_config(policies, online.initial_config(analyzer), given)
    assert errors == ["gpu-count-cap: maxGpusPerPool: 'sixteen' is not of type 'integer'"]
    with pytest.raises(online.OnlineError, match="'strict' is not a valid enforcement level"):
        online.parse_config_file({"efa-shape": "strict"})
    with pytest.raises(online.OnlineError, match="must be a string or object"):
        online.parse_config_file({"efa-shape": 3})


def test_reconciled_config_layers_defaults_initial_config_and_file(info: Any) -> None:
    analyzer, _ = info
    policies = online.policy_infos(analyzer)
    given = online.parse_config_file({"all": "advisory", "gpu-count-cap": {"maxGpusPerPool": 8}})
    reconciled, errors = online.reconcile_config(policies, online.initial_config(analyzer), given)
    assert errors == []
    assert reconciled["gpu-count-cap"].enforcement_level == "advisory"
    assert reconciled["gpu-count-cap"].properties is not None
    assert reconciled["gpu-count-cap"].properties["maxGpusPerPool"] == 8
    assert reconciled["efa-shape"].enforcement_level == "advisory"
    # Without "all", a configurable policy keeps its own level: the pack's initial config carries it (an entry
    # without a level reaches the CLI as ADVISORY and would downgrade every mandatory policy with a schema).
    reconciled, _ = online.reconcile_config(policies, online.initial_config(analyzer), {})
    assert reconciled["gpu-count-cap"].enforcement_level == "mandatory"
    assert online.initial_config(analyzer)["gpu-count-cap"].enforcement_level == "mandatory"
    efa = reconciled["efa-shape"].properties or {}
    assert (efa["minNodes"], efa["workloads"]) == (2, ["training"])


# ---------------------------------------------------------------------------------------------------------------
# Launch: arguments, environment, bounded waits


def test_launch_is_the_cli_command_line() -> None:
    launch = online.launch_spec(online.PACK_DIR, project="gpucloud", stack="prod", environ={"PATH": "/usr/bin"})
    venv = (ROOT / ".venv").resolve()
    assert launch.python == str(venv / "bin" / "python")
    assert launch.args == ("-u", "-m", "pulumi.policy", online.ENGINE_ADDRESS, str(online.PACK_DIR))
    assert launch.cwd == online.PACK_DIR
    assert launch.env["PULUMI_PROJECT"] == "gpucloud"
    assert launch.env["PULUMI_STACK"] == "prod"
    assert launch.env["PULUMI_DRY_RUN"] == "true"
    assert launch.env["PULUMI_ORGANIZATION"] == "organization"
    assert launch.env["VIRTUAL_ENV"] == str(venv)
    # The language host appends the CLI's own environment last, and Go keeps the last duplicate: PATH stays the CLI's.
    assert launch.env["PATH"] == "/usr/bin"
    assert "PULUMI_CONFIG" not in launch.env


def test_parse_port_as_the_cli() -> None:
    assert online.parse_port("\x1b]9;4;3;\x1b\\ 40123 \r") == 40123
    with pytest.raises(online.OnlineError, match="invalid port number 70000"):
        online.parse_port("70000")
    with pytest.raises(online.OnlineError, match="where its port belongs"):
        online.parse_port("Traceback (most recent call last):")


def _fake_pack(tmp_path: Path, body: str) -> online.Launch:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text(body)
    launch = online.launch_spec(tmp_path, project="p", stack="s", python=sys.executable)
    return launch


HUNG_PACK = (
    "import time, grpc\n"
    "from concurrent import futures\n"
    "from pulumi.runtime.proto import analyzer_pb2_grpc\n"
    "class Hung(analyzer_pb2_grpc.AnalyzerServicer):\n"
    "    def GetAnalyzerInfo(self, request, context):\n"
    "        time.sleep(60)\n"
    "server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))\n"
    "analyzer_pb2_grpc.add_AnalyzerServicer_to_server(Hung(), server)\n"
    "port = server.add_insecure_port('127.0.0.1:0')\n"
    "server.start()\n"
    "print(port, flush=True)\n"
    "time.sleep(60)\n"
)


def test_a_pack_that_never_prints_a_port_fails_within_the_startup_timeout(tmp_path: Path) -> None:
    launch = _fake_pack(tmp_path, "import time\ntime.sleep(60)\n")
    server = online.PackServer(launch, startup_timeout=2)
    started = time.monotonic()
    with pytest.raises(online.OnlineError, match="printed no port within 2 s"):
        server.start()
    assert time.monotonic() - started < 10
    assert server.proc is not None and server.proc.poll() is not None


def test_a_hung_pack_fails_the_rpc_within_its_deadline(tmp_path: Path) -> None:
    # A server that accepts the connection and never answers: the RPC deadline, not the test runner, ends it.
    launch = _fake_pack(tmp_path, HUNG_PACK)
    started = time.monotonic()
    with online.PackServer(launch, rpc_timeout=1.5) as server:
        with pytest.raises(online.OnlineError, match="did not answer GetAnalyzerInfo within 2 s"):
            server.analyzer_info()
        proc = server.proc
    assert time.monotonic() - started < 20
    assert proc is not None and proc.poll() is not None


def test_the_pack_listens_on_loopback_only(servers: Servers) -> None:
    import socket

    server = servers.get(_load_config("prod"), "gpucloud", "prod")
    addresses: set[str] = set()
    with contextlib.suppress(OSError):
        addresses |= set(socket.gethostbyname_ex(socket.gethostname())[2])
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        # The address of the default route (a UDP connect sends nothing).
        probe.connect(("192.0.2.1", 9))
        addresses.add(probe.getsockname()[0])
    addresses = {a for a in addresses if not a.startswith("127.")}
    if not addresses:
        pytest.skip("this machine has no address besides loopback")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass
    for address in addresses:
        with pytest.raises(OSError), socket.create_connection((address, server.port), timeout=2):
            pass


def test_a_pack_that_crashes_at_start_reports_its_error(tmp_path: Path) -> None:
    launch = _fake_pack(tmp_path, "raise SystemExit('pack broke: no module named gpucloud')\n")
    with pytest.raises(online.OnlineError, match="exited with status 1 before printing its port"):
        online.PackServer(launch, startup_timeout=30).start()


def test_pack_virtualenv_is_resolved_against_the_pack_directory(tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n  options:\n    virtualenv: venv\n")
    assert online.pack_virtualenv(tmp_path) == tmp_path.resolve() / "venv"
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    assert online.pack_virtualenv(tmp_path) is None
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: nodejs\n")
    with pytest.raises(online.OnlineError, match="runtime is 'nodejs'"):
        online.pack_virtualenv(tmp_path)


def test_the_pack_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    _fake_pack(tmp_path, HUNG_PACK)
    # A parent that starts the pack as the harness does, reports the pack's pid, and is then killed outright.
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from gpucloud.guard import online\n"
        f"launch = online.launch_spec(Path({str(tmp_path)!r}), project='p', stack='s', python=sys.executable)\n"
        "server = online.PackServer(launch).start()\n"
        "print(server.proc.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=ROOT)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the pack outlived the process that started it")
