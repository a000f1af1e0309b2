"""Runs any Pulumi Python program in-process under a recording mock runtime and returns the recorded plan."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
import runpy
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from gpucloud.fileio import decode_text
from gpucloud.plan import autoname, k8s_components, lazy_sdk, options, refs, remote, transforms
from gpucloud.plan.deadline import Deadline, PlanTimeout, TimeoutSettingError, resolve_timeout
from gpucloud.plan.model import SECRET, UNKNOWN, UNKNOWN_OUTPUT, Plan, ResourceRecord, is_unknown, unknown_marker
from gpucloud.plan.offline import (
    ChartNotVendored,
    OfflineAnswerError,
    OfflineAnswers,
    fake_id,
    partition_of,
    render_chart_v3,
    unrendered_chart_warning,
)
from gpucloud.plan.wire import _SECRET_SIG, _SIG_KEY, struct_views
from gpucloud.spec.errors import SpecError

STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"
OFFLINE_STACK_REFERENCES_KEY = "gpucloud:offlineStackReferences"
DEFAULT_REGION = "us-east-1"


class PlanInputError(Exception):
    """Invalid input to a plan: unknown stack, bad project file, invalid spec, or a program that raised.

    The CLI prints str(error) and exits 2; no traceback.
    """


# libyaml's parser when PyYAML was built with it (the wheels are): the prod stack file parses in 2 ms, not 18.
_YAML_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DuplicateKeyLoader(_YAML_BASE):
    """A safe loader that rejects a mapping with the same key twice. PyYAML keeps the last one silently; the
    Pulumi CLI (Go yaml.v3) refuses such a file ("mapping key already defined"), so a plan must too."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the base constructor reports it
                continue
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {first.start_mark.line + 1}); keep one of them",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


# The Pulumi CLI (Go yaml.v3) reads an unquoted date such as `2026-07-01` into a config value as the string it
# was written as; PyYAML would make it a datetime.date, which no config value can be.
DuplicateKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)

_YAML_LOADER: Any = DuplicateKeyLoader


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YAML_LOADER)  # a safe loader either way


def _read_yaml_file(path: Path) -> Any:
    """A project or stack file's YAML, or PlanInputError naming the file and the problem (unreadable, binary,
    not UTF-8, not YAML)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlanInputError(f"{path}: cannot read it ({exc.strerror}); check its permissions") from None
    try:
        return _load_yaml(decode_text(data, str(path), PlanInputError))
    except yaml.YAMLError as exc:
        raise PlanInputError(_yaml_problem(path, exc)) from None


def _config_section(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The `config:` mapping of a project or stack file, checked to be what the Pulumi CLI accepts."""
    section = data.get("config")
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise PlanInputError(
            f"{path}: config: must be a mapping of keys to values, got a YAML {_yaml_kind(section)}; write it as "
            "`config:` followed by indented `key: value` lines (no leading `- `)"
        )
    for key in section:
        if not isinstance(key, str):
            raise PlanInputError(f"{path}: config: key {key!r} is not a string; quote it or name it like `ns:key`")
    return section


def _yaml_kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "value")


