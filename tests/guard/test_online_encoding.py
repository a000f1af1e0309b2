"""The engine's side of the Analyzer protocol, without a server: config reconciliation, property marshalling,
the resources of a preview and how responses become verdicts (gpucloud/guard/online/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2

from gpucloud.guard import online
from gpucloud.plan.model import SECRET, UNKNOWN, Plan, ResourceRecord

SIG = online.SIG_KEY
SEC = online.SECRET_SIG


def _info(supports_config: bool = True) -> Any:
    info = analyzer_pb2.AnalyzerInfo(name="pack", version="0.0.1", supportsConfig=supports_config)
    p = info.policies.add(name="cap", enforcementLevel=analyzer_pb2.MANDATORY)
    p.policy_type = analyzer_pb2.POLICY_TYPE_STACK
    p.configSchema.properties.update({"max": {"type": "integer", "default": 4}, "note": {"type": "string"}})
    p.configSchema.required.extend(["max"])
    q = info.policies.add(name="a-tags", enforcementLevel=analyzer_pb2.ADVISORY)
    q.policy_type = analyzer_pb2.POLICY_TYPE_RESOURCE
    info.initialConfig["cap"].CopyFrom(analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY))
    info.initialConfig["cap"].properties.update({"max": 8})
    return info


def test_policy_infos_inject_the_enforcement_level_into_every_schema_and_sort_by_name() -> None:
    infos = online.policy_infos(_info())
    assert [p.name for p in infos] == ["a-tags", "cap"]
    cap = infos[1]
    assert cap.enforcement_level == "mandatory"
    assert cap.policy_type == "POLICY_TYPE_STACK"
    assert cap.config_schema == {
        "properties": {
            "max": {"type": "integer", "default": 4.0},
            "note": {"type": "string"},
            "enforcementLevel": {"type": "string", "enum": ["advisory", "mandatory", "remediate", "disabled"]},
        },
        "required": ["max"],
    }
    assert infos[0].config_schema == {
        "properties": {"enforcementLevel": {"type": "string", "enum": list(online.LEVELS)}},
        "required": [],
    }
    assert [p.config_schema for p in online.policy_infos(_info(supports_config=False))] == [None, None]


def test_initial_config_keeps_levels_and_properties() -> None:
    initial = online.initial_config(_info())
    assert initial == {"cap": online.PolicyConfig("mandatory", {"max": 8.0})}


def test_config_file_is_parsed_as_the_cli_parses_it() -> None:
    parsed = online.parse_config_file(
        {"environments": ["x"], "cap": {"enforcementLevel": "advisory", "max": 2}, "a-tags": "disabled", "empty": {}}
    )
    assert parsed == {
        "cap": online.PolicyConfig("advisory", {"max": 2}),
        "a-tags": online.PolicyConfig("disabled", None),
    }
    assert online.parse_config_file({"cap": {"max": 2}}) == {"cap": online.PolicyConfig("", {"max": 2})}
    with pytest.raises(online.OnlineError, match="parsing enforcement level for 'cap': 7"):
        online.parse_config_file({"cap": {"enforcementLevel": 7}})
    with pytest.raises(online.OnlineError, match="must be a JSON object"):
        online.parse_config_file(["cap"])


def test_reconcile_layers_defaults_initial_and_file_with_all_first() -> None:
    info = _info()
    infos = online.policy_infos(info)
    initial = online.initial_config(info)
    result, errors = online.reconcile_config(infos, initial, None)
    assert errors == []
    assert result == {
        "a-tags": online.PolicyConfig("advisory", None),
        "cap": online.PolicyConfig("mandatory", {"max": 8.0}),
    }
    given = online.parse_config_file({"all": "disabled", "cap": {"note": "n"}, "ghost": "mandatory"})
    result, errors = online.reconcile_config(infos, initial, given)
    assert errors == []
    assert result["a-tags"] == online.PolicyConfig("disabled", None)
    assert result["cap"] == online.PolicyConfig("disabled", {"max": 8.0, "note": "n"})
    # A policy the pack does not have is passed on (the CLI does not check names).
    assert result["ghost"] == online.PolicyConfig("mandatory", None)
    result, errors = online.reconcile_config(infos, {}, online.parse_config_file({"cap": {"max": "many", "x": 1}}))
    assert errors == ["cap: max: 'many' is not of type 'integer'"]


def test_reconcile_reports_a_missing_required_property() -> None:
    infos = [online.PolicyInfo("p", "advisory", {"properties": {"k": {"type": "string"}}, "required": ["k"]}, "", "")]
    _, errors = online.reconcile_config(infos, {}, None)
    assert errors == ["p: (root): 'k' is a required property"]


def test_values_are_marshalled_with_unknowns_and_secrets_kept() -> None:
    props = {
        "n": 3,
        "f": 1.5,
        "b": True,
        "none": None,
        "u": UNKNOWN,
        "s": online.Secret({"k": "v", "t": (1, "x")}),
        "__defaults": ["a"],
    }
    struct = online.marshal_properties(props)
    assert json_format.MessageToDict(struct) == {
        "n": 3.0,
        "f": 1.5,
        "b": True,
        "none": None,
        "u": UNKNOWN,
        "s": {SIG: SEC, "value": {"k": "v", "t": [1.0, "x"]}},
    }
    assert "__defaults" in online.marshal_properties(props, internal_keys=True).fields
    assert online.marshal_value(Path("/x")) == "/x"
    assert online.unmarshal_properties(struct)["s"] == online.Secret({"k": "v", "t": [1.0, "x"]})
    assert online.plain(online.unmarshal_properties(struct))["s"] == {"k": "v", "t": [1.0, "x"]}
    assert repr(online.Secret(1)) == "Secret(1)"
    assert online.Secret(1) != 1


def _record(urn_tail: str, **kw: Any) -> ResourceRecord:
    type_, name = urn_tail.rsplit("::", 1)
    base: dict[str, Any] = {
        "urn": f"urn:pulumi:prod::proj::{urn_tail}",
        "type": type_.rsplit("$", 1)[-1],
        "name": name,
        "parent": None,
        "custom": True,
        "dependencies": [],
        "inputs": {},
    }
    base.update(kw)
    return ResourceRecord(**base)


def test_masked_secrets_go_back_to_the_engine_as_secrets() -> None:
    r = _record(
        "aws:ec2/launchTemplate:LaunchTemplate::lt",
        inputs={"userData": SECRET, "tags": {"a": SECRET, "b": "x"}, "l": [SECRET, "y"], "plain": "[secret]"},
        secret_inputs={"userData": "token", "tags": {"a": "A", "b": "x"}, "l": ["L", "y"], "plain": "[secret]"},
    )
    assert online.engine_inputs(r) == {
        "userData": online.Secret("token"),
        "tags": {"a": online.Secret("A"), "b": "x"},
        "l": [online.Secret("L"), "y"],
        "plain": "[secret]",
    }
    r2 = _record("aws:s3/bucket:Bucket::b", inputs={"bucket": "b"})
    assert online.engine_inputs(r2) == {"bucket": "b"}


def _plan() -> Plan:
    stack = "urn:pulumi:prod::proj::pulumi:pulumi:Stack::proj-prod"
    comp = _record("gpucloud:x:Comp::c", custom=False, parent=stack)
    k8s_provider = _record(
        "gpucloud:x:Comp$pulumi:providers:kubernetes::k",
        parent=comp.urn,
        inputs={"kubeconfig": SECRET},
        secret_inputs={"kubeconfig": "cfg"},
    )
    bucket = _record(
        "gpucloud:x:Comp$aws:s3/bucket:Bucket::b",
        parent=comp.urn,
        inputs={"bucket": "b"},
        protect=True,
        ignore_changes=["tags"],
        dependencies=[comp.urn],
        property_dependencies={"bucket": [comp.urn], "tags": []},
    )
    ns = _record(
        "gpucloud:x:Comp$kubernetes:core/v1:Namespace::ns", parent=comp.urn, provider=f"{k8s_provider.urn}::{UNKNOWN}"
    )
    return Plan(
        project="proj",
        stack="prod",
        resources=[comp, k8s_provider, bucket, ns],
        outputs={"endpoint": "[unknown]", "n": 1},
        config={
            "aws:region": "us-east-1",
            "aws:defaultTags": {"tags": {"a": "b"}},
            "aws:token": {"secure": "x"},
            "proj:size": 3,
        },
    )


def test_engine_resources_are_the_stack_providers_and_program_resources() -> None:
    resources = online.engine_resources(_plan())
    assert [r.urn.rsplit("::", 2)[-2:] for r in resources] == [
        ["pulumi:pulumi:Stack", "proj-prod"],
        ["gpucloud:x:Comp", "c"],
        ["gpucloud:x:Comp$pulumi:providers:kubernetes", "k"],
        ["pulumi:providers:aws", "default_7_51_1"],
        ["gpucloud:x:Comp$aws:s3/bucket:Bucket", "b"],
        ["gpucloud:x:Comp$kubernetes:core/v1:Namespace", "ns"],
    ]
    stack, comp, k8s, default, bucket, ns = resources
    assert stack.outputs == {"endpoint": UNKNOWN, "n": 1}
    assert comp.provider is None and k8s.provider is None and default.provider is None
    assert default.inputs == {
        "region": "us-east-1",
        "defaultTags": '{"tags": {"a": "b"}}',
        "token": online.Secret("offline-secret-placeholder"),
        "version": "7.51.1",
    }
    assert bucket.provider is default
    assert ns.provider is not None and ns.provider.urn == k8s.urn
    assert ns.provider.inputs == {"kubeconfig": online.Secret("cfg")}
    request = bucket.stack_resource()
    assert request.parent == comp.urn
    assert list(request.dependencies) == [comp.urn]
    assert {k: list(v.urns) for k, v in request.propertyDependencies.items()} == {"bucket": [comp.urn]}
    assert request.options.protect is True
    assert list(request.options.ignoreChanges) == ["tags"]
    assert request.options.parent == comp.urn
    assert request.provider.name == "default_7_51_1"
    assert json_format.MessageToDict(request.provider.properties)["token"] == {
        SIG: SEC,
        "value": "offline-secret-placeholder",
    }
    analyze = bucket.analyze_request(internal_keys=False)
    assert (analyze.urn, analyze.type, analyze.name) == (bucket.urn, "aws:s3/bucket:Bucket", "b")


def test_a_package_without_an_installed_sdk_gets_an_unversioned_default_provider() -> None:
    plan = _plan()
    provider = online.default_provider(plan, "random")
    assert provider.urn == "urn:pulumi:prod::proj::pulumi:providers:random::default"
    assert provider.inputs == {}


def test_preview_outputs_echo_inputs_and_leave_computed_outputs_unknown() -> None:
    assert "arn" in online.computed_outputs("aws:s3/bucket:Bucket")
    assert "forceDestroy" not in online.computed_outputs("aws:s3/bucket:Bucket")
    assert online.computed_outputs("aws:nosuch/thing:Thing") == frozenset()
    stack, comp, k8s, _default, bucket, _ns = online.engine_resources(_plan())
    out = online.preview_outputs(bucket)
    assert out["bucket"] == "b"
    assert out["arn"] == UNKNOWN
    assert "forceDestroy" not in out
    assert online.preview_outputs(comp) == {}
    assert online.preview_outputs(k8s) == {"kubeconfig": online.Secret("cfg")}
    assert online.preview_outputs(stack) == {"endpoint": UNKNOWN, "n": 1}


class FakeServer:
    """Answers like the pack would, recording what the engine sent."""

    def __init__(self) -> None:
        self.analyzed: list[dict[str, Any]] = []
        self.stack: list[Any] = []

    def remediate(self, r: online.EngineResource) -> Any:
        response = analyzer_pb2.RemediateResponse()
        if r.name == "b":
            props = struct_pb2.Struct()
            props.update({"bucket": "b", "tags": {"Team": {SIG: SEC, "value": "ml"}}})
            response.remediations.add(policyName="tags", properties=props)
            response.remediations.add(policyName="other", diagnostic="can't run remediation 'other' ...")
        return response

    def analyze(self, r: online.EngineResource) -> Any:
        self.analyzed.append(json_format.MessageToDict(r.analyze_request(internal_keys=False).properties))
        response = analyzer_pb2.AnalyzeResponse()
        if r.name == "b":
            response.diagnostics.add(policyName="p", enforcementLevel=analyzer_pb2.REMEDIATE, message="m")
            response.diagnostics.add(policyName="q", enforcementLevel=analyzer_pb2.ADVISORY, message="can't run policy")
            response.not_applicable.add(policy_name="n", reason="r")
        return response

    def analyze_stack(self, resources: list[online.EngineResource]) -> Any:
        self.stack = [r.stack_resource() for r in resources]
        response = analyzer_pb2.AnalyzeResponse()
        response.diagnostics.add(policyName="s", enforcementLevel=analyzer_pb2.MANDATORY, urn="")
        response.diagnostics.add(policyName="t", enforcementLevel=analyzer_pb2.MANDATORY, urn=resources[4].urn)
        response.diagnostics.add(policyName="u", enforcementLevel=analyzer_pb2.ADVISORY, urn="urn:gone")
        return response


def test_preview_applies_remediations_then_analyzes_and_maps_stack_violations() -> None:
    server = FakeServer()
    result = online.preview(server, _plan())  # type: ignore[arg-type]
    bucket = "urn:pulumi:prod::proj::gpucloud:x:Comp$aws:s3/bucket:Bucket::b"
    root = "urn:pulumi:prod::proj::pulumi:pulumi:Stack::proj-prod"
    assert result.remediations == [
        {"policy": "tags", "urn": bucket, "properties": {"bucket": "b", "tags": {"Team": "ml"}}}
    ]
    # Analyze saw the remediated inputs, secrets still wrapped.
    assert server.analyzed[4] == {"bucket": "b", "tags": {"Team": {SIG: SEC, "value": "ml"}}}
    assert result.violations == [
        {"policy": "p", "urn": bucket, "enforcement": "mandatory", "message": "m"},
        {"policy": "s", "urn": root, "enforcement": "mandatory", "message": ""},
        {"policy": "t", "urn": bucket, "enforcement": "mandatory", "message": ""},
        {"policy": "u", "urn": root, "enforcement": "advisory", "message": ""},
    ]
    assert result.not_evaluated == [
        {"policy": "other", "urn": bucket, "reason": "can't run remediation 'other' ..."},
        {"policy": "q", "urn": bucket, "reason": "can't run policy"},
    ]
    assert result.not_applicable == [{"policy": "n", "reason": "r"}]
    assert result.analyze_calls == 6
    # AnalyzeStack got the outputs: the remediated inputs plus the bucket's computed outputs, unknown.
    stack_props = json_format.MessageToDict(server.stack[4].properties)
    assert stack_props["tags"] == {"Team": {SIG: SEC, "value": "ml"}}
    assert stack_props["arn"] == UNKNOWN
    assert online.keys(result.violations, "policy", "enforcement") == {
        ("p", "mandatory"),
        ("s", "mandatory"),
        ("t", "mandatory"),
        ("u", "advisory"),
    }


def test_activate_puts_the_venv_first_and_drops_pythonhome(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    pairs = online._activate({"PATH": "/bin", "PYTHONHOME": "/x", "VIRTUAL_ENV": "/old", "A": "1"}, venv)
    assert pairs == [("PATH", f"{venv / 'bin'}:/bin"), ("A", "1"), ("VIRTUAL_ENV", str(venv))]
    assert online._activate({}, venv) == [("PATH", str(venv / "bin")), ("VIRTUAL_ENV", str(venv))]


def test_launch_passes_stack_config_as_json(tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n  options:\n    virtualenv: /opt/venv\n")
    launch = online.launch_spec(tmp_path, project="p", stack="s", dry_run=False, config={"p:k": "v"}, environ={})
    assert launch.python == "/opt/venv/bin/python"
    assert launch.virtualenv == Path("/opt/venv")
    assert launch.env == {
        "PATH": "/opt/venv/bin",
        "VIRTUAL_ENV": "/opt/venv",
        "PULUMI_ORGANIZATION": "organization",
        "PULUMI_PROJECT": "p",
        "PULUMI_STACK": "s",
        "PULUMI_DRY_RUN": "false",
        "PULUMI_CONFIG": '{"p:k": "v"}',
    }
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    assert online.launch_spec(tmp_path, project="p", stack="s", environ={}).python == "python3"


def test_policy_project_errors_name_the_file_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(online.OnlineError, match="cannot read the policy project"):
        online.pack_virtualenv(tmp_path)
    (tmp_path / "PulumiPolicy.yaml").write_text("- a list\n")
    with pytest.raises(online.OnlineError, match="must be a mapping with a 'runtime'"):
        online.pack_virtualenv(tmp_path)
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n  options:\n    toolchain: uv\n")
    with pytest.raises(online.OnlineError, match="toolchain 'uv' is not supported"):
        online.pack_virtualenv(tmp_path)
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n  options:\n    virtualenv: 3\n")
    with pytest.raises(online.OnlineError, match="virtualenv must be a string"):
        online.pack_virtualenv(tmp_path)


def test_a_server_that_is_not_running_refuses_calls() -> None:
    server = online.PackServer(online.Launch("python3", (), Path("."), {}, None))
    with pytest.raises(online.OnlineError, match="not running"):
        server.analyzer_info()
    server.close()


class Recorder:
    """An in-process Analyzer: what the engine side sent, and the pack's answers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []

    def _keep(self, name: str, request: Any) -> None:
        self.requests.append((name, request))

    def GetAnalyzerInfo(self, request: Any, context: Any) -> Any:
        self._keep("GetAnalyzerInfo", request)
        return _info()

    def GetPluginInfo(self, request: Any, context: Any) -> Any:
        from pulumi.runtime.proto import plugin_pb2

        return plugin_pb2.PluginInfo(version="9.9.9")

    def ConfigureStack(self, request: Any, context: Any) -> Any:
        self._keep("ConfigureStack", request)
        return analyzer_pb2.AnalyzerStackConfigureResponse()

    def Configure(self, request: Any, context: Any) -> Any:
        from google.protobuf import empty_pb2

        self._keep("Configure", request)
        return empty_pb2.Empty()

    def Analyze(self, request: Any, context: Any) -> Any:
        self._keep("Analyze", request)
        return analyzer_pb2.AnalyzeResponse()

    def Remediate(self, request: Any, context: Any) -> Any:
        self._keep("Remediate", request)
        return analyzer_pb2.RemediateResponse()

    def AnalyzeStack(self, request: Any, context: Any) -> Any:
        import grpc

        context.abort(grpc.StatusCode.INTERNAL, "stack policy crashed")


