"""The policy pack on the Pulumi CLI's path: started as the CLI starts it, asked over the Analyzer gRPC protocol.

What each step mirrors (Pulumi v3.260 sources; the installed SDK is 3.272):

- Launch (pkg/resource/plugin/analyzer_plugin.go NewPolicyAnalyzer, plugin.go newPlugin, and the Python language
  host's RunPlugin in sdk/python/cmd/pulumi-language-python/main.go): the interpreter of the virtualenv named by
  PulumiPolicy.yaml's ``runtime.options.virtualenv`` (relative to the pack; a policy pack gets no default venv),
  run as ``python -u -m pulumi.policy <engine address> <pack dir>`` in the pack directory, with the virtualenv
  activated (sdk/python/toolchain ActivateVirtualEnv), then PULUMI_ORGANIZATION/PROJECT/STACK/DRY_RUN/CONFIG, then
  the CLI's own environment (later entries win, as in Go's os/exec). The first stdout line is the port
  (plugin.go parsePort); the client dials 127.0.0.1:<port>, calls Handshake and ConfigureStack (both optional:
  UNIMPLEMENTED is fine), then GetAnalyzerInfo, GetPluginInfo and Configure.
- Config (pkg/resource/analyzer/config.go): the --policy-pack-config file is parsed like parsePolicyPackConfig and
  reconciled like ReconcilePolicyPackConfig (schema defaults, the pack's initial config, the file; "all" first),
  each policy's properties validated against ``{"type": "object", "properties": ..., "required": ...}``.
- Resources (pkg/resource/deploy/step_generator.go): Remediate then Analyze per resource on its checked inputs,
  each remediation replacing the inputs; AnalyzeStack once on every resource's preview outputs, with parent,
  dependencies and property dependencies. Properties are marshalled as MarshalProperties does with KeepUnknowns
  and KeepSecrets (sdk/go/common/resource/plugin/rpc.go): an unknown as the unknown-string sentinel, a secret as
  ``{sig: secret, value: v}``, top-level ``__`` keys skipped except for Remediate. Custom resources carry their
  provider (the default provider ``pulumi:providers:<pkg>::default_<version>`` built from the stack config, as
  default_providers.go does, when the program named none); the root stack and the default providers are resources
  of the stack too.

The process stops by itself: it dies with the process that started it (PR_SET_PDEATHSIG through setpriv on
Linux), is killed when the server object closes, and a watchdog kills it after ``lifetime`` seconds whatever
happens. Every RPC has a deadline, so a hung pack fails a caller within a bounded time.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import importlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from gpucloud.guard.packs import DEFAULT_PACK_DIR
from gpucloud.plan.model import SECRET, UNKNOWN, UNKNOWN_OUTPUT, Plan, ResourceRecord

PACK_DIR = DEFAULT_PACK_DIR
LEVELS = ("advisory", "mandatory", "remediate", "disabled")
# The Python policy runner parses the engine address but never dials it (pulumi/policy/__main__.py), so no engine
# server is needed; the argument is still passed where the CLI passes it.
ENGINE_ADDRESS = "127.0.0.1:0"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"
CANT_RUN = "can't run "
# As the CLI's gRPC client (rpcutil.GrpcChannelOptions) and pulumi_policy: 400 MB messages, for large stacks.
_MAX_MESSAGE = 400 * 1024 * 1024
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", _MAX_MESSAGE), ("grpc.max_send_message_length", _MAX_MESSAGE)]


class OnlineError(Exception):
    """The pack did not start, did not answer in time, or answered an RPC with an error."""


# ---------------------------------------------------------------------------------------------------------------
# Launch


@dataclass(frozen=True)
class Launch:
    """How the CLI starts a policy pack: program, arguments, working directory and environment."""

    python: str
    args: tuple[str, ...]
    cwd: Path
    env: dict[str, str]
    virtualenv: Path | None


def _policy_project(pack_dir: Path) -> dict[str, Any]:
    path = pack_dir / "PulumiPolicy.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise OnlineError(f"{path}: cannot read the policy project ({exc})") from None
    if not isinstance(data, dict):
        raise OnlineError(f"{path}: must be a mapping with a 'runtime'")
    return data


def pack_virtualenv(pack_dir: Path) -> Path | None:
    """The virtualenv the CLI runs the pack in: ``runtime.options.virtualenv``, relative to the pack directory.

    Policy packs get no default virtualenv (RunPlugin parses options with isPlugin=false), so without the option
    the CLI uses the python3 on PATH.
    """
    pack_dir = pack_dir.resolve()
    runtime = _policy_project(pack_dir).get("runtime")
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise OnlineError(f"{pack_dir / 'PulumiPolicy.yaml'}: runtime is {name!r}; this harness runs Python packs")
    options = (runtime.get("options") if isinstance(runtime, dict) else None) or {}
    toolchain = options.get("toolchain", "pip")
    if toolchain != "pip":
        raise OnlineError(f"{pack_dir / 'PulumiPolicy.yaml'}: toolchain {toolchain!r} is not supported here (pip)")
    venv = options.get("virtualenv")
    if venv is None:
        return None
    if not isinstance(venv, str):
        raise OnlineError(f"{pack_dir / 'PulumiPolicy.yaml'}: runtime.options.virtualenv must be a string")
    # filepath.Join cleans the result: policies/../.venv is <repo>/.venv.
    return Path(os.path.normpath(venv if os.path.isabs(venv) else pack_dir / venv))


def _activate(environ: Mapping[str, str], venv: Path) -> list[tuple[str, str]]:
    # toolchain.ActivateVirtualEnv: venv bin first on PATH, PYTHONHOME dropped, VIRTUAL_ENV set.
    out: list[tuple[str, str]] = []
    has_path = False
    for key, value in environ.items():
        upper = key.upper()
        if upper == "PATH":
            has_path = True
            out.append((key, f"{venv / 'bin'}{os.pathsep}{value}"))
        elif upper not in ("PYTHONHOME", "VIRTUAL_ENV"):
            out.append((key, value))
    if not has_path:
        out.append(("PATH", str(venv / "bin")))
    out.append(("VIRTUAL_ENV", str(venv)))
    return out


def launch_spec(
    pack_dir: Path = PACK_DIR,
    *,
    project: str,
    stack: str,
    organization: str = "organization",
    dry_run: bool = True,
    config: Mapping[str, str] | None = None,
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Launch:
    """The CLI's command line for the pack; ``python`` overrides the virtualenv's interpreter (a checkout whose
    pack virtualenv lives elsewhere), nothing else."""
    pack_dir = pack_dir.resolve()
    venv = pack_virtualenv(pack_dir)
    base = dict(os.environ if environ is None else environ)
    pairs = _activate(base, venv) if venv is not None else list(base.items())
    stack_env = {
        "PULUMI_ORGANIZATION": organization,
        "PULUMI_PROJECT": project,
        "PULUMI_STACK": stack,
        "PULUMI_DRY_RUN": "true" if dry_run else "false",
        "PULUMI_CONFIG": json.dumps(dict(config)) if config else "",
    }
    pairs += [(k, v) for k, v in stack_env.items() if v]
    # The language host appends the CLI's environment last; Go's os/exec keeps the last value of a duplicate key.
    pairs += list(base.items())
    env: dict[str, str] = {}
    for key, value in pairs:
        env.pop(key, None)
        env[key] = value
    if python is None:
        python = str(venv / "bin" / "python") if venv is not None else "python3"
    args = ("-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack_dir))
    return Launch(python=python, args=args, cwd=pack_dir, env=env, virtualenv=venv)


def parse_port(text: str) -> int:
    """plugin.go parsePort: terminal progress escapes stripped, whitespace trimmed, 1..65535."""
    for esc in ("\x1b]9;4;3;\x1b\\", "\x1b]9;4;0;\x1b\\"):
        text = text.replace(esc, "")
    text = text.strip()
    try:
        port = int(text)
    except ValueError:
        raise OnlineError(f"the policy pack wrote {text!r} to stdout where its port belongs") from None
    if not 0 < port <= 65535:
        raise OnlineError(f"the policy pack wrote an invalid port number {port}")
    return port


def _with_parent(command: list[str]) -> list[str]:
    """The command, made to die with this process where Linux allows: ``setpriv --pdeathsig KILL`` sets the
    parent-death signal and execs the pack (the signal survives exec). A preexec_fn would do it in-process, but
    forking a process that runs gRPC threads with Python code between fork and exec can crash."""
    setpriv = shutil.which("setpriv") if sys.platform == "linux" else None
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


class PackServer:
    """One running policy pack and the real Analyzer client stub connected to it."""

    def __init__(
        self, launch: Launch, *, startup_timeout: float = 60.0, rpc_timeout: float = 60.0, lifetime: float = 900.0
    ) -> None:
        self.launch = launch
        self.startup_timeout = startup_timeout
        self.rpc_timeout = rpc_timeout
        self.lifetime = lifetime
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.channel: Any = None
        self.stub: Any = None
        self._output: collections.deque[str] = collections.deque(maxlen=200)
        self._watchdog: threading.Timer | None = None

    # -- process ---------------------------------------------------------------------------------------------

    def start(self) -> PackServer:
        import grpc
        from pulumi.runtime.proto import analyzer_pb2_grpc

        self.proc = subprocess.Popen(
            _with_parent([self.launch.python, *self.launch.args]),
            cwd=self.launch.cwd,
            env=self.launch.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,
        )
        self._watchdog = threading.Timer(self.lifetime, self.kill)
        self._watchdog.daemon = True
        self._watchdog.start()
        deadline = time.monotonic() + self.startup_timeout
        try:
            self.port = parse_port(self._read_port_line(deadline))
        except OnlineError:
            self.close()
            raise
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._drain, args=(stream,), daemon=True).start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}", options=_CHANNEL_OPTIONS)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=max(0.1, deadline - time.monotonic()))
        except grpc.FutureTimeoutError:
            self.close()
            raise OnlineError(f"the policy pack on port {self.port} never accepted a connection") from None
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        return self

    def _read_port_line(self, deadline: float) -> str:
        # One byte at a time, as the CLI reads it, so nothing after the newline is consumed here.
        assert self.proc is not None and self.proc.stdout is not None and self.proc.stderr is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        line = b""
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(timeout=remaining):
                    raise OnlineError(
                        f"the policy pack printed no port within {self.startup_timeout:.0f} s{self._tail_hint()}"
                    )
                byte = self.proc.stdout.read(1)
                if not byte:
                    code = self.proc.wait(timeout=5)
                    err = self.proc.stderr.read().decode(errors="replace")
                    raise OnlineError(f"the policy pack exited with status {code} before printing its port:\n{err}")
                if byte == b"\n":
                    return line.decode(errors="replace")
                line += byte
        finally:
            selector.close()

    def _drain(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            self._output.append(raw.decode(errors="replace").rstrip())

    def _tail_hint(self) -> str:
        tail = "\n".join(list(self._output)[-20:])
        return f"; its last output:\n{tail}" if tail else ""

    def output(self) -> str:
        return "\n".join(self._output)

    def kill(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        self.kill()
        for stream in (self.proc.stdout, self.proc.stderr) if self.proc is not None else ():
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> PackServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- RPCs ------------------------------------------------------------------------------------------------

    def call(self, method: str, request: Any, *, optional: bool = False) -> Any:
        """One RPC with a deadline; UNIMPLEMENTED answers None when the CLI treats the RPC as optional."""
        import grpc

        if self.stub is None:
            raise OnlineError("the policy pack is not running")
        try:
            return getattr(self.stub, method)(request, timeout=self.rpc_timeout)
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            if optional and code == grpc.StatusCode.UNIMPLEMENTED:
                return None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise OnlineError(
                    f"the policy pack did not answer {method} within {self.rpc_timeout:.0f} s{self._tail_hint()}"
                ) from None
            details = exc.details() if hasattr(exc, "details") else str(exc)
            raise OnlineError(f"{method} failed: {code}: {details}{self._tail_hint()}") from None

    def handshake(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        root = str(self.launch.cwd)
        request = analyzer_pb2.AnalyzerHandshakeRequest(
            engine_address=ENGINE_ADDRESS, root_directory=root, program_directory=root
        )
        return self.call("Handshake", request, optional=True)

    def configure_stack(
        self, *, project: str, stack: str, organization: str = "organization", dry_run: bool = True
    ) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        request = analyzer_pb2.AnalyzerStackConfigureRequest(
            stack=stack, project=project, organization=organization, dry_run=dry_run
        )
        return self.call("ConfigureStack", request, optional=True)

    def analyzer_info(self) -> Any:
        from google.protobuf import empty_pb2

        return self.call("GetAnalyzerInfo", empty_pb2.Empty())

    def plugin_info(self) -> Any:
        from google.protobuf import empty_pb2

        return self.call("GetPluginInfo", empty_pb2.Empty())

    def configure(self, config: Mapping[str, PolicyConfig]) -> None:
        """analyzer.Configure: nothing is sent for an empty config."""
        from pulumi.runtime.proto import analyzer_pb2

        if not config:
            return
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, entry in config.items():
            pc = analyzer_pb2.PolicyConfig(enforcementLevel=_level_enum(entry.enforcement_level))
            pc.properties.update(entry.properties or {})
            request.policyConfig[name].CopyFrom(pc)
        self.call("Configure", request)

    def analyze(self, r: EngineResource) -> Any:
        return self.call("Analyze", r.analyze_request(internal_keys=False))

    def remediate(self, r: EngineResource) -> Any:
        return self.call("Remediate", r.analyze_request(internal_keys=True))

    def analyze_stack(self, resources: Sequence[EngineResource]) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        request = analyzer_pb2.AnalyzeStackRequest(resources=[r.stack_resource() for r in resources])
        return self.call("AnalyzeStack", request)


def _level_enum(level: str) -> Any:
    from pulumi.runtime.proto import analyzer_pb2

    return analyzer_pb2.EnforcementLevel.Value(level.upper())


def _level_name(value: int) -> str:
    from pulumi.runtime.proto import analyzer_pb2

    return str(analyzer_pb2.EnforcementLevel.Name(value)).lower()


# ---------------------------------------------------------------------------------------------------------------
# Policy pack config, the CLI's way


@dataclass
class PolicyConfig:
    """plugin.AnalyzerPolicyConfig: an enforcement level ("" when not given) and config properties."""

    enforcement_level: str = ""
    properties: dict[str, Any] | None = None


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    enforcement_level: str
    config_schema: dict[str, Any] | None
    policy_type: str
    severity: str


def policy_infos(info: Any) -> list[PolicyInfo]:
    """GetAnalyzerInfo's policies as the CLI converts them: ``enforcementLevel`` injected into every schema."""
    from google.protobuf import json_format
    from pulumi.runtime.proto import analyzer_pb2

    out = []
    for p in info.policies:
        schema: dict[str, Any] | None = None
        if info.supportsConfig:
            props = json_format.MessageToDict(p.configSchema.properties) if p.HasField("configSchema") else {}
            schema = {"properties": dict(props), "required": list(p.configSchema.required)}
            schema["properties"]["enforcementLevel"] = {"type": "string", "enum": list(LEVELS)}
        out.append(
            PolicyInfo(
                name=p.name,
                enforcement_level=_level_name(p.enforcementLevel),
                config_schema=schema,
                policy_type=analyzer_pb2.PolicyType.Name(p.policy_type),
                severity=analyzer_pb2.PolicySeverity.Name(p.severity),
            )
        )
    return sorted(out, key=lambda p: p.name)