def _yaml_problem(path: Path, exc: yaml.YAMLError) -> str:
    """One line per YAML error: file:line: what, without PyYAML's multi-line context dump."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    return f"{where}: not valid YAML: {problem}"


class Project:
    """A Pulumi project directory: Pulumi.yaml, its program, and its stack files."""

    def __init__(self, program_dir: Path) -> None:
        self.dir = program_dir.resolve()
        project_file = next((self.dir / n for n in ("Pulumi.yaml", "Pulumi.yml") if (self.dir / n).is_file()), None)
        if project_file is None:
            raise PlanInputError(f"{self.dir} is not a Pulumi project: no Pulumi.yaml found there")
        data = _read_yaml_file(project_file) or {}
        if not isinstance(data, dict) or not data.get("name"):
            raise PlanInputError(f"{project_file}: needs a 'name' (the project name)")
        runtime = data.get("runtime")
        runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
        if runtime is None:
            raise PlanInputError(
                f"{project_file}: runtime: missing (the Pulumi CLI requires it); allowed: python. Fix: add "
                "`runtime: python` (or `runtime: {name: python, options: {toolchain: pip, virtualenv: venv}}`)"
            )
        if runtime_name != "python":
            raise PlanInputError(
                f"{project_file}: runtime.name: {runtime_name!r} is not supported; allowed: python (gpucloud plan "
                "runs Python programs only). Fix: plan a Python project, or preview this one with the Pulumi CLI"
            )
        self.file = project_file
        self.name: str = str(data["name"])
        self.data: dict[str, Any] = data
        main = Path(str(data.get("main") or "."))
        main_path = self.dir / main
        self.main = main_path / "__main__.py" if main_path.is_dir() else main_path
        if not self.main.is_file():
            raise PlanInputError(f"{project_file}: program entry {self.main} does not exist")
        self.stack_dir = self.dir / str(data.get("stackConfigDir") or ".")

    def stacks(self) -> list[str]:
        names = []
        for p in sorted(self.stack_dir.glob("Pulumi.*.y*ml")):
            parts = p.name.split(".")
            if len(parts) == 3 and parts[0] == "Pulumi":
                names.append(parts[1])
        return names

    def stack_file(self, stack: str) -> Path:
        for ext in ("yaml", "yml"):
            candidate = self.stack_dir / f"Pulumi.{stack}.{ext}"
            if candidate.is_file():
                return candidate
        available = ", ".join(self.stacks()) or "none"
        raise PlanInputError(
            f"unknown stack '{stack}' for project '{self.name}': no Pulumi.{stack}.yaml in {self.stack_dir} "
            f"(available stacks: {available})"
        )

    def config(self, stack: str) -> dict[str, Any]:
        """Project defaults then the stack file, keys namespaced as the Pulumi CLI does."""
        merged: dict[str, Any] = {}
        for key, decl in _config_section(self.data, self.file).items():
            full = self._qualify(key)
            if isinstance(decl, dict):
                if "value" in decl:
                    merged[full] = decl["value"]
                elif "default" in decl:
                    merged[full] = decl["default"]
            else:
                merged[full] = decl
        stack_file = self.stack_file(stack)
        data = _read_yaml_file(stack_file) or {}
        if not isinstance(data, dict):
            raise PlanInputError(f"{stack_file}: must be a mapping with a 'config' key")
        for key, value in _config_section(data, stack_file).items():
            merged[self._qualify(key)] = value
        return merged

    def _qualify(self, key: str) -> str:
        return key if ":" in key else f"{self.name}:{key}"


def _config_strings(config: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            # Ciphertext needs the stack's secrets provider; offline the value is a placeholder.
            out[key] = "offline-secret-placeholder"
        elif isinstance(value, str):
            out[key] = value
        else:
            out[key] = json.dumps(value)
    return out


# Invokes the provider answers from their arguments alone, without calling AWS (terraform-provider-aws
# data_source_iam_policy_document.go builds the JSON locally).
PURE_INVOKES = frozenset({"aws:iam/getPolicyDocument:getPolicyDocument"})
_INVOKE_DEPENDS_ON = 14  # resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_DEPENDS_ON

_S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")


def derived_outputs(type_: str, inputs: Mapping[str, Any], region: str) -> dict[str, Any]:
    """Outputs fixed by known inputs, which a policy needs to judge what is built from them: an S3 bucket's ARN
    is ``arn:<partition>:s3:::<bucket>`` (no account, no region: the S3 ARN format in the AWS service
    authorization reference), so a TLS-deny bucket policy written from ``bucket.arn`` is known at preview."""
    if type_ in _S3_BUCKETS:
        name = inputs.get("bucket")
        if isinstance(name, str) and name and not is_unknown(name):
            partition, _ = partition_of(region)
            return {"arn": f"arn:{partition}:s3:::{name}"}
    return {}


# The org a DIY (local, S3, ...) backend gives every stack; the offline plan is a DIY-like run.
OFFLINE_ORGANIZATION = "organization"


def stack_reference_outputs(refs: Mapping[str, Any], name: str) -> Any | None:
    """The offline outputs for StackReference `name`: the entry with that exact name, else the one naming the same
    <project>/<stack> under any org or none. The org differs by backend (`organization` on DIY backends, the
    account's org on Pulumi Cloud), so a stack file written for one must answer for the other."""
    if name in refs:
        return refs[name]
    tail = name.split("/")[-2:]
    if len(tail) < 2:
        return None
    for key, outputs in refs.items():
        if str(key).split("/")[-2:] == tail:
            return outputs
    return None


def _make_mocks(answers: OfflineAnswers) -> Any:
    import pulumi

    class OfflineMocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
            if args.typ == STACK_REFERENCE_TYPE:
                name = str(args.inputs.get("name", args.name))
                outputs = stack_reference_outputs(answers.stack_references, name)
                if outputs is None:
                    answers.unanswered.append(f"StackReference {name}")
                    outputs = {}
                return name, {**args.inputs, "name": name, "outputs": dict(outputs), "secretOutputNames": []}
            # As in a preview: a created resource's outputs are its checked inputs (the monitor has filled in the
            # provider's autoname by now); what only the provider computes (id, ARN, endpoint) stays unknown,
            # except what follows from known inputs alone (derived_outputs).
            return None, {**dict(args.inputs), **derived_outputs(args.typ, args.inputs, answers.region)}

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict[Any, Any]:  # type: ignore[override]
            # A plain dict: the SDK's own type hint suggests (dict, None), which its MockMonitor cannot unpack.
            return answers.answer(args.token, dict(args.args))

    return OfflineMocks()


class _Fatal(Exception):
    """Raised inside a monitor call for what the engine itself would reject; the plan reports the message."""


class PlanLog:
    """Diagnostics a program sends to the engine (pulumi.log.*), as the CLI would print them."""

    def __init__(self) -> None:
        self.entries: list[dict[str, str]] = []

    def Log(self, request: Any) -> None:  # the engine service's RPC name
        from pulumi.runtime.proto import engine_pb2

        severity = {
            engine_pb2.DEBUG: "debug",
            engine_pb2.INFO: "info",
            engine_pb2.WARNING: "warning",
            engine_pb2.ERROR: "error",
        }.get(request.severity, "info")
        if severity != "debug":
            self.entries.append({"severity": severity, "message": str(request.message), "urn": request.urn or ""})


def _make_monitor(
    mocks: Any, records: list[ResourceRecord], answers: OfflineAnswers, project_dir: Path, deadline: Deadline
) -> Any:
    from pulumi.runtime.mocks import MockMonitor

    class RecordingMonitor(MockMonitor):
        """The mock monitor plus what the engine does between the SDK and the provider during a preview:
        resource transforms, the provider's autonaming, duplicate-URN detection, and the children that
        provider-side components register."""

        def __init__(self, mocks: Any) -> None:
            super().__init__(mocks)
            self.fatal: str | None = None
            # The SDK calls the monitor from executor threads: the duplicate check and its insert are one step.
            self.lock = threading.Lock()
            self.urns: dict[str, str] = {}
            self.parents: dict[str, str] = {}
            self.own_transforms: dict[str, list[Any]] = {}
            self.stack_transforms: list[Any] = []
            self.remote = remote.RemoteComponents(answers.answer, answers.region)

        def GetDeploymentInfo(self, request: Any) -> Any:  # the engine service's RPC name
            info = super().GetDeploymentInfo(request)
            if _INVOKE_DEPENDS_ON not in info.supportedFeatures:
                info.supportedFeatures.append(_INVOKE_DEPENDS_ON)
            return info

        def Invoke(self, request: Any) -> Any:  # the engine service's RPC name
            # The engine gates an invoke on the resources it depends on: in a preview, one that waits on a resource
            # still to be created is wholly unknown. A pure invoke (computed by the provider from its arguments
            # alone) is known whenever its arguments are; the SDK already answers unknown when one is not.
            import pulumi

            request = refs.downgrade_request(request, "args")
            pending = [u for u in request.dependsOn if u in self.urns]
            if pending and request.tok not in PURE_INVOKES and pulumi.runtime.is_dry_run():
                from pulumi.runtime.proto import resource_pb2

                return resource_pb2.ResourceInvokeResponse(unknown=True)
            return super().Invoke(request)

        def Call(self, request: Any) -> Any:  # the engine service's RPC name
            # A method of a remote component (eks Cluster.getKubeconfig) runs in its provider plugin on values
            # only known after `up`; a preview shows its result as unknown.
            from google.protobuf import struct_pb2
            from pulumi.runtime.proto import provider_pb2

            result = struct_pb2.Struct()
            result.update({"result": UNKNOWN})
            response = provider_pb2.CallResponse()
            getattr(response, "return").CopyFrom(result)
            return response

        def make_urn(self, parent: str, type_: str, name: str) -> str:
            # As the engine builds URNs: a child's type is qualified by its parent's whole qualified type,
            # except that children of the root stack are not qualified at all.
            from pulumi.runtime.settings import get_project, get_stack

            if parent:
                parent_type = parent.split("::")[2]
                if parent_type != "pulumi:pulumi:Stack":
                    type_ = f"{parent_type}${type_}"
            return f"urn:pulumi:{get_stack()}::{get_project()}::{type_}::{name}"

        def _fail(self, message: str) -> None:
            self.fatal = self.fatal or message
            raise _Fatal(message)

        def ReadResource(self, request: Any) -> Any:  # the engine service's RPC name
            # `Resource.get(name, id)`: the engine reads the existing resource even in a preview, so its ID is the
            # one asked for (the SDK's mock leaves it empty, which the SDK takes for unknown).
            response = super().ReadResource(refs.downgrade_request(request, "properties"))
            if not response.id and request.id:
                response.id = request.id
            return response

        def RegisterStackTransform(self, request: Any) -> Any:
            self.stack_transforms.append(request)
            return super().RegisterStackTransform(request)

        def RegisterResource(self, request: Any) -> Any:
            if request.type == "pulumi:pulumi:Stack":
                return super().RegisterResource(request)
            # The engine's order: the resource's own transforms, its ancestors' (nearest first), then the
            # stack's; each sees the previous one's result.
            chain = list(request.transforms)
            parent = request.parent
            while parent:
                chain.extend(self.own_transforms.get(parent, []))
                parent = self.parents.get(parent, "")
            chain.extend(self.stack_transforms)
            if chain:
                try:
                    request = transforms.apply(request, chain, timeout=deadline.remaining())
                except transforms.TransformError as exc:
                    self._fail(str(exc))
            # Resource objects among the inputs reach providers and analyzers as their ID or URN (refs).
            request = refs.downgrade_request(request, "object")
            urn = self.make_urn(request.parent, request.type, request.name)
            with self.lock:
                duplicate = urn in self.urns
                self.urns[urn] = request.type
                if request.parent:
                    self.parents[urn] = request.parent
                if request.transforms:
                    self.own_transforms[urn] = list(request.transforms)
            if duplicate:
                self._fail(
                    f"duplicate resource URN '{urn}': two resources of type {request.type} are named "
                    f"'{request.name}' under the same parent; give one of them a unique name"
                )
            if request.custom:
                request = self._autoname(request, urn)
            response = super().RegisterResource(request)
            masked, plain = struct_views(request.object)
            records.append(
                ResourceRecord(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    parent=request.parent or None,
                    custom=bool(request.custom),
                    # The SDK gathers dependencies in sets, so their order follows string hashing and
                    # changes from run to run; sorted, two plans of the same program compare equal.
                    dependencies=sorted(request.dependencies),
                    inputs=masked,
                    property_dependencies={k: sorted(v.urns) for k, v in sorted(request.propertyDependencies.items())},
                    provider=request.provider or None,
                    protect=bool(request.protect),
                    retain_on_delete=bool(request.retainOnDelete),
                    ignore_changes=list(request.ignoreChanges),
                    deleted_with=request.deletedWith or None,
                    secret_inputs=plain,
                )
            )
            if request.remote and request.type in k8s_components.EXPANDED_TYPES:
                self._expand(request, response.urn, plain if plain is not None else masked)
            elif request.remote and self.remote.handles(request.type):
                # pulumi-eks, awsx, ...: the children their provider plugin would register (gpucloud.plan.remote).
                self.remote.expand(request.type, request.name, response.urn, masked, self._register_child)
                # The provider answers Construct with the component's own outputs, not an echo of its inputs
                # (an awsx Vpc's `natGateways` output is a list of resources, its input a strategy): offline they
                # are unknown, as in a preview before the children exist.
                response = type(response)(urn=response.urn)
            return response

        def _register_child(self, spec: remote.ChildSpec) -> remote.Handle:
            from google.protobuf import struct_pb2
            from pulumi.runtime.proto import resource_pb2

            obj = struct_pb2.Struct()
            obj.update(spec.inputs)
            response = self.RegisterResource(
                resource_pb2.RegisterResourceRequest(
                    type=spec.type,
                    name=spec.name,
                    parent=spec.parent,
                    custom=spec.custom,
                    object=obj,
                    dependencies=spec.dependencies,
                    provider=spec.provider,
                )
            )
            recorded, _ = struct_views(response.object)
            return remote.Handle(response.urn, spec.type, spec.name, recorded)

        def _autoname(self, request: Any, urn: str) -> Any:
            """The provider's Check: fill in the autonamed property the program left out."""
            pkg = request.type.split(":", 1)[0]
            if pkg not in ("aws", "kubernetes"):
                return request
            view, _ = struct_views(request.object)
            if pkg == "aws":
                found = autoname.aws_autoname(request.type, request.name, urn, view)
                if found is None:
                    return request
                prop, value, problem = found
                if problem:
                    # The provider's Check fails on it, and with it the preview.
                    self._fail(problem)
                named = type(request)()
                named.CopyFrom(request)
                named.object.fields[prop].string_value = value
                return named
            k8s = autoname.k8s_autoname(request.type, request.name, urn, view)
            if k8s is None:
                return request
            prop, value = k8s
            named = type(request)()
            named.CopyFrom(request)
            if prop == "name":
                named.object.fields["name"].string_value = value
            else:
                metadata = named.object.fields["metadata"].struct_value
                metadata.fields["name"].string_value = value
                metadata.fields["annotations"].struct_value.fields[autoname.K8S_AUTONAMED].string_value = "true"
            return named

        def _expand(self, request: Any, urn: str, inputs: dict[str, Any]) -> None:
            """Register the children the provider would register for a provider-side component."""
            from google.protobuf import struct_pb2
            from pulumi.runtime.proto import resource_pb2

            try:
                expansion = k8s_components.expand(
                    request.type, request.name, inputs, project_dir, helm_render=_helm_v4_render
                )
            except ChartNotVendored as exc:
                if answers.strict_charts:
                    self._fail(f"{request.type} {request.name}: {exc}")
                answers.warnings.append(unrendered_chart_warning(f"{request.type} {request.name}: {exc}"))
                return
            except (k8s_components.ExpansionError, OfflineAnswerError) as exc:
                self._fail(f"{request.type} {request.name}: {exc}")
                return
            answers.warnings.extend(expansion.warnings)
            child_urns: list[str] = []
            for child in expansion.children:
                obj = struct_pb2.Struct()
                obj.update(_secret_wrapped(child.inputs, child.secret_keys))
                deps = [child_urns[i] for i in child.depends_on]
                child_request = resource_pb2.RegisterResourceRequest(
                    type=child.type,
                    name=child.name,
                    parent=urn,
                    custom=True,
                    object=obj,
                    dependencies=deps,
                    provider=request.providers.get("kubernetes", request.provider),
                )
                response = self.RegisterResource(child_request)
                child_urns.append(response.urn)

    return RecordingMonitor(mocks)


def _secret_wrapped(obj: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    # The wire form of a secret: what the provider's pulumi.ToSecret(v) sends to the engine.
    if not keys:
        return obj
    return {k: ({_SIG_KEY: _SECRET_SIG, "value": v} if k in keys else v) for k, v in obj.items()}


def _helm_v4_render(inputs: Mapping[str, Any], name: str, namespace: str) -> list[dict[str, Any]]:
    """helm.sh/v4 Chart: the provider renders with Helm (helm/v4/chart.go), release name the `name` input or the
    resource name."""
    repo = (inputs.get("repositoryOpts") or {}).get("repo")
    opts = {
        "chart": inputs.get("chart"),
        "version": inputs.get("version"),
        "repo": repo,
        "release_name": inputs.get("name") or name,
        "namespace": namespace,
        "values": inputs.get("values") or {},
        "skip_crd_rendering": bool(inputs.get("skipCrds")),
        # The v4 provider renders with hooks disabled (includeHooks needs a render-only provider).
        "disable_hooks": True,
    }
    chart = str(inputs.get("chart") or "")
    if chart and not chart.startswith("oci://") and (Path.cwd() / chart / "Chart.yaml").is_file():
        opts = {**opts, "path": chart}
    return render_chart_v3(opts)


_LIBRARY_ROOT = Path(__file__).resolve().parents[2]


def _user_frame(exc: BaseException, program_dir: Path) -> str | None:
    """The deepest traceback frame in user code: the program's directory or gpucloud's own components.

    Frames in the SDK, the standard library and the plan engine itself say nothing about what to fix.
    """
    best: str | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if not path.is_absolute() or "site-packages" in path.parts:
            continue
        path = path.resolve()
        if path.is_relative_to(_LIBRARY_ROOT / "gpucloud" / "plan"):
            continue
        if path.is_relative_to(program_dir):
            best = f"{path.relative_to(program_dir)}:{frame.lineno}"
        elif path.is_relative_to(_LIBRARY_ROOT):
            best = f"{path.relative_to(_LIBRARY_ROOT)}:{frame.lineno}"
    return best


def run_program(
    program_dir: str | Path,
    stack: str = "dev",
    *,
    preview: bool = True,
    config_overrides: Mapping[str, Any] | None = None,
    timeout: float | None = None,
) -> Plan:
    """Run a Pulumi Python project's program offline and record every resource it registers.

    Each call gets a fresh context, event loop and mock monitor, so programs can be planned repeatedly
    in one process. `timeout` (seconds; default GPUCLOUD_PLAN_TIMEOUT, else 120) bounds the whole run: a program
    still waiting then is bad input (PlanInputError naming what it waited for).
    """
    project = Project(Path(program_dir))
    config = project.config(stack)
    config.update(config_overrides or {})
    region = str(config.get("aws:region") or DEFAULT_REGION)
    if isinstance(config.get("aws:region"), dict):
        region = DEFAULT_REGION
    stack_refs = config.pop(OFFLINE_STACK_REFERENCES_KEY, None) or {}
    if not isinstance(stack_refs, dict):
        raise PlanInputError(f"{OFFLINE_STACK_REFERENCES_KEY} must map stack names to their outputs")
    answers = OfflineAnswers(region, stack_refs)
    records: list[ResourceRecord] = []

    def program() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    ctx = contextvars.Context()
    stack_file = project.stack_file(stack)
    plan: Plan = ctx.run(
        _run_in_context,
        project.name,
        project.dir,
        project.main,
        program,
        stack,
        config,
        answers,
        records,
        preview,
        _shown_path(stack_file),
        timeout,
    )
    plan.stack_file = _shown_path(stack_file)
    return plan


def _shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is below it (what a user types), else absolute."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def run_callable(
    fn: Callable[[], Any],
    *,
    project: str = "gpucloud",
    stack: str = "test",
    config: Mapping[str, Any] | None = None,
    preview: bool = True,
    region: str = DEFAULT_REGION,
    stack_references: Mapping[str, Mapping[str, Any]] | None = None,
    timeout: float | None = None,
) -> Plan:
    """Run a Python callable that creates resources (a component test, a benchmark) like a program.

    `preview=False` gives update semantics (computed outputs resolve to None) for value assertions.
    """
    cfg = {"aws:region": region, **(config or {})}
    answers = OfflineAnswers(str(cfg["aws:region"]), stack_references)
    records: list[ResourceRecord] = []
    here = Path.cwd()
    ctx = contextvars.Context()
    return ctx.run(_run_in_context, project, here, here, fn, stack, cfg, answers, records, preview, "", timeout)


def _run_in_context(
    project_name: str,
    project_dir: Path,
    main: Path,
    program: Callable[[], Any],
    stack: str,
    config: dict[str, Any],
    answers: OfflineAnswers,
    records: list[ResourceRecord],
    preview: bool,
    stack_file: str = "",
    timeout: float | None = None,
) -> Plan:
    import pulumi
    from pulumi.runtime import settings
    from pulumi.runtime.stack import run_pulumi_func

    try:
        deadline = Deadline(resolve_timeout(timeout), project_dir)
        answers.strict_charts = options.lock_enforced(config, stack_file)
    except (TimeoutSettingError, options.StackOptionError) as exc:
        raise PlanInputError(str(exc)) from None
    # Offline plans load only the provider SDK modules the program uses (see lazy_sdk); same names, same objects.
    lazy_sdk.install()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    restore_stack_traces = _skip_source_positions()
    previous_cwd = os.getcwd()
    added_path = str(project_dir)
    modules_before = set(sys.modules)
    # The SDK logs resource errors through the engine logger before re-raising; the CLI reports them once.
    quiet = logging.getLogger("gpucloud.plan.engine")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    log = PlanLog()
    monitor: Any = None
    # As under the Pulumi CLI, a program's own output is the engine's diagnostics stream, not the plan's: with
    # `--format json` stdout carries the report and nothing else.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        settings.ROOT.set(None)
        mocks = _make_mocks(answers)
        monitor = _make_monitor(mocks, records, answers, project_dir, deadline)
        pulumi.runtime.set_mocks(
            mocks,
            project=project_name,
            stack=stack,
            preview=preview,
            monitor=monitor,
            logger=quiet,
            organization=OFFLINE_ORGANIZATION,
        )
        # pulumi.log.* go to the engine service; this one keeps them for the report.
        settings.SETTINGS.engine = log
        # set_mocks leaves the set of pending outputs alone; a program that failed earlier in this process left
        # tasks of its (closed) loop there, and the SDK would wait on them.
        settings.SETTINGS.outputs = set()
        pulumi.runtime.set_all_config(_config_strings(config))
        sys.path.insert(0, added_path)
        os.chdir(project_dir)
        root = settings.get_root_resource()
        try:
            deadline.run(loop, run_pulumi_func(program))
        except PlanTimeout as exc:
            raise PlanInputError(str(exc)) from None
        except SpecError as exc:
            if stack_file:
                exc.source = f"{exc.source} ({stack_file})"
            raise PlanInputError(exc.render()) from None
        except PlanInputError:
            raise
        except SystemExit as exc:
            where = _user_frame(exc, project_dir) or main.name
            raise PlanInputError(
                f"program called sys.exit({exc.code!r}) in {where}: a Pulumi program must return normally (raise "
                "an exception, or call pulumi.log.error, to fail the plan); the offline plan stopped there"
            ) from None
        except Exception as raised:
            # A deadline that passed while the program was blocked surfaces as whatever the block raised.
            if deadline.expired:
                raise PlanInputError(deadline.expired) from None
            fatal = monitor.fatal or answers.fatal
            if fatal:
                raise PlanInputError(fatal) from None
            error, resource = _sdk_unwrapped(raised)
            where = (_user_frame(error, project_dir) or main.name) + resource
            validation = _validation_message(error)
            if validation is not None:
                raise PlanInputError(f"program error in {where}: {validation}") from None
            hint = "".join(
                f"; the offline plan has no outputs for {t} (give them under {OFFLINE_STACK_REFERENCES_KEY} in the "
                "stack file)"
                for t in answers.unanswered
                if t.startswith("StackReference ")
            )
            raise PlanInputError(f"program error in {where}: {type(error).__name__}: {error}{hint}") from None
        fatal = monitor.fatal or answers.fatal
        if fatal:
            raise PlanInputError(fatal)
        errors = [e["message"] for e in log.entries if e["severity"] == "error"]
        if errors:
            # The engine fails a deployment whose program logged an error diagnostic.
            raise PlanInputError("program logged an error: " + "; ".join(errors))
        try:
            outputs = deadline.run(loop, _stack_outputs(root))
        except PlanTimeout as exc:
            raise PlanInputError(str(exc)) from None
    finally:
        sys.stdout = real_stdout
        restore_stack_traces()
        os.chdir(previous_cwd)
        if added_path in sys.path:
            sys.path.remove(added_path)
        _forget_program_modules(modules_before, project_dir)
        _drain(loop)
        loop.close()
        asyncio.set_event_loop(None)
    # The SDK registers resources from executor threads, so arrival order varies between runs; URN order
    # makes plans diffable (--compare) and reproducible.
    records.sort(key=lambda r: r.urn)
    warnings = [f"offline plan has no answer for {t}; its results are empty" for t in answers.unanswered]
    warnings += [
        f"offline plan answered {t} from its SDK result type: values echo the query or are placeholders"
        for t in answers.generic
    ]
    warnings += answers.warnings
    warnings += [f"remote component {o.name} ({o.type}) is opaque: {o.reason}" for o in monitor.remote.opaque]
    return Plan(
        project=project_name,
        stack=stack,
        resources=records,
        outputs=outputs,
        warnings=warnings,
        log=[e for e in log.entries if e["severity"] != "error"],
        program_dir=str(project_dir),
        config=config,
        opaque=[o.to_json() for o in monitor.remote.opaque],
    )


def _validation_message(exc: BaseException) -> str | None:
    """A pydantic ValidationError (a component's config model) as one line per problem: the model, the field
    path and pydantic's reason, without its input dump and documentation URL."""
    try:
        from pydantic import ValidationError
    except ImportError:  # pragma: no cover - pydantic is a dependency of gpucloud
        return None
    if not isinstance(exc, ValidationError):
        return None
    lines = [f"invalid {exc.title}: {exc.error_count()} problem{'s' if exc.error_count() != 1 else ''}"]
    for error in exc.errors(include_url=False, include_input=False):
        path = ".".join(str(p) for p in error["loc"]) or "(model)"
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"  - {path}: {message}")
    return "\n".join(lines)


