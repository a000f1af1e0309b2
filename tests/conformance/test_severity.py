"""Conformance severity follows what is knowable: on a program that is not gpucloud's, an unpinned chart is a
warning, a CRD that an unrenderable chart may install is undecided, and a missing device plugin is an error only
where the plan runs Kubernetes workloads itself (else a warning naming the switch that says it comes from
elsewhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s
import pytest
from schedkit import GPU_TOLERATION, base_cluster

from gpucloud.conformance import run_conformance
from gpucloud.plan import run_callable

MPIJOB = {
    "apiVersion": "kubeflow.org/v2beta1",
    "kind": "MPIJob",
    "metadata": {"name": "nccl", "namespace": "default"},
    "spec": {"mpiReplicaSpecs": {}},
}


def _advertise(config: dict[str, Any], *, workload: bool) -> list[tuple[str, str]]:
    def program() -> None:
        base_cluster()
        if workload:
            k8s.apps.v1.Deployment(
                "trainer",
                metadata={"name": "trainer", "namespace": "default"},
                spec={
                    "selector": {"matchLabels": {"app": "t"}},
                    "template": {
                        "metadata": {"labels": {"app": "t"}},
                        "spec": {
                            "tolerations": [GPU_TOLERATION],
                            "containers": [
                                {"name": "t", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                            ],
                        },
                    },
                },
            )

    result = run_conformance(run_callable(program, config=config), only=["scheduling"])
    return [(f.severity, f.message) for f in result.findings if f.check == "scheduling.advertise"]


def test_no_device_plugin_without_workloads_is_a_warning_naming_the_switch() -> None:
    assert _advertise({}, workload=False) == [
        (
            "warning",
            "managed node group gpu-0b65b35 would not advertise nvidia.com/gpu: the plan installs no NVIDIA device "
            "plugin (or GPU Operator) and manages no Kubernetes workloads, so the plugin may be installed elsewhere "
            "(GitOps, another stack): if it is, state it with the stack config `gpucloud:externalDevicePlugins: "
            "true`; pods requesting it stay Pending",
        )
    ]


def test_no_device_plugin_with_a_gpu_workload_in_the_plan_is_an_error() -> None:
    [(severity, message)] = _advertise({}, workload=True)
    assert severity == "error"
    assert message == (
        "managed node group gpu-0b65b35 would not advertise nvidia.com/gpu: the plan installs no NVIDIA device plugin "
        "(or GPU Operator); pods requesting it stay Pending"
    )


def test_external_device_plugins_advertise_the_pool_devices() -> None:
    config = {"gpucloud:externalDevicePlugins": True}
    assert _advertise(config, workload=True) == []
    assert _advertise(config, workload=False) == []

    def program() -> None:
        base_cluster()

    result = run_conformance(run_callable(program, config=config), only=["scheduling"])
    assert {p["pool"].rsplit("-", 1)[0]: p["advertises"] for p in result.pools} == {
        "gpu": ["nvidia.com/gpu"],
        "system": [],
    }


def _gpu_deployment(opts: Any = None) -> None:
    k8s.apps.v1.Deployment(
        "trainer",
        metadata={"name": "trainer", "namespace": "default"},
        spec={
            "selector": {"matchLabels": {"app": "t"}},
            "template": {
                "metadata": {"labels": {"app": "t"}},
                "spec": {
                    "tolerations": [GPU_TOLERATION],
                    "containers": [{"name": "t", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                },
            },
        },
        opts=opts,
    )


def _two_clusters(*, provider: bool) -> list[tuple[str, str]]:
    """Two EKS clusters with a GPU node group each and no device plugin; a GPU Deployment on cluster "train" through
    a provider whose kubeconfig is built from that cluster's outputs (or, without `provider`, on the default
    provider, whose cluster the plan cannot name)."""
    import pulumi
    import pulumi_aws as aws

    def program() -> None:
        clusters = {}
        for name in ("train", "serve"):
            cluster = aws.eks.Cluster(
                name,
                name=name,
                version="1.34",
                role_arn="arn:aws:iam::123456789012:role/c",
                vpc_config={"subnet_ids": ["s-1"]},
            )
            aws.eks.NodeGroup(
                f"{name}-gpu",
                cluster_name=cluster.name,
                node_role_arn="arn:aws:iam::123456789012:role/n",
                subnet_ids=["s-1"],
                instance_types=["g6e.12xlarge"],
                ami_type="AL2023_x86_64_NVIDIA",
                scaling_config={"min_size": 1, "max_size": 1, "desired_size": 1},
            )
            clusters[name] = cluster
        if provider:
            kubeconfig = pulumi.Output.all(clusters["train"].endpoint, clusters["train"].name).apply(
                lambda parts: f"server: {parts[0]} # {parts[1]}"
            )
            _gpu_deployment(pulumi.ResourceOptions(provider=k8s.Provider("train-k8s", kubeconfig=kubeconfig)))
        else:
            _gpu_deployment()

    result = run_conformance(run_callable(program), only=["scheduling"])
    return sorted((f.severity, f.message) for f in result.findings if f.check == "scheduling.advertise")


def test_no_device_plugin_is_an_error_only_on_the_cluster_the_plan_runs_workloads_on() -> None:
    assert _two_clusters(provider=True) == [
        (
            "error",
            "managed node group train-gpu-c7c43db would not advertise nvidia.com/gpu: the plan installs no NVIDIA "
            "device plugin (or GPU Operator); pods requesting it stay Pending",
        ),
        (
            "warning",
            "managed node group serve-gpu-464ccef would not advertise nvidia.com/gpu: the plan installs no NVIDIA "
            "device plugin (or GPU Operator) and manages no Kubernetes workloads on its cluster, so the plugin may be "
            "installed elsewhere (GitOps, another stack): if it is, state it with the stack config "
            "`gpucloud:externalDevicePlugins: true`; pods requesting it stay Pending",
        ),
    ]


def test_a_workload_on_the_default_provider_of_a_two_cluster_plan_leaves_both_undecided() -> None:
    undecided = (
        "would not advertise nvidia.com/gpu: the plan installs no NVIDIA device plugin (or GPU Operator) and cannot "
        "tell whether its Kubernetes workloads run on this pool's cluster (their provider names none of the plan's "
        "clusters, or the pool's cluster is not in the plan), so the plugin may be installed elsewhere (GitOps, "
        "another stack): if it is, state it with the stack config `gpucloud:externalDevicePlugins: true`; pods "
        "requesting it stay Pending"
    )
    assert _two_clusters(provider=False) == [
        ("warning", f"managed node group serve-gpu-464ccef {undecided}"),
        ("warning", f"managed node group train-gpu-c7c43db {undecided}"),
    ]


def test_pulumi_eks_clusters_tell_their_node_groups_and_workloads_apart() -> None:
    """The same with pulumi_eks components: each ManagedNodeGroup names its cluster by the `clusterName` the model
    gives its aws:eks NodeGroup, the workload's provider is built from one cluster's kubeconfig output."""
    import pulumi
    import pulumi_aws as aws
    import pulumi_eks as eks

    def program() -> None:
        role = aws.iam.Role("nodes", assume_role_policy="{}")
        clusters = {}
        for name in ("train", "serve"):
            cluster = eks.Cluster(name, skip_default_node_group=True, authentication_mode="API", instance_roles=[])
            eks.ManagedNodeGroup(
                f"{name}-gpu",
                cluster=cluster,
                node_role_arn=role.arn,
                instance_types=["g6e.12xlarge"],
                scaling_config={"min_size": 1, "max_size": 1, "desired_size": 1},
            )
            clusters[name] = cluster
        provider = k8s.Provider("train-k8s", kubeconfig=clusters["train"].kubeconfig_json)
        _gpu_deployment(pulumi.ResourceOptions(provider=provider))

    result = run_conformance(run_callable(program), only=["scheduling"])
    found = sorted(
        (f.severity, f.message.split(" would not")[0]) for f in result.findings if f.check == "scheduling.advertise"
    )
    assert found == [
        ("error", "managed node group train-gpu-57446ff"),
        ("warning", "managed node group serve-gpu-8ee4504"),
    ]


def test_crd_a_chart_we_cannot_render_may_install_is_undecided() -> None:
    def program() -> None:
        base_cluster(gpu=False)
        # A pinned chart renders; training-operator is outside the lock, so its CRDs are unknown.
        k8s.helm.v3.Release(
            "ca",
            name="ca",
            chart="cluster-autoscaler",
            version="9.53.0",
            repository_opts={"repo": "https://kubernetes.github.io/autoscaler"},
            namespace="kube-system",
            values={"autoDiscovery": {"clusterName": "sched-test"}},
        )
        k8s.helm.v3.Release(
            "training",
            name="training",
            chart="training-operator",
            version="1.9.0",
            repository_opts={"repo": "https://charts.example.com"},
            namespace="kubeflow",
        )
        k8s.apiextensions.CustomResource(
            "job",
            api_version=MPIJOB["apiVersion"],
            kind=MPIJOB["kind"],
            metadata=MPIJOB["metadata"],
            spec=MPIJOB["spec"],
        )

    result = run_conformance(run_callable(program), only=["helm", "k8s.crd"])
    assert [(f.check, f.severity) for f in result.findings] == [("helm.lock", "warning"), ("k8s.crd", "warning")]
    crd = next(f for f in result.findings if f.check == "k8s.crd")
    assert crd.message == (
        "undecided: MPIJob nccl: no CRD for kind MPIJob in group kubeflow.org among the plan's objects, and Helm "
        "releases were not rendered (training): cannot tell whether one installs it"
    )
    # A stack that enforces the lock keeps the lock error; the CRD stays undecided (the lock error says why).
    strict = run_conformance(
        run_callable(program, config={"gpucloud:enforceChartLock": True}), only=["helm", "k8s.crd"]
    )
    assert [(f.check, f.severity) for f in strict.findings] == [("helm.lock", "error"), ("k8s.crd", "warning")]


def test_a_stack_option_that_is_not_a_boolean_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpucloud.cli import main

    (tmp_path / "Pulumi.yaml").write_text("name: opts\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  gpucloud:externalDevicePlugins: maybe\n")
    (tmp_path / "__main__.py").write_text("import pulumi_aws as aws\n\naws.s3.Bucket('b')\n")
    code = main(["plan", "--program", str(tmp_path), "--no-policy-config", "--format", "json", "--timeout", "60"])
    assert code == 2
    err = capsys.readouterr().err
    assert "gpucloud:externalDevicePlugins in " in err
    assert "Pulumi.dev.yaml: 'maybe' is not true or false; set it to true (the device plugins are installed " in err
    assert "Traceback" not in err
