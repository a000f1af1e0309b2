"""The offline plan shows what `pulumi preview` shows: autonames, echoed inputs, transforms, expanded components."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gpucloud.plan import UNKNOWN, PlanInputError, run_callable, run_program
from gpucloud.plan.model import SECRET, UNKNOWN_OUTPUT

ROOT = Path(__file__).resolve().parents[2]
PREVIEW = ROOT / "tests" / "fixtures" / "preview"
STACK = "urn:pulumi:test::gpucloud::"


def hex_of(urn: str, n: int) -> str:
    return hashlib.sha256(urn.encode()).hexdigest()[:n]


# --- autonaming and outputs -------------------------------------------------------------------------------


def test_autonamed_names_are_known_and_outputs_echo_inputs() -> None:
    def program() -> None:
        role = aws.iam.Role("node", assume_role_policy='{"Version": "2012-10-17"}')
        bucket = aws.s3.Bucket("Data")
        named = aws.iam.Role("fixed", name="fixed-role", assume_role_policy="{}")
        prefixed = aws.ec2.LaunchTemplate("lt", name_prefix="gpu-")
        pulumi.export("roleName", role.name)
        pulumi.export("rolePolicy", role.assume_role_policy)
        pulumi.export("roleArn", role.arn)
        pulumi.export("bucket", bucket.bucket)
        pulumi.export("fixed", named.name)
        pulumi.export("mixed", [role.name, role.arn])
        pulumi.export("prefixedName", prefixed.name)

    plan = run_callable(program)
    role_urn = f"{STACK}aws:iam/role:Role::node"
    role_name = f"node-{hex_of(role_urn, 7)}"
    assert plan.find("aws:iam/role:Role", "node").inputs["name"] == role_name
    # S3 bucket names are autonamed in lower case (pulumi-aws AutoNameTransform on `bucket`).
    bucket_name = f"data-{hex_of(STACK + 'aws:s3/bucket:Bucket::Data', 7)}"
    assert plan.find("aws:s3/bucket:Bucket", "Data").inputs["bucket"] == bucket_name
    assert plan.find("aws:iam/role:Role", "fixed").inputs["name"] == "fixed-role"
    # namePrefix conflicts with name: the provider leaves name to Terraform.
    assert "name" not in plan.find("aws:ec2/launchTemplate:LaunchTemplate", "lt").inputs
    assert plan.outputs == {
        "roleName": role_name,
        "rolePolicy": '{"Version": "2012-10-17"}',
        "roleArn": UNKNOWN_OUTPUT,
        "bucket": bucket_name,
        "fixed": "fixed-role",
        # Only the unknown element is marked, as the CLI shows `["node-…", output<string>]`.
        "mixed": [role_name, UNKNOWN_OUTPUT],
        "prefixedName": UNKNOWN_OUTPUT,
    }
    assert UNKNOWN not in json.dumps(plan.outputs)


def test_autoname_overrides_follow_pulumi_aws() -> None:
    def program() -> None:
        aws.eks.NodeGroup(
            "gpu",
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/r",
            subnet_ids=["subnet-1"],
            scaling_config={"desired_size": 1, "max_size": 1, "min_size": 0},
        )
        aws.kms.Alias("key", target_key_id="k")
        aws.sqs.Queue("jobs", fifo_queue=True)

    plan = run_callable(program)
    ng_urn = f"{STACK}aws:eks/nodeGroup:NodeGroup::gpu"
    assert plan.find("aws:eks/nodeGroup:NodeGroup", "gpu").inputs["nodeGroupName"] == f"gpu-{hex_of(ng_urn, 7)}"
    alias_urn = f"{STACK}aws:kms/alias:Alias::key"
    assert plan.find("aws:kms/alias:Alias", "key").inputs["name"] == f"alias/key-{hex_of(alias_urn, 7)}"
    queue_urn = f"{STACK}aws:sqs/queue:Queue::jobs"
    assert plan.find("aws:sqs/queue:Queue", "jobs").inputs["name"] == f"jobs-{hex_of(queue_urn, 7)}.fifo"


def test_kubernetes_objects_get_metadata_name() -> None:
    def program() -> None:
        cm = k8s.core.v1.ConfigMap("settings", data={"a": "b"})
        k8s.core.v1.ConfigMap("named", metadata={"name": "given"})
        pulumi.export("cmName", cm.metadata.name)

    plan = run_callable(program)
    urn = f"{STACK}kubernetes:core/v1:ConfigMap::settings"
    metadata = plan.find("kubernetes:core/v1:ConfigMap", "settings").inputs["metadata"]
    assert metadata == {"name": f"settings-{hex_of(urn, 8)}", "annotations": {"pulumi.com/autonamed": "true"}}
    assert plan.find("kubernetes:core/v1:ConfigMap", "named").inputs["metadata"] == {"name": "given"}
    assert plan.outputs == {"cmName": f"settings-{hex_of(urn, 8)}"}


def test_secret_export_is_masked() -> None:
    def program() -> None:
        pulumi.export("token", pulumi.Output.secret("s3cr3t"))

    assert run_callable(program).outputs == {"token": SECRET}


# --- program behaviour --------------------------------------------------------------------------------------


def test_duplicate_urn_is_an_error() -> None:
    def program() -> None:
        aws.s3.Bucket("logs")
        aws.s3.Bucket("logs")

    with pytest.raises(PlanInputError) as info:
        run_callable(program)
    assert str(info.value) == (
        f"duplicate resource URN '{STACK}aws:s3/bucket:Bucket::logs': two resources of type aws:s3/bucket:Bucket "
        "are named 'logs' under the same parent; give one of them a unique name"
    )


def test_sys_exit_is_a_clear_error() -> None:
    with pytest.raises(PlanInputError) as info:
        run_program(PREVIEW / "exiting", "dev")
    assert str(info.value).startswith("program called sys.exit(3) in __main__.py:6: a Pulumi program must return")


def test_log_info_and_warn_reach_the_plan() -> None:
    plan = run_program(PREVIEW / "logging", "dev")
    assert plan.log == [
        {"severity": "info", "message": "sizing the fleet for 8 GPUs", "urn": ""},
        {
            "severity": "warning",
            "message": "no budget alarm configured",
            "urn": "urn:pulumi:dev::logging::aws:s3/bucket:Bucket::logs",
        },
    ]


def test_log_error_fails_the_plan() -> None:
    with pytest.raises(PlanInputError) as info:
        run_program(PREVIEW / "logging", "dev", config_overrides={"logging:fail": "true"})
    assert str(info.value) == "program logged an error: pool gpu-a has no subnets"


def test_print_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    plan = run_program(PREVIEW / "printing", "dev")
    out, err = capsys.readouterr()
    assert out == ""
    bucket = f"logs-{hex_of('urn:pulumi:dev::printing::aws:s3/bucket:Bucket::logs', 7)}"
    assert err == f"hello from the program\nbucket is {bucket}\n"
    # An S3 bucket's ARN follows from its (autonamed) name alone: the engine derives it (guardrails issue 13).
    assert plan.outputs == {"bucketName": bucket, "bucketArn": f"arn:aws:s3:::{bucket}"}


# --- transforms ---------------------------------------------------------------------------------------------


def _tag(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    if args.type_ == "aws:s3/bucket:Bucket":
        return pulumi.ResourceTransformResult({**args.props, "tags": {"team": "vision"}}, args.opts)
    return None


def test_register_resource_transform() -> None:
    def program() -> None:
        aws.s3.Bucket("before")
        pulumi.runtime.register_resource_transform(_tag)
        aws.s3.Bucket("after")

    plan = run_callable(program)
    assert "tags" not in plan.find("aws:s3/bucket:Bucket", "before").inputs
    assert plan.find("aws:s3/bucket:Bucket", "after").inputs["tags"] == {"team": "vision"}


def test_transforms_option_applies_to_children_with_own_first() -> None:
    def own(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        return pulumi.ResourceTransformResult({**args.props, "tags": {"by": "own"}}, args.opts)

    def protect(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        props = dict(args.props)
        if "tags" in props:
            props["tags"] = {**props["tags"], "seen": "parent"}
        opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(protect=True))
        return pulumi.ResourceTransformResult(props, opts)

    def program() -> None:
        parent = pulumi.ComponentResource("x:index:Box", "box", None, pulumi.ResourceOptions(transforms=[protect]))
        aws.s3.Bucket("child", opts=pulumi.ResourceOptions(parent=parent, transforms=[own]))

    plan = run_callable(program)
    child = plan.find("aws:s3/bucket:Bucket", "child")
    assert child.inputs["tags"] == {"by": "own", "seen": "parent"}
    assert child.protect is True


def test_transformations_option_and_stack_transformation() -> None:
    def legacy(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        return pulumi.ResourceTransformationResult({**args.props, "force_destroy": True}, args.opts)

    def stack_wide(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        if args.type_ == "aws:s3/bucket:Bucket":
            return pulumi.ResourceTransformationResult({**args.props, "tags": {"env": "dev"}}, args.opts)
        return None

    def program() -> None:
        aws.s3.Bucket("legacy", opts=pulumi.ResourceOptions(transformations=[legacy]))
        pulumi.runtime.register_stack_transformation(stack_wide)
        aws.s3.Bucket("stacked")

    plan = run_callable(program)
    assert plan.find("aws:s3/bucket:Bucket", "legacy").inputs["forceDestroy"] is True
    assert plan.find("aws:s3/bucket:Bucket", "stacked").inputs["tags"] == {"env": "dev"}


# --- components that expand at run time ---------------------------------------------------------------------


def _children(plan: Any, parent_type: str) -> dict[str, dict[str, Any]]:
    parents = {r.urn for r in plan.resources if r.type == parent_type}
    return {r.name: r for r in plan.resources if r.parent in parents}


def test_helm_v3_chart_renders_with_helm() -> None:
    def program() -> None:
        k8s.helm.v3.Chart(
            "tiny",
            k8s.helm.v3.LocalChartOpts(path=str(PREVIEW / "tiny-chart"), namespace="apps", values={"greeting": "hi"}),
        )

    plan = run_callable(program)
    children = _children(plan, "kubernetes:helm.sh/v3:Chart")
    assert sorted(children) == ["apps/tiny-greeting"]  # the test hook is not installed
    cm = children["apps/tiny-greeting"]
    assert cm.type == "kubernetes:core/v1:ConfigMap"
    assert cm.inputs["data"] == {"greeting": "hi"}


def test_helm_v3_chart_resolves_to_the_vendored_chart() -> None:
    def program() -> None:
        k8s.helm.v3.Chart(
            "ms",
            k8s.helm.v3.ChartOpts(
                chart="metrics-server",
                version="3.13.1",
                namespace="kube-system",
                fetch_opts=k8s.helm.v3.FetchOpts(repo="https://kubernetes-sigs.github.io/metrics-server/"),
            ),
        )

    plan = run_callable(program)
    deployment = plan.find("kubernetes:apps/v1:Deployment", "kube-system/ms-metrics-server")
    assert deployment.parent == f"{STACK}kubernetes:helm.sh/v3:Chart::ms"
    assert deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "registry.k8s.io/metrics-server/metrics-server:v0.8."
    )


def test_helm_v3_chart_not_vendored_is_bad_input_where_the_lock_is_enforced() -> None:
    def program() -> None:
        k8s.helm.v3.Chart("x", k8s.helm.v3.ChartOpts(chart="metrics-server", version="0.0.1"))

    with pytest.raises(PlanInputError) as info:
        run_callable(program, config={"gpucloud:enforceChartLock": True})
    assert str(info.value).startswith(
        "helm.v3.Chart metrics-server: chart metrics-server@0.0.1 is not pinned; the charts lock pins "
        "metrics-server@3.13.1"
    )
    # Any other program: the chart's objects are left out, and the plan says so.
    plan = run_callable(program)
    assert [r.type for r in plan.resources] == ["kubernetes:helm.sh/v3:Chart"]
    [warning] = plan.warnings
    assert warning.startswith("helm.v3.Chart metrics-server: chart metrics-server@0.0.1 is not pinned")
    assert warning.endswith(
        ": the offline plan cannot render it, so its objects are not in the plan (a preview fetches the chart; "
        "vendor it, or set gpucloud:enforceChartLock: true to make this an error)"
    )


def test_yaml_v1_config_file() -> None:
    def program() -> None:
        k8s.yaml.ConfigFile("m", file=str(PREVIEW / "manifests.yaml"))

    children = _children(run_callable(program), "kubernetes:yaml:ConfigFile")
    assert sorted(children) == ["reader", "team-a", "team-a/settings", "token"]
    assert children["team-a/settings"].inputs["data"] == {"mode": "fast"}


def test_yaml_v2_config_group_registers_children_as_the_provider() -> None:
    def program() -> None:
        k8s.yaml.v2.ConfigGroup("g", files=[str(PREVIEW / "manifests.yaml")])

    plan = run_callable(program)
    children = _children(plan, "kubernetes:yaml/v2:ConfigGroup")
    assert sorted(children) == ["g:default/token", "g:reader", "g:team-a", "g:team-a/settings"]
    settings = children["g:team-a/settings"]
    assert settings.urn == f"{STACK}kubernetes:yaml/v2:ConfigGroup$kubernetes:core/v1:ConfigMap::g:team-a/settings"
    assert settings.dependencies == [children["g:team-a"].urn]
    assert children["g:reader"].type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
    token = children["g:default/token"]
    assert token.inputs["stringData"] == SECRET
    assert token.policy_inputs["stringData"] == {"token": "s3cr3t"}


def test_yaml_v2_config_file_and_transform_on_children() -> None:
    def label(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ == "kubernetes:core/v1:ConfigMap":
            props = dict(args.props)
            props["data"] = {**props["data"], "mode": "transformed"}
            return pulumi.ResourceTransformResult(props, args.opts)
        return None

    def program() -> None:
        k8s.yaml.v2.ConfigFile(
            "f", file=str(PREVIEW / "manifests.yaml"), opts=pulumi.ResourceOptions(transforms=[label])
        )

    children = _children(run_callable(program), "kubernetes:yaml/v2:ConfigFile")
    assert children["f:team-a/settings"].inputs["data"] == {"mode": "transformed"}


def test_kustomize_directories() -> None:
    def program() -> None:
        k8s.kustomize.Directory("v1", directory=str(PREVIEW / "kustomize"))
        k8s.kustomize.v2.Directory("v2", directory=str(PREVIEW / "kustomize"))

    plan = run_callable(program)
    v1 = _children(plan, "kubernetes:kustomize:Directory")
    v2 = _children(plan, "kubernetes:kustomize/v2:Directory")
    assert sorted(v1) == ["apps/kz-settings"]
    assert sorted(v2) == ["v2:apps/kz-settings"]
    assert v2["v2:apps/kz-settings"].inputs["data"] == {"mode": "slow"}


# --- secrets ------------------------------------------------------------------------------------------------


def test_policies_read_secrets_reports_mask_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

    import gpucloud.guard as guard

    seen: list[Any] = []

    def validate(args: Any, report: Any) -> None:
        if args.resource_type == "aws:ssm/parameter:Parameter":
            seen.append(args.props["value"])
            if args.props["value"] == "s3cr3t":
                report(f"plaintext token {args.props['value']} in SSM")

    policy = ResourceValidationPolicy("no-plain-token", "d", validate, EnforcementLevel.MANDATORY)

    class Guardrail:
        name = "no-plain-token"
        enforcement = EnforcementLevel.MANDATORY

        class severity:  # the registry exposes the level as `.severity.value`
            value = "high"

        @staticmethod
        def defaults() -> dict[str, Any]:
            return {}

    class Pack:
        PACK_NAME = "test-pack"

        @staticmethod
        def by_name() -> dict[str, Any]:
            return {"no-plain-token": Guardrail}

        @staticmethod
        def initial_config() -> dict[str, Any]:
            return {}

        @staticmethod
        def policies() -> list[Any]:
            return [policy]

    monkeypatch.setattr(guard, "load_pack", lambda: Pack)

    def program() -> None:
        aws.ssm.Parameter("token", type="SecureString", value=pulumi.Output.secret("s3cr3t"))

    plan = run_callable(program)
    section = guard.evaluate_plan(plan)
    assert seen == ["s3cr3t"]
    # The policy saw the plaintext; the report filters it out of the message, as the CLI filters diagnostics.
    assert [v["message"] for v in section["violations"]] == ["plaintext token [secret] in SSM"]
    record = plan.find("aws:ssm/parameter:Parameter", "token")
    assert record.to_json()["inputs"]["value"] == SECRET
    assert "s3cr3t" not in json.dumps([r.to_json() for r in plan.resources])


def test_helm_v4_chart_registers_rendered_children() -> None:
    def program() -> None:
        k8s.helm.v4.Chart("web", chart=str(PREVIEW / "tiny-chart"), namespace="apps", values={"greeting": "hey"})

    plan = run_callable(program)
    children = _children(plan, "kubernetes:helm.sh/v4:Chart")
    assert sorted(children) == ["web:apps/web-greeting"]
    assert children["web:apps/web-greeting"].inputs["data"] == {"greeting": "hey"}


def test_transform_that_raises_is_one_clear_error() -> None:
    def broken(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        raise ValueError("no tags for you")

    def program() -> None:
        aws.s3.Bucket("b", opts=pulumi.ResourceOptions(transforms=[broken]))

    with pytest.raises(PlanInputError) as info:
        run_callable(program)
    assert str(info.value) == "transform on aws:s3/bucket:Bucket 'b' raised ValueError: no tags for you"


def test_provider_component_with_unknown_inputs_warns_and_registers_nothing() -> None:
    def program() -> None:
        bucket = aws.s3.Bucket("b")
        k8s.yaml.v2.ConfigGroup(
            "g",
            objs=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"id": bucket.id}}],
        )

    plan = run_callable(program)
    assert _children(plan, "kubernetes:yaml/v2:ConfigGroup") == {}
    assert plan.warnings == [
        "kubernetes:yaml/v2:ConfigGroup::g -- Required input properties have unknown values. Preview is incomplete."
    ]


def test_custom_resource_scope_from_the_crd_in_the_same_group() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "Widget"}, "scope": "Namespaced"},
    }
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    gadget = {"apiVersion": "other.io/v1", "kind": "Gadget", "metadata": {"name": "g"}}

    def program() -> None:
        k8s.yaml.v2.ConfigGroup("c", objs=[crd, widget, gadget])

    plan = run_callable(program)
    children = _children(plan, "kubernetes:yaml/v2:ConfigGroup")
    assert sorted(children) == ["c:default/w", "c:g", "c:widgets.example.com"]
    assert children["c:default/w"].dependencies == [children["c:widgets.example.com"].urn]
    assert plan.warnings == [
        "kubernetes:yaml/v2:ConfigGroup::c: Unable to determine whether the following kinds are namespaced without "
        "a reachable cluster or a matching CustomResourceDefinition, so they are rendered without a namespace: "
        "other.io/v1, Kind=Gadget"
    ]


def test_autoname_too_long_for_the_provider_fails_the_plan() -> None:
    def program() -> None:
        aws.iam.Role("r" * 60, assume_role_policy="{}")

    with pytest.raises(PlanInputError) as info:
        run_callable(program)
    assert str(info.value) == (
        f"{STACK}aws:iam/role:Role::{'r' * 60}: name: name '{'r' * 60}-' plus 7 random chars is longer than "
        "maximum length 64; set name or give the resource a shorter name"
    )


def test_helm_v4_chart_not_vendored_registers_no_children_with_a_warning() -> None:
    def program() -> None:
        k8s.helm.v4.Chart("cm", chart="cert-manager", version="v1.99.0", namespace="cert-manager")

    plan = run_callable(program)
    assert [r.type for r in plan.resources] == ["kubernetes:helm.sh/v4:Chart"]
    [warning] = plan.warnings
    assert warning.startswith("kubernetes:helm.sh/v4:Chart cm: helm.v3.Chart cert-manager: ")
    with pytest.raises(PlanInputError):
        run_callable(program, config={"gpucloud:platform": "{}"})