def initial_config(info: Any) -> dict[str, PolicyConfig]:
    from google.protobuf import json_format

    out = {}
    for name, pc in info.initialConfig.items():
        out[name] = PolicyConfig(_level_name(pc.enforcementLevel), json_format.MessageToDict(pc.properties))
    return out


def parse_config_file(data: Any) -> dict[str, PolicyConfig]:
    """parsePolicyPackConfig: a level string or an object whose ``enforcementLevel`` is split off; an
    ``environments`` key is ESC's, not a policy's."""
    if not isinstance(data, Mapping):
        raise OnlineError("the policy pack config must be a JSON object")
    out: dict[str, PolicyConfig] = {}
    for key, value in data.items():
        if key == "environments":
            continue
        if isinstance(value, str):
            if value not in LEVELS:
                raise OnlineError(f"parsing enforcement level for {key!r}: {value!r} is not a valid enforcement level")
            out[key] = PolicyConfig(value, None)
        elif isinstance(value, Mapping):
            props = dict(value)
            level = props.pop("enforcementLevel", "")
            if level != "" and (not isinstance(level, str) or level not in LEVELS):
                raise OnlineError(f"parsing enforcement level for {key!r}: {level!r} is not a valid enforcement level")
            if level or props:
                out[key] = PolicyConfig(level, props or None)
        else:
            raise OnlineError(f"parsing {key!r}: {value!r} is not a valid value; must be a string or object")
    return out