def _skip_source_positions() -> Callable[[], None]:
    """Stop the SDK from capturing a Python stack trace per resource while planning offline.

    The engine uses those traces only to show source positions in the Pulumi console; the offline plan never
    sends them anywhere, and extracting them (with source lines) costs ~0.3 s on a 200-resource stack.
    Returns the function that puts the SDK's own implementation back.
    """
    from pulumi.runtime import resource as sdk_resource
    from pulumi.runtime.proto import source_pb2

    original = getattr(sdk_resource, "_get_stack_trace", None)
    if original is None:  # a later SDK reorganised this; planning still works, only slower
        return lambda: None
    sdk_resource._get_stack_trace = source_pb2.StackTrace

    def restore() -> None:
        sdk_resource._get_stack_trace = original

    return restore


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Finish everything a run left behind, so a failed program cannot break the next plan in this process.

    After a program error the SDK still has RPCs in executor threads and outputs waiting on them; closing the
    loop under them makes the next run fail with "Event loop is closed".
    """
    # Failed outputs that nobody awaits would otherwise be printed by asyncio at garbage collection.
    loop.set_exception_handler(lambda _loop, _context: None)
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        # Bounded too: a program's coroutine may swallow its cancellation and wait on.
        loop.run_until_complete(asyncio.wait(pending, timeout=_DRAIN_S))
    # Bounded: an executor thread still blocked (a program's synchronous wait) must not hang the next plan.
    with contextlib.suppress(TimeoutError):
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), _DRAIN_S))


_DRAIN_S = 5.0


_SDK_WRAPPED = re.compile(r"^While processing (resource|input): (?P<name>'[^']*')(?:, type:? (?P<type>'[^']*'))?")


def _sdk_unwrapped(exc: BaseException) -> tuple[BaseException, str]:
    """The program's own exception under the SDK's "While processing resource ... ValueError has risen: ..."
    wrappers (pulumi/runtime/resource.py and rpc.py re-raise with `from e` once per level), and the resource it
    was registering, so the user reads one message instead of one line per level."""
    resource = ""
    while isinstance(exc, ValueError | AssertionError) and exc.__cause__ is not None:
        match = _SDK_WRAPPED.match(str(exc))
        if match is None:
            break
        if match[1] == "resource":
            resource = f" (registering {match['name']}" + (f", {match['type']})" if match["type"] else ")")
        exc = exc.__cause__
    return exc, resource


async def _stack_outputs(root: Any) -> dict[str, Any]:
    """Exports as a preview shows them: known values as values, unknown parts as UNKNOWN_OUTPUT, secrets
    masked."""
    if root is None:
        return {}
    return {key: await _resolved(value) for key, value in getattr(root, "outputs", {}).items()}


async def _resolved(value: Any) -> Any:
    import pulumi
    from pulumi.output import Unknown

    if isinstance(value, pulumi.Output):
        if not await value.is_known():
            return UNKNOWN_OUTPUT
        if await value.is_secret():
            return SECRET
        return await _resolved(await value.future(with_unknowns=True))
    if isinstance(value, Unknown):
        return UNKNOWN_OUTPUT
    if isinstance(value, pulumi.Resource):
        return await _resolved(value.urn)
    if isinstance(value, asyncio.Future | Awaitable):
        return await _resolved(await value)
    if isinstance(value, dict):
        return {str(k): await _resolved(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [await _resolved(v) for v in value]
    if isinstance(value, str | int | float | bool | type(None)):
        return unknown_marker(value)
    return str(value)


# gpucloud's own packages live in the repository root, which is also the root program's directory; they are
# libraries, not program modules, and re-importing them per plan would only cost time.
_LIBRARY_PACKAGES = ("gpucloud",)


def _forget_program_modules(before: set[str], program_dir: Path) -> None:
    # A program's own helper modules must not leak into the next program planned in this process. A string
    # prefix test, not Path.resolve(): a plan imports about a thousand modules and resolving each costs ~0.2 s.
    prefix = str(program_dir) + os.sep
    for name in set(sys.modules) - before:
        if name.split(".")[0] in _LIBRARY_PACKAGES:
            continue
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and os.path.abspath(file).startswith(prefix) and "site-packages" not in file:
            del sys.modules[name]


__all__ = ["PlanInputError", "Project", "fake_id", "run_callable", "run_program"]
