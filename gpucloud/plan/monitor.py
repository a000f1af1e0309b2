"""The recording mock runtime: the mocks that answer resources and invokes offline, and the monitor that does what
the engine does between the SDK and the providers during a preview (transforms, autonaming, duplicate URNs, the
children of provider-side components), recording every registration."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpucloud.plan import autoname, k8s_components, refs, remote, threads, transforms
from gpucloud.plan.deadline import Deadline
from gpucloud.plan.model import UNKNOWN, ResourceRecord, is_unknown
from gpucloud.plan.offline import (
    ChartNotVendored,
    OfflineAnswerError,
    OfflineAnswers,
    partition_of,
    render_chart_v3,
    unrendered_chart_warning,
)
from gpucloud.plan.wire import _SECRET_SIG, _SIG_KEY, struct_views

STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"


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


def make_mocks(answers: OfflineAnswers) -> Any:
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


def make_monitor(
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
            if threads.inline() and (chain or (request.remote and request.type in k8s_components.EXPANDED_TYPES)):
                # A transform runs on the plan's loop, which this call would block; a chart render may overlap
                # others on the pool's threads.
                raise threads.NeedsThread
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