def _apply(result: dict[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> None:
    everything = given.get("all")
    if everything is not None and everything.enforcement_level in LEVELS:
        for name, entry in result.items():
            result[name] = PolicyConfig(everything.enforcement_level, entry.properties)
    for name, entry in given.items():
        current = result.get(name, PolicyConfig())
        level = entry.enforcement_level if entry.enforcement_level in LEVELS else current.enforcement_level
        props = dict(current.properties) if current.properties is not None else None
        if entry.properties:
            props = {**(props or {}), **entry.properties}
        result[name] = PolicyConfig(level, props)


def reconcile_config(
    policies: Sequence[PolicyInfo], initial: Mapping[str, PolicyConfig], given: Mapping[str, PolicyConfig] | None
) -> tuple[dict[str, PolicyConfig], list[str]]:
    """ReconcilePolicyPackConfig: (the config sent to Configure, the validation errors that stop the CLI)."""
    import jsonschema

    result: dict[str, PolicyConfig] = {}
    for p in policies:
        defaults = {
            k: v["default"] for k, v in ((p.config_schema or {}).get("properties") or {}).items() if "default" in v
        }
        result[p.name] = PolicyConfig(p.enforcement_level, defaults or None)
    if initial:
        _apply(result, initial)
    if given:
        _apply(result, given)
    errors: list[str] = []
    for p in policies:
        if p.config_schema is None:
            continue
        schema: dict[str, Any] = {"type": "object"}
        if p.config_schema.get("properties"):
            schema["properties"] = p.config_schema["properties"]
        if p.config_schema.get("required"):
            schema["required"] = p.config_schema["required"]
        props = (result.get(p.name) or PolicyConfig()).properties or {}
        for err in jsonschema.Draft7Validator(schema).iter_errors(props):
            where = ".".join(str(x) for x in err.absolute_path) or "(root)"
            errors.append(f"{p.name}: {where}: {err.message}")
    return result, sorted(errors)


# ---------------------------------------------------------------------------------------------------------------
# Resources, the engine's way


class Secret:
    """An engine secret (resource.Secret): marshalled as the secret signature object."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other.value == self.value

    def __repr__(self) -> str:
        return f"Secret({self.value!r})"


def marshal_value(value: Any) -> Any:
    """MarshalPropertyValue with KeepUnknowns and KeepSecrets, to the JSON shape a protobuf Struct holds.

    Unknowns already hold the unknown-string sentinel (the SDK sends every unknown as that string and the engine
    marshals a computed string back to it), so they pass through unchanged.
    """
    if isinstance(value, Secret):
        return {SIG_KEY: SECRET_SIG, "value": marshal_value(value.value)}
    if isinstance(value, Mapping):
        return {str(k): marshal_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [marshal_value(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    return str(value)


def marshal_properties(props: Mapping[str, Any], *, internal_keys: bool = False) -> Any:
    from google.protobuf import struct_pb2

    struct = struct_pb2.Struct()
    struct.update(
        {
            k: marshal_value(v)
            for k, v in props.items()
            if internal_keys or not (isinstance(k, str) and k.startswith("__"))
        }
    )
    return struct


def unmarshal_properties(struct: Any) -> dict[str, Any]:
    """A Struct back to engine values, secrets as Secret (UnmarshalProperties with KeepSecrets)."""
    from google.protobuf import json_format

    return {k: _unmarshal(v) for k, v in json_format.MessageToDict(struct).items()}


def _unmarshal(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return Secret(_unmarshal(value.get("value")))
        return {k: _unmarshal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarshal(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Engine values with secrets unwrapped: what a policy reads."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def engine_inputs(record: ResourceRecord) -> dict[str, Any]:
    """The checked inputs the engine holds: the recorded view with each masked secret back as Secret(plaintext)."""
    if record.secret_inputs is None:
        return dict(record.inputs)
    return dict(_rewrap(record.inputs, record.secret_inputs))


def _rewrap(masked: Any, revealed: Any) -> Any:
    if isinstance(masked, str) and masked == SECRET and revealed != SECRET:
        return Secret(revealed)
    if isinstance(masked, dict) and isinstance(revealed, dict):
        return {k: _rewrap(v, revealed.get(k)) for k, v in masked.items()}
    if isinstance(masked, list) and isinstance(revealed, list):
        return [_rewrap(m, r) for m, r in zip(masked, revealed, strict=False)]
    return masked


@dataclass
class EngineResource:
    """plugin.AnalyzerStackResource: what the engine sends about one resource."""

    urn: str
    type: str
    name: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any] | None = None
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    provider: EngineResource | None = None

    def _options(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        # The options the step generator fills in; retainOnDelete and deletedWith have no field in the protocol.
        return analyzer_pb2.AnalyzerResourceOptions(
            protect=self.protect,
            ignoreChanges=self.ignore_changes,
            deleteBeforeReplace=False,
            deleteBeforeReplaceDefined=False,
            additionalSecretOutputs=[],
            aliases=[],
            customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
            parent=self.parent,
        )

    def _provider(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        if self.provider is None:
            return None
        p = self.provider
        return analyzer_pb2.AnalyzerProviderResource(
            type=p.type, urn=p.urn, name=p.name, properties=marshal_properties(p.inputs)
        )

    def analyze_request(self, *, internal_keys: bool) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        return analyzer_pb2.AnalyzeRequest(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=marshal_properties(self.inputs, internal_keys=internal_keys),
            options=self._options(),
            provider=self._provider(),
        )

    def stack_resource(self) -> Any:
        from pulumi.runtime.proto import analyzer_pb2

        deps = {
            k: analyzer_pb2.AnalyzerPropertyDependencies(urns=list(v))
            for k, v in self.property_dependencies.items()
            if v
        }
        return analyzer_pb2.AnalyzerResource(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=marshal_properties(self.outputs if self.outputs is not None else self.inputs),
            options=self._options(),
            provider=self._provider(),
            parent=self.parent,
            dependencies=list(self.dependencies),
            propertyDependencies=deps,
        )


def stack_urn(plan: Plan) -> str:
    return f"urn:pulumi:{plan.stack}::{plan.project}::{STACK_TYPE}::{plan.project}-{plan.stack}"


def _config_value(value: Any) -> Any:
    # Config values reach a provider as strings (config.Value); a secure value is a secret.
    if isinstance(value, dict) and set(value) == {"secure"}:
        return Secret("offline-secret-placeholder")
    return value if isinstance(value, str) else json.dumps(value)


def _package_version(package: str) -> str | None:
    try:
        return metadata.version(f"pulumi_{package.replace('-', '_')}")
    except metadata.PackageNotFoundError:
        return None


def default_provider(plan: Plan, package: str) -> EngineResource:
    """default_providers.go: the package's stack config (namespace stripped) plus its version, named
    ``default_<major>_<minor>_<patch>``."""
    inputs: dict[str, Any] = {}
    for key, value in plan.config.items():
        namespace, _, name = key.partition(":")
        if namespace == package and name:
            inputs[name] = _config_value(value)
    version = _package_version(package)
    name = "default"
    if version:
        inputs["version"] = version
        name += "_" + "_".join(version.split("+")[0].split("-")[0].split(".")[:3])
    type_ = f"{PROVIDER_PREFIX}{package}"
    return EngineResource(
        urn=f"urn:pulumi:{plan.stack}::{plan.project}::{type_}::{name}",
        type=type_,
        name=name,
        custom=True,
        inputs=inputs,
    )


def _outputs_marker_to_engine(value: Any) -> Any:
    if value == UNKNOWN_OUTPUT:
        return UNKNOWN
    if isinstance(value, dict):
        return {k: _outputs_marker_to_engine(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_outputs_marker_to_engine(v) for v in value]
    return value


def engine_resources(plan: Plan) -> list[EngineResource]:
    """Every resource of the stack as the engine holds it in a preview, in registration order: the root stack,
    each default provider before its first user, then the program's resources."""
    root = stack_urn(plan)
    stack = EngineResource(
        urn=root,
        type=STACK_TYPE,
        name=f"{plan.project}-{plan.stack}",
        custom=False,
        inputs={},
        outputs=_outputs_marker_to_engine(dict(plan.outputs)),
    )
    out: list[EngineResource] = [stack]
    by_urn = {r.urn: r for r in plan.resources}
    built: dict[str, EngineResource] = {}
    defaults: dict[str, EngineResource] = {}

    def provider_for(record: ResourceRecord) -> EngineResource | None:
        if not record.custom or record.type.startswith(PROVIDER_PREFIX):
            return None
        if record.provider:
            urn = record.provider.rsplit("::", 1)[0]
            if urn in built:
                return built[urn]
            ref = by_urn.get(urn)
            if ref is None:
                return None
            return EngineResource(urn=ref.urn, type=ref.type, name=ref.name, custom=True, inputs=engine_inputs(ref))
        package = record.type.split(":", 1)[0]
        if package not in defaults:
            defaults[package] = default_provider(plan, package)
            out.append(defaults[package])
        return defaults[package]

    for record in plan.resources:
        provider = provider_for(record)
        r = EngineResource(
            urn=record.urn,
            type=record.type,
            name=record.name,
            custom=record.custom,
            inputs=engine_inputs(record),
            parent=record.parent or "",
            dependencies=list(record.dependencies),
            property_dependencies={k: list(v) for k, v in record.property_dependencies.items()},
            protect=record.protect,
            ignore_changes=list(record.ignore_changes),
            provider=provider,
        )
        built[r.urn] = r
        out.append(r)
    return out


@functools.cache
def computed_outputs(type_: str) -> frozenset[str]:
    """Outputs the provider computes when the program leaves them unset, from the provider SDK's resource class:
    an output typed ``Output[T]`` (not ``Output[Optional[T]]``) is required in the provider schema, which for a
    bridged provider means computed (Optional+Computed or output-only). Empty when the SDK is not installed."""
    package, _, rest = type_.partition(":")
    module_token, _, class_name = rest.partition(":")
    parts = module_token.split("/")[:-1]
    module_name = f"pulumi_{package.replace('-', '_')}" + "".join(f".{p}" for p in parts if p != "index")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError):
        return frozenset()
    out = set()
    for attr in vars(cls).values():
        getter = attr.fget if isinstance(attr, property) else None
        name = getattr(getter, "_pulumi_name", None)
        if name and "Optional" not in str(getattr(getter, "__annotations__", {}).get("return", "Optional")):
            out.add(name)
    return frozenset(out)


def preview_outputs(r: EngineResource) -> dict[str, Any]:
    """What a preview holds as a resource's outputs (CreateStep.Apply with Preview: the provider's planned state):
    the (remediated) checked inputs echoed, and every computed output the program left unset as unknown. The root
    stack's outputs are its exports; a component's are what it registered, which the recorded plan does not keep,
    so its inputs stand in (no policy reads a component's properties)."""
    if r.type == STACK_TYPE:
        return dict(r.outputs or {})
    if not r.custom or r.type.startswith(PROVIDER_PREFIX):
        return dict(r.inputs)
    unknown = {name: UNKNOWN for name in computed_outputs(r.type) if name not in r.inputs}
    return {**unknown, **r.inputs}


# ---------------------------------------------------------------------------------------------------------------
# A whole preview


@dataclass
class OnlineResult:
    """What the CLI would print for one preview: violations, "can't run" diagnostics and remediations."""

    violations: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: list[dict[str, Any]] = field(default_factory=list)
    remediations: list[dict[str, Any]] = field(default_factory=list)
    not_applicable: list[dict[str, Any]] = field(default_factory=list)
    analyze_calls: int = 0


def _collect(out: OnlineResult, response: Any, urn_of: Any) -> None:
    for d in response.diagnostics:
        urn = urn_of(d.urn)
        if d.message.startswith(CANT_RUN):
            out.not_evaluated.append({"policy": d.policyName, "urn": urn, "reason": d.message})
            continue
        level = _level_name(d.enforcementLevel)
        out.violations.append(
            {
                "policy": d.policyName,
                "urn": urn,
                "enforcement": "mandatory" if level == "remediate" else level,
                "message": d.message,
            }
        )
    for n in response.not_applicable:
        out.not_applicable.append({"policy": n.policy_name, "reason": n.reason})


def preview(server: PackServer, plan: Plan) -> OnlineResult:
    """Drive one preview of ``plan`` through the pack, as the step generator does."""
    out = OnlineResult()
    resources = engine_resources(plan)
    for r in resources:
        response = server.remediate(r)
        for rem in response.remediations:
            if rem.diagnostic:
                out.not_evaluated.append({"policy": rem.policyName, "urn": r.urn, "reason": rem.diagnostic})
                continue
            r.inputs = unmarshal_properties(rem.properties)
            out.remediations.append({"policy": rem.policyName, "urn": r.urn, "properties": plain(r.inputs)})
        _collect(out, server.analyze(r), lambda _urn, urn=r.urn: urn)
        out.analyze_calls += 1
        r.outputs = preview_outputs(r)
    present = {r.urn for r in resources}
    root = resources[0].urn
    _collect(out, server.analyze_stack(resources), lambda urn: urn if urn in present else root)
    return out


def keys(items: Iterable[Mapping[str, Any]], *fields: str) -> set[tuple[Any, ...]]:
    return {tuple(i[f] for f in fields) for i in items}


@contextlib.contextmanager
def serve(
    plan_project: str,
    plan_stack: str,
    *,
    pack_dir: Path = PACK_DIR,
    python: str | None = None,
    config: Mapping[str, Any] | None = None,
    rpc_timeout: float = 60.0,
) -> Iterator[tuple[PackServer, list[PolicyInfo], dict[str, PolicyConfig]]]:
    """Start the pack, run the CLI's start-up calls and Configure with ``config`` (the --policy-pack-config
    JSON); yields (server, policies, the reconciled config). Invalid config raises OnlineError, as the CLI stops."""
    launch = launch_spec(pack_dir, project=plan_project, stack=plan_stack, python=python)
    server = PackServer(launch, rpc_timeout=rpc_timeout)
    with server:
        server.handshake()
        server.configure_stack(project=plan_project, stack=plan_stack)
        info = server.analyzer_info()
        server.plugin_info()
        policies = policy_infos(info)
        reconciled, errors = reconcile_config(policies, initial_config(info), parse_config_file(config or {}))
        if errors:
            raise OnlineError("invalid policy pack config: " + "; ".join(errors))
        server.configure(reconciled)
        yield server, policies, reconciled


__all__ = [
    "PACK_DIR",
    "EngineResource",
    "Launch",
    "OnlineError",
    "OnlineResult",
    "PackServer",
    "PolicyConfig",
    "PolicyInfo",
    "Secret",
    "engine_inputs",
    "engine_resources",
    "launch_spec",
    "marshal_properties",
    "pack_virtualenv",
    "parse_config_file",
    "parse_port",
    "policy_infos",
    "preview",
    "reconcile_config",
    "serve",
    "unmarshal_properties",
]