@pytest.fixture(scope="module")
def in_process() -> Any:
    from concurrent import futures

    import grpc
    from pulumi.runtime.proto import analyzer_pb2_grpc

    recorder = Recorder()
    servicer = type("Servicer", (analyzer_pb2_grpc.AnalyzerServicer,), {})()
    for name in (
        "GetAnalyzerInfo",
        "GetPluginInfo",
        "ConfigureStack",
        "Configure",
        "Analyze",
        "Remediate",
        "AnalyzeStack",
    ):
        setattr(servicer, name, getattr(recorder, name))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    client = online.PackServer(online.Launch("python3", (), Path("/pack"), {}, None), rpc_timeout=10)
    client.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    client.stub = analyzer_pb2_grpc.AnalyzerStub(client.channel)
    yield client, recorder
    client.channel.close()
    server.stop(0)


def test_rpcs_carry_what_the_engine_sends(in_process: Any) -> None:
    client, recorder = in_process
    # Handshake is not implemented by the Python SDK: optional, so no error.
    assert client.handshake() is None
    client.configure_stack(project="p", stack="s", organization="org", dry_run=True)
    name, request = recorder.requests[-1]
    assert (name, request.project, request.stack, request.organization, request.dry_run) == (
        "ConfigureStack",
        "p",
        "s",
        "org",
        True,
    )
    assert client.analyzer_info().name == "pack"
    assert client.plugin_info().version == "9.9.9"
    client.configure({})
    assert recorder.requests[-1][0] == "GetAnalyzerInfo"
    client.configure({"cap": online.PolicyConfig("remediate", {"max": 2}), "a-tags": online.PolicyConfig("disabled")})
    name, request = recorder.requests[-1]
    assert name == "Configure"
    assert request.policyConfig["cap"].enforcementLevel == analyzer_pb2.REMEDIATE
    assert json_format.MessageToDict(request.policyConfig["cap"].properties) == {"max": 2.0}
    assert request.policyConfig["a-tags"].enforcementLevel == analyzer_pb2.DISABLED
    _stack, _comp, _k8s, _default, bucket, _ns = online.engine_resources(_plan())
    bucket.inputs["__defaults"] = []
    client.analyze(bucket)
    name, request = recorder.requests[-1]
    assert name == "Analyze"
    assert "__defaults" not in request.properties.fields
    assert request.options.protect is True
    assert request.options.deleteBeforeReplaceDefined is False
    assert request.options.HasField("customTimeouts")
    assert request.provider.urn == "urn:pulumi:prod::proj::pulumi:providers:aws::default_7_51_1"
    assert request.provider.type == "pulumi:providers:aws"
    client.remediate(bucket)
    name, request = recorder.requests[-1]
    assert (name, "__defaults" in request.properties.fields) == ("Remediate", True)
    with pytest.raises(online.OnlineError, match=r"AnalyzeStack failed: StatusCode\.INTERNAL: stack policy crashed"):
        client.analyze_stack([bucket])


def test_launch_defaults_and_the_callers_environment_winning(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n  options:\n    virtualenv: ../venv\n")
    assert online.pack_virtualenv(pack) == tmp_path.resolve() / "venv"
    launch = online.launch_spec(pack, project="p", stack="s", environ={"PULUMI_STACK": "from-cli", "HOME": "/h"})
    venv = tmp_path.resolve() / "venv"
    assert launch.python == str(venv / "bin" / "python")
    assert launch.cwd == pack.resolve()
    assert launch.args == ("-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack.resolve()))
    assert launch.env == {
        "VIRTUAL_ENV": str(venv),
        "PULUMI_ORGANIZATION": "organization",
        "PULUMI_PROJECT": "p",
        "PULUMI_DRY_RUN": "true",
        "PULUMI_STACK": "from-cli",
        "HOME": "/h",
        "PATH": str(venv / "bin"),
    }
    assert list(launch.env) == [
        "PATH",
        "VIRTUAL_ENV",
        "PULUMI_ORGANIZATION",
        "PULUMI_PROJECT",
        "PULUMI_DRY_RUN",
        "PULUMI_STACK",
        "HOME",
    ]
    assert online.launch_spec(pack, project="p", stack="s", python="/x/python", environ={}).python == "/x/python"
