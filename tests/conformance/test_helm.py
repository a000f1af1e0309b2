"""The helm conformance check on small programs: lock, values keys, real renders, placeholders, cache, no helm."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
import yaml

from gpucloud.charts import helm as charts_helm
from gpucloud.charts.lock import pin
from gpucloud.charts.values import PLACEHOLDER, PLACEHOLDER_URL
from gpucloud.conformance import ConformanceResult, Finding, run_conformance
from gpucloud.plan import run_callable, run_program
from gpucloud.plan.model import Plan

EKS_CHARTS = "https://aws.github.io/eks-charts"
AUTOSCALER = "https://kubernetes.github.io/autoscaler"
NTH_OCI = "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
KARPENTER_OCI = "oci://public.ecr.aws/karpenter/karpenter"
DCGM_REPO = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DEVICE_PLUGIN_REPO = "https://nvidia.github.io/k8s-device-plugin"
REPO_ROOT = Path(__file__).resolve().parents[2]


def release(
    name: str, chart: str, version: str, values: Any, *, repo: str | None = None, namespace: str = "kube-system"
) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        name,
        name=name,
        chart=chart,
        version=version,
        repository_opts={"repo": repo} if repo else None,
        namespace=namespace,
        values=values,
    )


# The lock semantics below are those of a stack that enforces gpucloud's charts lock (gpucloud's own do).
ENFORCED = {"gpucloud:enforceChartLock": True}


def helm_check(fn: Callable[[], Any], config: dict[str, Any] | None = None) -> tuple[Plan, ConformanceResult]:
    plan = run_callable(fn, config=ENFORCED if config is None else config)
    return plan, run_conformance(plan, only=["helm"])


def of(result: ConformanceResult, name: str) -> list[Finding]:
    return [f for f in result.findings if f.urn.endswith(f"::{name}")]


def derived(result: ConformanceResult, name: str) -> list[dict[str, Any]]:
    return [d.manifest for d in result.derived if d.owner.endswith(f"::{name}")]


def program() -> None:
    queue = aws.sqs.Queue("q")  # its url and arn are known only after `up`
    release(
        "dp",
        "nvidia-device-plugin",
        "0.18.2",
        {
            "nfd": {"enabled": True},
            "gfd": {"enabled": True},
            "node-feature-discovery": {"worker": {"tolerations": [{"operator": "Exists"}]}},
        },
        repo=DEVICE_PLUGIN_REPO,
        namespace="nvidia-device-plugin",
    )
    release("karp-no-name", KARPENTER_OCI, "1.12.1", {})
    # The queue's name is known at preview (autonamed); its ARN is computed by the provider, so unknown.
    release("karp", KARPENTER_OCI, "1.12.1", {"settings": {"clusterName": "c", "interruptionQueue": queue.arn}})
    release("lbc", "aws-load-balancer-controller", "3.5.0", {"region": "us-east-1"}, repo=EKS_CHARTS)
    release("ca-no-discovery", "cluster-autoscaler", "9.53.0", {"cloudProvider": "aws"}, repo=AUTOSCALER)
    release("ca", "cluster-autoscaler", "9.53.0", {"autoDiscovery": {"clusterName": "c"}}, repo=AUTOSCALER)
    release("ca-old", "cluster-autoscaler", "9.46.6", {"autoDiscovery": {"clusterName": "c"}}, repo=AUTOSCALER)
    release("nginx", "nginx", "1.0.0", {}, repo="https://charts.example.com")
    release("nth-eks", "aws-node-termination-handler", "0.27.0", {}, repo=EKS_CHARTS)
    release("nth", NTH_OCI, "0.27.0", {"enableSqsTerminationDraining": True, "queueURL": queue.url})


@pytest.fixture(scope="module")
def checked() -> ConformanceResult:
    return helm_check(program)[1]


def test_alias_dropped_values_are_an_error_naming_the_alias(checked: ConformanceResult) -> None:
    assert [(f.check, f.severity, f.field, f.expected, f.source) for f in of(checked, "dp")] == [
        (
            "helm.values",
            "error",
            "values.node-feature-discovery",
            "sub-chart node-feature-discovery is a dependency with alias `nfd`: its values go under `nfd:`",
            "chart nvidia-device-plugin@0.18.2 (values.yaml and templates)",
        )
    ]
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in derived(checked, "dp") if d["kind"] == "DaemonSet")
    assert kinds == [
        ("DaemonSet", "dp-node-feature-discovery-worker"),
        ("DaemonSet", "dp-nvidia-device-plugin"),
        ("DaemonSet", "dp-nvidia-device-plugin-gpu-feature-discovery"),
        ("DaemonSet", "dp-nvidia-device-plugin-mps-control-daemon"),
    ]


@pytest.mark.parametrize(
    ("name", "helm_message"),
    [
        ("karp-no-name", "Chart cannot be installed without a valid settings.clusterName!"),
        ("lbc", "Chart cannot be installed without a valid clusterName!"),
    ],
)
def test_required_value_missing_is_an_error_with_helms_message(
    checked: ConformanceResult, name: str, helm_message: str
) -> None:
    [finding] = of(checked, name)
    assert (finding.check, finding.severity, finding.field) == ("helm.render", "error", "values")
    assert helm_message in finding.message
    assert derived(checked, name) == []


def test_chart_that_renders_no_workload_is_an_error(checked: ConformanceResult) -> None:
    assert [(f.check, f.message) for f in of(checked, "ca-no-discovery")] == [
        (
            "helm.workload",
            "chart cluster-autoscaler@9.53.0 renders no Deployment with these values: the release installs RBAC "
            "and services but nothing runs",
        )
    ]
    assert of(checked, "ca") == []
    [deployment] = [d for d in derived(checked, "ca") if d["kind"] == "Deployment"]
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.2"
    assert deployment["metadata"]["namespace"] == "kube-system"


def test_charts_and_versions_outside_the_lock_are_errors(checked: ConformanceResult) -> None:
    [old] = of(checked, "ca-old")
    assert (old.check, old.field, old.source) == ("helm.lock", "version", "charts lock (gpucloud/charts/lock.yaml)")
    assert old.expected.startswith("version '9.53.0' (vendored at vendor/upstream/charts/cluster-autoscaler-9.53.0)")
    assert derived(checked, "ca-old") == []
    [nginx] = of(checked, "nginx")
    assert (nginx.check, nginx.field) == ("helm.lock", "chart")
    assert "chart nginx is not in the charts lock" in nginx.message


def test_charts_outside_the_lock_are_unverified_warnings_where_the_lock_is_not_enforced() -> None:
    def foreign() -> None:
        release("ca-old", "cluster-autoscaler", "9.46.6", {"autoDiscovery": {"clusterName": "c"}}, repo=AUTOSCALER)
        release("nginx", "nginx", "1.0.0", {}, repo="https://charts.example.com")
        release("nth-eks", "aws-node-termination-handler", "0.27.0", {}, repo=EKS_CHARTS)

    _, result = helm_check(foreign, config={})
    tail = (
        ", so its values, render and objects are not checked (this stack does not enforce gpucloud's charts lock; "
        "gpucloud:enforceChartLock: true would make this an error)"
    )
    assert [(f.urn.rsplit("::", 1)[1], f.severity, f.field, f.message) for f in result.findings] == [
        (
            "ca-old",
            "warning",
            "version",
            "chart cluster-autoscaler version 9.46.6 is not verified against a pinned chart: the lock pins version "
            "9.53.0" + tail,
        ),
        (
            "nginx",
            "warning",
            "chart",
            "chart nginx is not verified against a pinned chart: the charts lock does not pin it" + tail,
        ),
        (
            "nth-eks",
            "warning",
            "repositoryOpts.repo",
            "chart aws-node-termination-handler@0.27.0 from https://aws.github.io/eks-charts is not verified against "
            "a pinned chart: the lock pins it from another repository" + tail,
        ),
    ]
    assert result.derived == []
    # Stated in the stack, the lock is enforced again.
    _, strict = helm_check(foreign, config={"gpucloud:enforceChartLock": "true"})
    assert [f.severity for f in strict.findings if f.check == "helm.lock"] == ["error", "error", "error"]


def test_a_stack_with_a_gpucloud_spec_enforces_the_lock_and_a_bad_value_is_refused() -> None:
    from gpucloud.conformance.stack_options import lock_enforced
    from gpucloud.plan import PlanInputError

    def nothing() -> None:
        pass

    assert lock_enforced(run_callable(nothing, config={"gpucloud:platform": "{}"})) is True
    assert lock_enforced(run_callable(nothing)) is False
    assert lock_enforced(run_callable(nothing, config={"gpucloud:team": "{}", "gpucloud:enforceChartLock": False})) is (
        False
    )
    with pytest.raises(PlanInputError) as info:
        run_callable(nothing, config={"gpucloud:enforceChartLock": "sometimes"})
    assert str(info.value) == (
        "gpucloud:enforceChartLock: 'sometimes' is not true or false; set it to true (every chart must be pinned in "
        "gpucloud's charts lock) or false"
    )


def test_nth_from_eks_charts_is_an_error_pointing_at_the_oci_url(checked: ConformanceResult) -> None:
    [finding] = of(checked, "nth-eks")
    assert (finding.check, finding.field, finding.expected) == (
        "helm.lock",
        "repositoryOpts.repo",
        f"chart={NTH_OCI!r} with no repositoryOpts (upstream publishes it only as OCI)",
    )
    assert of(checked, "nth") == []


def test_unknown_values_render_with_typed_placeholders(checked: ConformanceResult) -> None:
    [deployment] = [d for d in derived(checked, "nth") if d["kind"] == "Deployment"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["QUEUE_URL"] == PLACEHOLDER_URL
    [karpenter] = [d for d in derived(checked, "karp") if d["kind"] == "Deployment"]
    env = {e["name"]: e.get("value") for e in karpenter["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["INTERRUPTION_QUEUE"] == PLACEHOLDER


def test_crds_join_the_derived_objects_and_namespaces_follow_helm(checked: ConformanceResult) -> None:
    objects = derived(checked, "karp")
    crds = sorted(d["metadata"]["name"] for d in objects if d["kind"] == "CustomResourceDefinition")
    assert crds == [
        "ec2nodeclasses.karpenter.k8s.aws",
        "nodeclaims.karpenter.sh",
        "nodeoverlays.karpenter.sh",
        "nodepools.karpenter.sh",
    ]
    scoped = {(d["kind"], d["metadata"].get("namespace")) for d in objects}
    assert ("ClusterRole", None) in scoped
    assert ("ServiceAccount", "kube-system") in scoped
    assert {d.source for d in checked.derived if d.owner.endswith("::karp")} == {"chart karpenter@1.12.1"}


def test_helm_v4_chart_is_checked_like_a_release() -> None:
    _, result = helm_check(
        lambda: k8s.helm.v4.Chart(
            "ca4",
            chart="cluster-autoscaler",
            version="9.53.0",
            repository_opts={"repo": AUTOSCALER},
            namespace="kube-system",
            values={"autoDiscovery": {"clusterName": "c"}, "extraArgz": {}},
        )
    )
    assert [(f.check, f.field, f.expected) for f in result.findings] == [
        ("helm.values", "values.extraArgz", "did you mean `extraArgs`? (keys the chart reads at the top level)")
    ]
    assert "Deployment" in {d.kind for d in result.derived}


def _one_release() -> None:
    release("dcgm", "dcgm-exporter", "4.8.1", {"serviceMonitor": {"enabled": False}}, repo=DCGM_REPO)


def test_second_run_is_served_from_the_cache_without_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path))
    plan, first = helm_check(_one_release)
    assert len([p for p in (tmp_path / "helm").glob("*.marshal") if not p.name.startswith("model-")]) == 1

    def no_helm(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("helm ran although the render is cached")

    monkeypatch.setattr(charts_helm, "helm_template", no_helm)
    second = run_conformance(plan, only=["helm"])
    assert [d.manifest for d in second.derived] == [d.manifest for d in first.derived]
    assert any(d.kind == "DaemonSet" for d in second.derived)
    # Another value is another key: a render nobody has cached needs helm again.
    changed = run_callable(
        lambda: release("dcgm", "dcgm-exporter", "4.8.1", {"serviceMonitor": {"enabled": True}}, repo=DCGM_REPO)
    )
    with pytest.raises(AssertionError, match="helm ran although"):
        run_conformance(changed, only=["helm"])


def test_without_helm_one_warning_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.conformance.helm as helm_check_module

    monkeypatch.setattr(helm_check_module, "find_helm", lambda: None)
    _, result = helm_check(
        lambda: release(
            "dp", "nvidia-device-plugin", "0.18.2", {"nfdd": {}}, repo=pin("nvidia-device-plugin").repository
        )
    )
    assert [(f.check, f.severity) for f in result.findings] == [("helm.values", "error"), ("helm.render", "warning")]
    assert "run `gpucloud tools install`" in result.findings[1].expected
    assert result.derived == []


def test_yaml_rs_and_pyyaml_read_the_pinned_crds_alike() -> None:
    # The CRD with YAML 1.1's `=` in an enum (PyYAML needs a constructor for it), next to a small document.
    crd = pin("kube-prometheus-stack").chart_dir / "charts" / "crds" / "crds" / "crd-alertmanagerconfigs.yaml"
    text = crd.read_text() + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    fast = charts_helm.parse_manifests(text)
    slow = [d for d in yaml.load_all(text, Loader=charts_helm._ManifestLoader) if isinstance(d, dict)]
    assert fast == slow
    assert len(fast) == 2
    assert "=~" in json.dumps(fast)


@pytest.fixture(scope="module")
def dev_stack() -> ConformanceResult:
    return run_conformance(run_program(REPO_ROOT, "dev"), only=["helm"])


def test_dev_stack_renders_the_device_plugin_daemonset(dev_stack: ConformanceResult) -> None:
    daemonsets = {
        (d.source, d.name, d.namespace)
        for d in dev_stack.derived
        if d.kind == "DaemonSet" and "device-plugin" in d.source
    }
    assert ("chart nvidia-device-plugin@0.18.2", "nvidia-device-plugin", "nvidia-device-plugin") in daemonsets
    # Every chart of the dev stack is the pinned one: nothing the lock does not vendor.
    assert [f for f in dev_stack.findings if f.check == "helm.lock"] == []


def test_value_yaml_files_are_merged_under_values(tmp_path: Path) -> None:
    import pulumi

    (tmp_path / "ca.yaml").write_text("autoDiscovery:\n  clusterName: from-file\nextraArgz: {}\n")

    def prog() -> None:
        k8s.helm.v3.Release(
            "ca-files",
            chart="cluster-autoscaler",
            version="9.53.0",
            repository_opts={"repo": AUTOSCALER},
            namespace="kube-system",
            value_yaml_files=[pulumi.FileAsset(str(tmp_path / "ca.yaml")), pulumi.RemoteAsset("https://e.x/v.yaml")],
            values={"cloudProvider": "aws"},
        )

    _, result = helm_check(prog)
    # The file's auto-discovery renders the Deployment; its typo is checked like any value.
    assert [(f.check, f.severity, f.field) for f in result.findings] == [
        ("helm.values", "error", "values.extraArgz"),
        ("helm.values", "warning", "valueYamlFiles[1]"),
    ]
    [deployment] = [d.manifest for d in result.derived if d.kind == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert (
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/from-file"
        in args
    )
