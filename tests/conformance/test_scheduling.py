"""The scheduling and invariants checks on small programs: each defect class put back, then fixed.

Charts are the vendored pinned ones rendered by the real Helm (module-scoped: rendered once); the programs use
raw pulumi_aws / pulumi_kubernetes resources, so the checks are shown to read resources, not gpucloud's
components.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from sched_render import CHARTS
from schedkit import (
    ACCOUNT_ROOT,
    CLUSTER,
    GPU_TAINT,
    GPU_TOLERATION,
    base_cluster,
    derived,
    gpu_job,
    key_policy,
    keyed,
    plan_of,
    release,
    run,
)

from gpucloud.charts.helm import find_helm, helm_template
from gpucloud.conformance import registered_checks
from gpucloud.conformance.kube import (
    NodeLabels,
    Taint,
    defaulted_limit_range_item,
    match_requirement,
    pod_requests,
    tolerates,
)
from gpucloud.conformance.nodes import parse_user_data

pytestmark = pytest.mark.skipif(find_helm() is None, reason="needs the helm binary `make` installs")

NDP = "nvidia-device-plugin"
SLR_ARN = "arn:aws:iam::123456789012:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
EFA_RULE = {
    "name": "aws-efa",
    "labels": {"vpc.amazonaws.com/efa.present": "true"},
    "matchFeatures": [
        {
            "feature": "pci.device",
            "matchExpressions": {
                "vendor": {"op": "In", "value": ["1d0f"]},
                "device": {"op": "InRegexp", "value": ["^efa"]},
            },
        }
    ],
}


def base(name: str) -> str:
    """A pool's name without the provider's autoname suffix (node groups without nodeGroupName get one)."""
    return re.sub(r"-[0-9a-f]{7}$", "", name)


# Charts the lock no longer pins (cluster-autoscaler 9.46.6, CA 1.32) are kept as test fixtures only.
FIXTURE_CHARTS = Path(__file__).resolve().parents[1] / "fixtures" / "charts"


def render(chart: str, release_name: str, namespace: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    where = CHARTS / chart if (CHARTS / chart).is_dir() else FIXTURE_CHARTS / chart
    return helm_template(where, release=release_name, namespace=namespace, values=values)


@pytest.fixture(scope="module")
def charts() -> dict[str, list[dict[str, Any]]]:
    """Rendered once: the device plugin with NFD/GFD (values the alias drops, and values it reads), dcgm-exporter,
    the EFA plugin and cluster-autoscaler at the pinned and the 1.34 chart."""
    plugin = {"tolerations": [GPU_TOLERATION], "gfd": {"enabled": True}}
    worker = {"tolerations": [{"operator": "Exists"}], "config": {"sources": {"custom": [EFA_RULE]}}}
    return {
        # `node-feature-discovery:` is not the sub-chart's alias (`nfd`): Helm drops it without a word.
        "ndp-dropped": render(
            f"{NDP}-0.18.2",
            "ndp",
            NDP,
            {**plugin, "nfd": {"enabled": True}, "node-feature-discovery": {"worker": worker}},
        ),
        "ndp-fixed": render(f"{NDP}-0.18.2", "ndp", NDP, {**plugin, "nfd": {"enabled": True, "worker": worker}}),
        "dcgm-gpu-present": render(
            "dcgm-exporter-4.8.1",
            "dcgm",
            "monitoring",
            {"tolerations": [GPU_TOLERATION], "nodeSelector": {"nvidia.com/gpu.present": "true"}},
        ),
        "dcgm-nfd": render(
            "dcgm-exporter-4.8.1",
            "dcgm",
            "monitoring",
            {"tolerations": [GPU_TOLERATION], "nodeSelector": {"feature.node.kubernetes.io/pci-10de.present": "true"}},
        ),
        "efa": render(
            "aws-efa-k8s-device-plugin-v0.5.13",
            "efa",
            "kube-system",
            {"tolerations": [GPU_TOLERATION], "nodeSelector": {"vpc.amazonaws.com/efa.present": "true"}},
        ),
        "gpu-operator": render("gpu-operator-v26.3.0", "gop", "gpu-operator", {}),
        # Operands that tolerate only the NVIDIA-documented nvidia.com/gpu=present taint, not the pool's =true.
        "gpu-operator-narrow": render(
            "gpu-operator-v26.3.0",
            "gop",
            "gpu-operator",
            {
                "daemonsets": {
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
                    ]
                }
            },
        ),
        "ca-9.46.6": render(
            "cluster-autoscaler-9.46.6",
            "ca",
            "kube-system",
            {"cloudProvider": "aws", "autoDiscovery": {"clusterName": CLUSTER}},
        ),
        "ca-9.53.0": render(
            "cluster-autoscaler-9.53.0",
            "ca",
            "kube-system",
            {"cloudProvider": "aws", "autoDiscovery": {"clusterName": CLUSTER}},
        ),
    }


# -- kube-scheduler / admission semantics --------------------------------------------------------------------


def test_toleration_semantics() -> None:
    gpu = Taint("nvidia.com/gpu", "true", "NoSchedule")
    assert tolerates({"operator": "Exists"}, gpu) is True  # empty key + Exists: every taint
    assert tolerates({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, gpu) is True
    assert (
        tolerates({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, gpu)
        is False
    )
    assert tolerates({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, gpu) is False
    assert tolerates({"key": "nvidia.com/gpu", "value": "true"}, gpu) is True  # operator defaults to Equal


def test_node_affinity_operators() -> None:
    labels = NodeLabels({"zone": frozenset({"a", "b"}), "gpus": frozenset({"8"})})
    assert match_requirement(labels, {"key": "zone", "operator": "In", "values": ["b"]}) is True
    assert match_requirement(labels, {"key": "zone", "operator": "In", "values": ["c"]}) is False
    assert match_requirement(labels, {"key": "zone", "operator": "NotIn", "values": ["a"]}) is True  # b nodes
    assert match_requirement(labels, {"key": "gpus", "operator": "Gt", "values": ["4"]}) is True
    assert match_requirement(labels, {"key": "gpus", "operator": "Lt", "values": ["8"]}) is False
    assert match_requirement(labels, {"key": "missing", "operator": "DoesNotExist"}) is True
    assert match_requirement(NodeLabels(open=True), {"key": "missing", "operator": "In", "values": ["x"]}) is None


def test_limit_range_default_comes_from_max() -> None:
    item = defaulted_limit_range_item(
        {"type": "Container", "max": {"nvidia.com/gpu": "4"}, "default": {"memory": "1Gi"}}
    )
    assert item.default == {"memory": "1Gi", "nvidia.com/gpu": "4"}
    assert item.default_request == {"memory": "1Gi", "nvidia.com/gpu": "4"}


def test_pod_requests_take_limits_and_init_peak() -> None:
    spec = {
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
        "containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "2", "cpu": "1"}}}],
    }
    assert pod_requests(spec) == {"cpu": 3.0, "nvidia.com/gpu": 2.0}


def test_user_data_formats() -> None:
    nodeadm = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n'
        "--B\nContent-Type: application/node.eks.aws\n\n"
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster: {name: c}\n  kubelet:\n"
        "    config:\n      registerWithTaints: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]\n"
        "    flags: ['--node-labels=gpucloud.io/pool=a,team=x']\n--B--\n"
    )
    boot = parse_user_data(base64.b64encode(nodeadm.encode()).decode())
    assert boot.labels == {"gpucloud.io/pool": "a", "team": "x"}
    assert boot.taints == [Taint("nvidia.com/gpu", "true", "NoSchedule")]
    script = (
        "#!/bin/bash\n/etc/eks/bootstrap.sh c "
        "--kubelet-extra-args '--node-labels=a=b --register-with-taints=k=v:NoExecute'"
    )
    boot = parse_user_data(script)
    assert boot.labels == {"a": "b"} and boot.taints == [Taint("k", "v", "NoExecute")]
    toml = '[settings.kubernetes.node-labels]\n"a" = "b"\n[settings.kubernetes.node-taints]\n"k" = ["v:NoSchedule"]\n'
    boot = parse_user_data(toml)
    assert boot.labels == {"a": "b"} and boot.taints == [Taint("k", "v", "NoSchedule")]


def test_checks_are_registered() -> None:
    names = registered_checks()
    assert "scheduling" in names and "invariants" in names


# -- GPU node agents ------------------------------------------------------------------------------------------


def _ndp_program() -> None:
    base_cluster()
    release("ndp", NDP, "0.18.2", NDP)
    gpu_job()


def test_nfd_values_under_the_wrong_key_strand_the_gpu_stack(charts: dict[str, list[dict[str, Any]]]) -> None:
    plan = plan_of(_ndp_program)
    ctx, findings = run(plan, derived(plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts["ndp-dropped"]))
    assert keyed(f for f in findings if f.severity == "error") == [
        ("scheduling.advertise", "gpu", "instanceTypes", None),
        (
            "scheduling.daemonset",
            "ndp",
            "spec.template.spec",
            "apps/v1/DaemonSet nvidia-device-plugin/ndp-node-feature-discovery-worker",
        ),
        (
            "scheduling.daemonset",
            "ndp",
            "spec.template.spec",
            "apps/v1/DaemonSet nvidia-device-plugin/ndp-nvidia-device-plugin",
        ),
        (
            "scheduling.daemonset",
            "ndp",
            "spec.template.spec",
            "apps/v1/DaemonSet nvidia-device-plugin/ndp-nvidia-device-plugin-gpu-feature-discovery",
        ),
        ("scheduling.workload", "train", "spec.template.spec", None),
    ]
    worker = next(f for f in findings if f.object and f.object.endswith("-worker"))
    # The chart's default NFD worker toleration is nvidia.com/gpu=present, not the pool's =true.
    assert "untolerated taint nvidia.com/gpu=true:NoSchedule" in worker.message
    assert worker.source.startswith("chart nvidia-device-plugin@0.18.2; kube-scheduler semantics (Kubernetes 1.34)")
    job = next(f for f in findings if f.check == "scheduling.workload")
    assert "requests nvidia.com/gpu=4 but the node advertises none (no NVIDIA device plugin runs there)" in job.message
    assert ctx.facts["placements"][0]["pools"] == []


def test_nfd_values_under_the_alias_advertise_gpus(charts: dict[str, list[dict[str, Any]]]) -> None:
    plan = plan_of(_ndp_program)
    ctx, findings = run(plan, derived(plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts["ndp-fixed"]))
    assert keyed(findings) == []
    train = next(p for p in ctx.facts["placements"] if p["workload"] == "Job ml/train")
    assert [(base(p["pool"]), p["verified"]) for p in train["pools"]] == [("gpu", True)]
    assert {base(p["pool"]): p["advertises"] for p in ctx.facts["scheduling_pools"]} == {
        "system": [],
        "gpu": ["nvidia.com/gpu"],
    }


def _dcgm_program() -> None:
    base_cluster()
    release("ndp", NDP, "0.18.2", NDP)
    release("dcgm", "dcgm-exporter", "4.8.1", "monitoring")


@pytest.mark.parametrize(("values", "expected"), [("dcgm-gpu-present", 1), ("dcgm-nfd", 0)])
def test_dcgm_exporter_selecting_a_gpu_operator_label(
    charts: dict[str, list[dict[str, Any]]], values: str, expected: int
) -> None:
    plan = plan_of(_dcgm_program)
    extra = derived(plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts["ndp-fixed"]) + derived(
        plan, "dcgm", "chart dcgm-exporter@4.8.1", charts[values]
    )
    _, findings = run(plan, extra)
    assert (
        keyed(findings)
        == [("scheduling.daemonset", "dcgm", "spec.template.spec", "apps/v1/DaemonSet monitoring/dcgm-dcgm-exporter")]
        * expected
    )
    if expected:
        assert "nvidia.com/gpu.present [that label is set only by the GPU Operator" in findings[0].message


def _efa_program() -> None:
    cluster = base_cluster(gpu=False)
    lt = aws.ec2.LaunchTemplate("efa-lt", network_interfaces=[{"device_index": 0, "interface_type": "efa"}])
    aws.eks.NodeGroup(
        "train",
        cluster_name=cluster.name,
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["s-1"],
        instance_types=["p5.48xlarge"],
        labels={"gpucloud.io/pool": "train"},
        taints=[GPU_TAINT],
        launch_template={"id": lt.id, "version": "1"},
        scaling_config={"min_size": 2, "max_size": 2, "desired_size": 2},
    )
    release("ndp", NDP, "0.18.2", NDP)
    release("efa", "aws-efa-k8s-device-plugin", "v0.5.13")


@pytest.mark.parametrize(("nfd", "expected"), [("ndp-dropped", True), ("ndp-fixed", False)])
def test_efa_plugin_needs_the_nfd_efa_rule(charts: dict[str, list[dict[str, Any]]], nfd: str, expected: bool) -> None:
    plan = plan_of(_efa_program)
    extra = derived(plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts[nfd]) + derived(
        plan, "efa", "chart aws-efa-k8s-device-plugin@v0.5.13", charts["efa"]
    )
    _, findings = run(plan, extra)
    efa = [k for k in keyed(findings) if k[1] == "efa" or "efa" in k[2]]
    if expected:
        assert (
            "scheduling.daemonset",
            "efa",
            "spec.template.spec",
            "apps/v1/DaemonSet efa-aws-efa-k8s-device-plugin",
        ) in efa
        adv = [f for f in findings if f.check == "scheduling.advertise" and "vpc.amazonaws.com/efa" in f.message]
        assert [f.urn.rsplit("::", 1)[-1] for f in adv] == ["train"]
    else:
        assert keyed(findings) == []


# -- workloads ------------------------------------------------------------------------------------------------


def _bottlerocket_cluster(gpu_max: int) -> None:
    # Bottlerocket NVIDIA runs the device plugin in the host, so nvidia.com/gpu needs no DaemonSet here.
    cluster = base_cluster(system=False, gpu=False)
    aws.eks.NodeGroup(
        "br",
        cluster_name=cluster.name,
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["s-1"],
        instance_types=["g6e.12xlarge"],
        ami_type="BOTTLEROCKET_x86_64_NVIDIA",
        labels={"gpucloud.io/pool": "gpu"},
        taints=[GPU_TAINT],
        scaling_config={"min_size": gpu_max, "max_size": gpu_max, "desired_size": gpu_max},
    )


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        ({"gpus": 8}, "requests nvidia.com/gpu=8 but g6e.12xlarge allocates 4"),
        (
            {"extra_spec": {"nodeSelector": {"gpucloud.io/pool": "h100"}}},
            "nodeSelector gpucloud.io/pool=h100: the node's gpucloud.io/pool is gpu",
        ),
        ({"extra_spec": {"tolerations": []}}, "untolerated taint nvidia.com/gpu=true:NoSchedule"),
    ],
)
def test_workload_that_fits_no_pool(job: dict[str, Any], reason: str) -> None:
    def program() -> None:
        _bottlerocket_cluster(gpu_max=2)
        gpu_job(**job)

    _, findings = run(plan_of(program))
    assert keyed(findings) == [("scheduling.workload", "train", "spec.template.spec", None)]
    assert reason in next(f for f in findings if f.check == "scheduling.workload").message


def test_gang_larger_than_the_pool() -> None:
    def program(pods: int) -> Any:
        return lambda: (_bottlerocket_cluster(gpu_max=2), gpu_job(pods=pods))

    _, findings = run(plan_of(program(3)))
    errors = [f for f in findings if f.check == "scheduling.capacity"]
    assert keyed(errors) == [("scheduling.capacity", "train", "spec.template.spec", None)]
    assert "runs 3 pods at 1 per node, so it needs 3 nodes" in errors[0].message and errors[0].severity == "error"
    _, findings = run(plan_of(program(2)))
    assert [f for f in findings if f.check == "scheduling.capacity"] == []


def _team_program(quota_gpus: int, limit_default: bool, replicas: int = 1) -> Any:
    def program() -> None:
        _bottlerocket_cluster(gpu_max=4)
        k8s.core.v1.ResourceQuota(
            "quota",
            metadata={"name": "q", "namespace": "ml"},
            spec={"hard": {"requests.nvidia.com/gpu": str(quota_gpus)}},
        )
        item: dict[str, Any] = {"type": "Container", "max": {"nvidia.com/gpu": "4"}}
        if limit_default:
            item["default"] = {"nvidia.com/gpu": "0"}
        k8s.core.v1.LimitRange("limits", metadata={"name": "l", "namespace": "ml"}, spec={"limits": [item]})
        gpu_job(pods=2)
        k8s.apps.v1.Deployment(
            "serve",
            metadata={"name": "serve", "namespace": "ml"},
            spec={
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "serve"}},
                "template": {
                    "metadata": {"labels": {"app": "serve"}},
                    "spec": {
                        "tolerations": [GPU_TOLERATION],
                        "containers": [
                            {"name": "server", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                        ],
                    },
                },
            },
        )

    return program


def test_quota_smaller_than_the_namespace_workloads_and_limit_range_max_without_default() -> None:
    _, findings = run(plan_of(_team_program(quota_gpus=8, limit_default=False)))
    assert keyed(findings) == [
        ("scheduling.limitrange", "limits", "spec.limits[0].max.nvidia.com/gpu", None),
        ("scheduling.quota", "quota", "spec.hard.requests.nvidia.com/gpu", None),
    ]
    quota = next(f for f in findings if f.check == "scheduling.quota")
    assert "need requests.nvidia.com/gpu=9 together" in quota.message and quota.severity == "error"
    assert quota.source == "Kubernetes 1.34 ResourceQuota admission"
    _, findings = run(plan_of(_team_program(quota_gpus=9, limit_default=True)))
    assert keyed(findings) == []


def test_limit_range_that_rejects_a_container() -> None:
    def program() -> None:
        _bottlerocket_cluster(gpu_max=2)
        k8s.core.v1.LimitRange(
            "limits",
            metadata={"name": "l", "namespace": "ml"},
            spec={
                "limits": [{"type": "Container", "max": {"nvidia.com/gpu": "2"}, "default": {"nvidia.com/gpu": "0"}}]
            },
        )
        gpu_job(gpus=4)

    _, findings = run(plan_of(program))
    assert keyed(findings) == [
        ("scheduling.limitrange", "train", "spec.template.spec.containers[trainer].resources", None)
    ]
    assert "limit nvidia.com/gpu=4 exceeds the LimitRange max 2" in findings[0].message


# -- autoscaling ----------------------------------------------------------------------------------------------

NODEADM = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: application/node.eks.aws\n\n'
    "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster: {name: sched-test}\n  kubelet:\n"
    "    config:\n      registerWithTaints: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]\n"
    "    flags: ['--node-labels=gpucloud.io/pool=asg']\n--B--\n"
)
CA_TAGS = {
    "k8s.io/cluster-autoscaler/enabled": "true",
    f"k8s.io/cluster-autoscaler/{CLUSTER}": "owned",
}
TEMPLATE_TAGS = {
    "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool": "asg",
    "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "true:NoSchedule",
}


def _asg_program(tags: dict[str, str], ca_version: str = "9.53.0", ca_values: dict[str, Any] | None = None) -> Any:
    def program() -> None:
        cluster = base_cluster(gpu=False)
        lt = aws.ec2.LaunchTemplate(
            "asg-lt", image_id="ami-0123456789abcdef0", user_data=base64.b64encode(NODEADM.encode()).decode()
        )
        aws.autoscaling.Group(
            "asg",
            min_size=0,
            max_size=2,
            vpc_zone_identifiers=["s-1"],
            mixed_instances_policy={
                "launch_template": {
                    "launch_template_specification": {"launch_template_id": lt.id},
                    "overrides": [{"instance_type": "g6.12xlarge"}],
                }
            },
            tags=[{"key": k, "value": v, "propagate_at_launch": True} for k, v in tags.items()],
            opts=pulumi.ResourceOptions(depends_on=[cluster]),
        )
        release("ca", "cluster-autoscaler", ca_version, values=ca_values)
        gpu_job(extra_spec={"nodeSelector": {"gpucloud.io/pool": "asg"}}, gpus=1)
        release("ndp", NDP, "0.18.2", NDP)

    return program


def _asg_findings(charts: dict[str, list[dict[str, Any]]], tags: dict[str, str], ca: str = "9.53.0") -> list[Any]:
    plan = plan_of(_asg_program(tags, ca))
    extra = derived(plan, "ca", f"chart cluster-autoscaler@{ca}", charts[f"ca-{ca}"]) + derived(
        plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts["ndp-fixed"]
    )
    return run(plan, extra)[1]


def test_self_managed_asg_without_autoscaler_tags(charts: dict[str, list[dict[str, Any]]]) -> None:
    findings = _asg_findings(charts, {})
    assert keyed(findings) == [("scheduling.autoscaling", "asg", "tags", None)] * 2
    discovery, template = sorted(findings, key=lambda f: "node-template" in f.message)
    assert (
        "lacks the auto-discovery tag(s) ['k8s.io/cluster-autoscaler/enabled', 'k8s.io/cluster-autoscaler/sched-test']"
        in discovery.message
    )
    assert discovery.source.startswith("chart cluster-autoscaler@9.53.0 Deployment args; cluster-autoscaler AWS")
    assert (
        "lacks node-template tags ['k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool=asg', "
        "'k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu=true:NoSchedule']" in template.message
    )


def test_self_managed_asg_with_autoscaler_tags(charts: dict[str, list[dict[str, Any]]]) -> None:
    assert keyed(_asg_findings(charts, {**CA_TAGS, **TEMPLATE_TAGS})) == []


def test_autoscaler_minor_must_match_the_cluster(charts: dict[str, list[dict[str, Any]]]) -> None:
    findings = _asg_findings(charts, {**CA_TAGS, **TEMPLATE_TAGS}, ca="9.46.6")
    assert keyed(findings) == [
        (
            "invariants.autoscaler-version",
            "ca",
            "spec.template.spec.containers.image",
            "apps/v1/Deployment kube-system/ca-aws-cluster-autoscaler",
        )
    ]
    assert "cluster-autoscaler v1.32.0 (minor 1.32) would run against Kubernetes 1.34" in findings[0].message


def test_autoscaler_version_from_the_release_values_when_not_rendered() -> None:
    # The pinned chart with its image overridden to CA 1.32: the values say which CA runs, no render needed.
    plan = plan_of(_asg_program({**CA_TAGS, **TEMPLATE_TAGS}, "9.53.0", {"image": {"tag": "v1.32.0"}}))
    _, findings = run(plan)
    assert ("invariants.autoscaler-version", "ca", "values.image.tag", None) in keyed(findings)


def test_karpenter_nodepool_without_node_class_or_controller() -> None:
    def program() -> None:
        base_cluster(system=False, gpu=False)
        k8s.apiextensions.CustomResource(
            "np",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "gpu-np"},
            spec={
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "missing"},
                        "requirements": [
                            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]}
                        ],
                    }
                }
            },
        )

    _, findings = run(plan_of(program))
    assert keyed(findings) == [
        # p5 nodes and no NVIDIA or EFA device plugin in the plan: neither resource is ever advertised.
        ("scheduling.advertise", "np", "spec.template.spec.requirements", None),
        ("scheduling.advertise", "np", "spec.template.spec.requirements", None),
        ("scheduling.autoscaling", "np", "spec", None),
        ("scheduling.autoscaling", "np", "spec.template.spec.nodeClassRef", None),
    ]


# -- drain ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "blocked"),
    [
        ({"minAvailable": 2}, "minAvailable 2 equals the 2 pods"),
        ({"maxUnavailable": 1}, "no scale subresource"),
        ({"minAvailable": 1}, None),
    ],
)
def test_pdb_that_blocks_the_drain(policy: dict[str, Any], blocked: str | None) -> None:
    def program() -> None:
        _bottlerocket_cluster(gpu_max=2)
        release("nth", "aws-node-termination-handler", "0.27.0")
        gpu_job(pods=2)
        k8s.policy.v1.PodDisruptionBudget(
            "pdb",
            metadata={"name": "train", "namespace": "ml"},
            spec={"selector": {"matchLabels": {"app": "train"}}, **policy},
        )

    _, findings = run(plan_of(program))
    drain = [f for f in findings if f.check == "scheduling.drain"]
    assert keyed(drain) == ([("scheduling.drain", "pdb", "spec", None)] if blocked else [])
    if blocked:
        assert blocked in drain[0].message and "by aws-node-termination-handler" in drain[0].message


# -- KMS ------------------------------------------------------------------------------------------------------


def _karpenter_kms_program(grant_in_key_policy: bool, iam_after_deploy: bool = False) -> Any:
    def program() -> None:
        base_cluster(system=False, gpu=False)
        role = aws.iam.Role("karpenter-role", name="karpenter-controller", assume_role_policy="{}")
        if iam_after_deploy:
            # Built from the role's ARN, which the provider computes: unknown in a preview.
            aws.iam.RolePolicy(
                "karpenter-policy",
                role=role.name,
                policy=role.arn.apply(
                    lambda a: json.dumps({"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": a}]})
                ),
            )
        aws.eks.PodIdentityAssociation(
            "karpenter-pia",
            cluster_name=CLUSTER,
            namespace="kube-system",
            service_account="karpenter",
            role_arn=role.arn,
        )
        statements = []
        if grant_in_key_policy:
            statements.append(
                {
                    "Sid": "Karpenter",
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:role/karpenter-controller"},
                    "Action": [
                        "kms:CreateGrant",
                        "kms:Decrypt",
                        "kms:DescribeKey",
                        "kms:GenerateDataKey*",
                        "kms:ReEncrypt*",
                    ],
                    "Resource": "*",
                }
            )
        key = aws.kms.Key("node-key", policy=key_policy(*statements))
        release(
            "karpenter",
            "oci://public.ecr.aws/karpenter/karpenter",
            "1.12.1",
            values={"settings": {"clusterName": CLUSTER}},
        )
        k8s.apiextensions.CustomResource(
            "nc",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": "gpu"},
            spec={
                "role": "node",
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "kmsKeyID": key.arn}}],
            },
        )

    return program


def test_karpenter_role_cannot_use_the_node_volume_key() -> None:
    _, findings = run(plan_of(_karpenter_kms_program(False)))
    assert keyed(findings) == [("invariants.kms", "nc", "spec.blockDeviceMappings[0].ebs.kmsKeyID", None)]
    assert (
        "Karpenter controller role karpenter-role launches nodes whose volumes use KMS key node-key"
        in findings[0].message
    )
    assert (
        "kms:CreateGrant, kms:Decrypt, kms:DescribeKey, kms:GenerateDataKeyWithoutPlaintext, kms:ReEncryptFrom"
        in findings[0].message
    )
    _, findings = run(plan_of(_karpenter_kms_program(True)))
    assert keyed(findings) == []


def test_karpenter_role_with_an_iam_policy_known_only_after_deploy() -> None:
    _, findings = run(plan_of(_karpenter_kms_program(False, iam_after_deploy=True)))
    assert keyed(findings) == [("invariants.kms", "nc", "spec.blockDeviceMappings[0].ebs.kmsKeyID", None)]
    assert findings[0].severity == "warning" and "only known after deploy" in findings[0].message


@pytest.mark.parametrize("slr_statement", [False, True])
def test_launch_template_key_needs_the_autoscaling_service_linked_role(slr_statement: bool) -> None:
    def program() -> None:
        cluster = base_cluster(system=False, gpu=False)
        stmts = []
        if slr_statement:
            stmts.append(
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": SLR_ARN},
                    "Action": [
                        "kms:Decrypt",
                        "kms:DescribeKey",
                        "kms:GenerateDataKey*",
                        "kms:ReEncrypt*",
                        "kms:CreateGrant",
                    ],
                    "Resource": "*",
                }
            )
        key = aws.kms.Key("lt-key", policy=key_policy(*stmts))
        lt = aws.ec2.LaunchTemplate(
            "lt",
            block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn}}],
        )
        aws.eks.NodeGroup(
            "lt-ng",
            cluster_name=cluster.name,
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["s-1"],
            instance_types=["m7i.large"],
            launch_template={"id": lt.id, "version": "1"},
            scaling_config={"min_size": 1, "max_size": 1, "desired_size": 1},
        )

    _, findings = run(plan_of(program))
    expected = [] if slr_statement else [("invariants.kms", "lt", "blockDeviceMappings[0].ebs.kmsKeyId", None)]
    assert keyed(findings) == expected
    assert all(ACCOUNT_ROOT not in f.message for f in findings)


def test_malformed_objects_give_findings_not_tracebacks() -> None:
    def program() -> None:
        _bottlerocket_cluster(gpu_max=1)
        release("junk", "junk", "1.0.0")

    plan = plan_of(program)
    junk = [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "d"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeSelector": ["not", "a", "map"],
                        "tolerations": "all",
                        "containers": [{"name": "c", "resources": "lots"}],
                    }
                }
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "x", "namespace": 3},
            "spec": {"replicas": "many", "template": {"metadata": {"labels": ["a"]}, "spec": {"containers": "c"}}},
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"},
            "spec": {"selector": "x"},
        },
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": ["cpu"]}},
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "l"},
            "spec": {"limits": [{"type": "Container", "max": "4"}]},
        },
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "n"}, "spec": {"template": "x"}},
    ]
    _, findings = run(plan, derived(plan, "junk", "chart junk@1.0.0", junk))
    assert all(f.severity in ("error", "warning") and f.message for f in findings)
    # Each bad object is skipped on its own; nothing is left unevaluated and nothing raises.
    assert [f for f in findings if f.check.endswith(".unevaluated")] == []


def test_neuron_pool_without_neuron_device_plugin() -> None:
    def program() -> None:
        cluster = base_cluster(gpu=False)
        aws.eks.NodeGroup(
            "trn",
            cluster_name=cluster.name,
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["s-1"],
            instance_types=["trn1.32xlarge"],
            ami_type="AL2023_x86_64_NEURON",
            taints=[{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NO_SCHEDULE"}],
            scaling_config={"min_size": 1, "max_size": 1, "desired_size": 1},
        )

    _, findings = run(plan_of(program))
    assert keyed(findings) == [("scheduling.advertise", "trn", "instanceTypes", None)]
    assert "would not advertise aws.amazon.com/neuron: the plan installs no Neuron device plugin" in findings[0].message


def test_a_second_daemonset_of_the_same_role_covers_the_pool(charts: dict[str, list[dict[str, Any]]]) -> None:
    plan = plan_of(_dcgm_program)
    # dcgm-exporter pinned to a label nothing sets, plus a second one selecting NFD's label: the pool is covered.
    second = [
        {**m, "metadata": {**m["metadata"], "name": "dcgm-2"}} for m in charts["dcgm-nfd"] if m["kind"] == "DaemonSet"
    ]
    extra = (
        derived(plan, "ndp", "chart nvidia-device-plugin@0.18.2", charts["ndp-fixed"])
        + derived(plan, "dcgm", "chart dcgm-exporter@4.8.1", charts["dcgm-gpu-present"])
        + derived(plan, "dcgm", "chart dcgm-exporter@4.8.1", second)
    )
    assert keyed(run(plan, extra)[1]) == []


def test_fargate_profile_takes_the_controller_that_fits_no_node_group() -> None:
    def program(fargate: bool) -> Any:
        def run_it() -> None:
            cluster = base_cluster(system=False)
            k8s.apps.v1.Deployment(
                "ctrl",
                metadata={"name": "ctrl", "namespace": "karpenter"},
                spec={
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "ctrl"}},
                    "template": {
                        "metadata": {"labels": {"app": "ctrl"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]},
                    },
                },
            )
            if fargate:
                aws.eks.FargateProfile(
                    "fp",
                    cluster_name=cluster.name,
                    pod_execution_role_arn="arn:aws:iam::123456789012:role/fp",
                    selectors=[{"namespace": "karpenter"}],
                )

        return run_it

    ctx, findings = run(plan_of(program(False)))
    no_pool = [f for f in findings if f.check == "scheduling.workload"]
    assert keyed(no_pool) == [("scheduling.workload", "ctrl", "spec.template.spec", None)]
    assert "untolerated taint nvidia.com/gpu=true:NoSchedule" in no_pool[0].message
    ctx, findings = run(plan_of(program(True)))
    assert [f for f in findings if f.check == "scheduling.workload"] == []
    ctrl = next(p for p in ctx.facts["placements"] if p["workload"] == "Deployment karpenter/ctrl")
    assert [(base(p["pool"]), p["kind"]) for p in ctrl["pools"]] == [("fp", "Fargate profile")]


@pytest.mark.parametrize(("on_demand_min", "warned"), [(0, True), (1, False)])
def test_priority_expander_prefers_spot_over_the_on_demand_base(on_demand_min: int, warned: bool) -> None:
    def program() -> None:
        cluster = base_cluster(gpu=False)
        for cap, low in (("ON_DEMAND", on_demand_min), ("SPOT", 0)):
            aws.eks.NodeGroup(
                f"train-{cap.lower().replace('_', '-')}",
                cluster_name=cluster.name,
                node_role_arn="arn:aws:iam::123456789012:role/n",
                subnet_ids=["s-1"],
                instance_types=["g6e.12xlarge"],
                ami_type="BOTTLEROCKET_x86_64_NVIDIA",
                capacity_type=cap,
                labels={"gpucloud.io/pool": "train"},
                taints=[GPU_TAINT],
                scaling_config={"min_size": low, "max_size": 2, "desired_size": low},
            )
        k8s.core.v1.ConfigMap(
            "prio",
            metadata={"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            data={"priorities": "20:\n- .*-spot.*\n10:\n- .*\n"},
        )
        release(
            "ca",
            "cluster-autoscaler",
            "9.53.0",
            values={"autoDiscovery": {"clusterName": CLUSTER}, "extraArgs": {"expander": "priority"}},
        )

    _, findings = run(plan_of(program))
    expander = [f for f in findings if f.field == "data.priorities"]
    assert keyed(expander) == ([("scheduling.autoscaling", "prio", "data.priorities", None)] if warned else [])
    if warned:
        assert expander[0].severity == "warning"
        assert re.search(
            r"ranks spot node group train-spot-[0-9a-f]{7} \(20\) above its on-demand twin "
            r"train-on-demand-[0-9a-f]{7} \(10\)",
            expander[0].message,
        )


@pytest.mark.parametrize("values", ["gpu-operator", "gpu-operator-narrow"])
def test_gpu_operator_operands_follow_the_cluster_policy(charts: dict[str, list[dict[str, Any]]], values: str) -> None:
    def program() -> None:
        base_cluster()
        release("gop", "gpu-operator", "v26.3.0", "gpu-operator")
        gpu_job()

    plan = plan_of(program)
    ctx, findings = run(plan, derived(plan, "gop", "chart gpu-operator@v26.3.0", charts[values]))
    if values == "gpu-operator":
        # NFD's PCI label -> the operator's nvidia.com/gpu.deploy.* labels -> its device plugin -> nvidia.com/gpu.
        assert keyed(findings) == []
        gpu = next(p for p in ctx.facts["scheduling_pools"] if base(p["pool"]) == "gpu")
        assert gpu["advertises"] == ["nvidia.com/gpu"]
        return
    policy = "nvidia.com/v1/ClusterPolicy cluster-policy"
    assert keyed(findings) == [
        ("scheduling.advertise", "gpu", "instanceTypes", None),
        ("scheduling.daemonset", "gop", "spec.daemonsets.tolerations", policy),
        ("scheduling.daemonset", "gop", "spec.daemonsets.tolerations", policy),
        ("scheduling.daemonset", "gop", "spec.daemonsets.tolerations", policy),
        ("scheduling.workload", "train", "spec.template.spec", None),
    ]
    assert "nvidia-device-plugin (operand of ClusterPolicy cluster-policy) cannot run on managed node group gpu" in (
        " ".join(f.message for f in findings)
    )


@pytest.mark.parametrize(
    ("meta", "replicas", "expected"),
    [
        ({}, 1, 1),
        ({}, 0, 0),  # no pods to place
        ({"annotations": {"helm.sh/hook": "post-delete"}}, 1, 0),  # runs on uninstall only
    ],
)
def test_pods_the_scheduler_never_places_are_not_stranded(meta: dict[str, Any], replicas: int, expected: int) -> None:
    def program() -> None:
        base_cluster(system=False)
        k8s.apps.v1.Deployment(
            "ctrl",
            metadata={"name": "ctrl", "namespace": "ops", **meta},
            spec={
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "ctrl"}},
                "template": {
                    "metadata": {"labels": {"app": "ctrl"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        )

    _, findings = run(plan_of(program))
    assert (
        keyed(f for f in findings if f.check == "scheduling.workload")
        == [("scheduling.workload", "ctrl", "spec.template.spec", None)] * expected
    )
