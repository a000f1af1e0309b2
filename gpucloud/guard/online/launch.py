"""Launch: the pack started as the Pulumi CLI starts it (interpreter, environment, port), and the Analyzer client."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpucloud.guard.online.common import _CHANNEL_OPTIONS, ENGINE_ADDRESS, PACK_DIR, OnlineError, _level_enum
from gpucloud.guard.online.config import PolicyConfig
from gpucloud.guard.online.marshal import EngineResource

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
