"""Kueue queues, the vLLM server and the node health gate against upstream: each object class checked against its
CRD (kueue 0.19.2, keda 2.20.2, kube-prometheus-stack 75.6.1) or the Kubernetes schema, and the health gate's
startup taint against the scheduling model, by putting a defect back into a shipped stack."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from stackcopy import ROOT, plan_stack

from gpucloud.conformance import run_conformance

TEAM = ROOT / "stacks" / "teams" / "vision"
HEALTH_KEY = "startup-taint.cluster-autoscaler.kubernetes.io/gpucloud-health"


def _edit_spec(kind: str, change: Any) -> Any:
    def edit(type_: str, name: str, props: dict[str, Any]) -> dict[str, Any] | None:
        if not type_.endswith(f":{kind}"):
            return None
        return change(props)

    return edit


def _errors(plan: Any) -> list[tuple[str, str, str, str]]:
    result = run_conformance(plan)
    return sorted((f.check, f.urn.rsplit("::", 1)[-1], f.field, f.source) for f in result.errors)


TEAM_DEFECTS = [
    (
        "ClusterQueue",
        lambda p: {
            **p,
            "spec": pulumi.Output.from_input(p["spec"]).apply(
                lambda s: {**s, "preemption": {"reclaimWithinCohort": "Sometimes"}}
            ),
        },
        ("k8s.crd", "vision-queue-cluster-queue", "spec.preemption.reclaimWithinCohort"),
        "CRD clusterqueues.kueue.x-k8s.io v1beta2",
    ),
    (
        "LocalQueue",
        lambda p: {**p, "spec": {"clusterQueue": "Not_A_Name"}},
        ("k8s.crd", "vision-queue-local-queue", "spec.clusterQueue"),
        "CRD localqueues.kueue.x-k8s.io v1beta2",
    ),
    (
        "PodMonitor",
        lambda p: {**p, "spec": {**p["spec"], "podMetricsEndpoints": [{"port": "http", "scheme": "ftp"}]}},
        ("k8s.crd", "vision-assistant-podmonitor", "spec.podMetricsEndpoints[0].scheme"),
        "CRD podmonitors.monitoring.coreos.com v1",
    ),
]


@pytest.mark.parametrize(("kind", "change", "where", "source"), TEAM_DEFECTS, ids=[d[0] for d in TEAM_DEFECTS])
def test_team_queue_and_serving_objects_against_their_crds(kind, change, where, source) -> None:
    errors = _errors(plan_stack("dev", program_dir=TEAM, edit=_edit_spec(kind, change)))
    assert [e[:3] for e in errors] == [where]
    assert errors[0][3].startswith(source)


def test_vllm_service_annotations_are_kubernetes_strings() -> None:
    """The NLB Service is a built-in kind: the Kubernetes 1.34 schema rejects a non-string annotation."""

    def change(p: dict[str, Any]) -> dict[str, Any] | None:
        if p["metadata"].get("name") != "assistant":
            return None
        meta = {**p["metadata"], "annotations": {**p["metadata"]["annotations"], "x": 1}}
        return {**p, "metadata": meta}

    errors = _errors(plan_stack("dev", program_dir=TEAM, edit=_edit_spec("Service", change)))
    assert [e[:3] for e in errors] == [("k8s.schema", "vision-assistant-service", "metadata.annotations.x")]


def test_resource_flavor_and_cluster_queue_against_the_kueue_crd() -> None:
    """The platform's objects are checked against the CRDs its own kueue release renders: a taint item requires a
    key, a cohort name is a DNS subdomain."""

    def change(type_: str, name: str, p: dict[str, Any]) -> dict[str, Any] | None:
        if type_.endswith(":ResourceFlavor"):
            return {**p, "spec": {**p["spec"], "nodeTaints": [{"effect": "NoSchedule"}]}}
        if type_.endswith(":ClusterQueue"):
            return {**p, "spec": {**p["spec"], "cohortName": "Not A Cohort"}}
        return None

    errors = _errors(plan_stack("dev", edit=change))
    assert {e[:3] for e in errors} == {
        ("k8s.crd", "gpucloud-dev-kueue-flavor-infer-l40s-spot", "spec.nodeTaints[0].key"),
        ("k8s.crd", "gpucloud-dev-kueue-flavor-dev-l4-spot", "spec.nodeTaints[0].key"),
        ("k8s.crd", "gpucloud-dev-kueue-cq-spot", "spec.cohortName"),
    }
    assert {e[3].split(" from ")[1] for e in errors} == {"chart kueue@0.19.2"}


def test_health_gate_startup_taint_is_transient_only_where_its_remover_lands() -> None:
    """Staging's GPU pools register the startup taint; the health DaemonSet removes it, so the node model keeps it
    out of the pools' steady-state taints. A remover that cannot land never removes it: every GPU workload and
    device plugin of the pool is then reported, as the cluster would behave."""
    clean = run_conformance(plan_stack("staging"))
    assert clean.errors == []
    gpu_pools = [p for p in clean.pools if "nvidia.com/gpu" in p["advertises"]]
    assert sorted(p["kind"] for p in gpu_pools) == ["Karpenter NodePool", "managed node group", "managed node group"]
    for pool in gpu_pools:
        assert not any(t.startswith(HEALTH_KEY) for t in pool["taints"])
    note = f"startup taint {HEALTH_KEY}=unchecked:NoSchedule removed by a DaemonSet once it has run on the node"
    for pool in gpu_pools:
        # Karpenter never counts its startupTaints as node taints; kubelet-registered ones need the remover.
        expected = [] if pool["kind"] == "Karpenter NodePool" else [note]
        assert [n for n in pool["notes"] if "startup taint" in n] == expected

    def change(p: dict[str, Any]) -> dict[str, Any]:
        spec = p["spec"]["template"]["spec"]
        tolerations = [t for t in spec["tolerations"] if t["key"] != HEALTH_KEY]
        template = {**p["spec"]["template"], "spec": {**spec, "tolerations": tolerations}}
        return {**p, "spec": {**p["spec"], "template": template}}

    broken = run_conformance(plan_stack("staging", edit=_edit_spec("DaemonSet", change)))
    checks = {f.check for f in broken.errors}
    # (scheduling.advertise joins these when the device plugin charts were rendered in this process.)
    assert "scheduling.workload" in checks
    assert any(f"untolerated taint {HEALTH_KEY}=unchecked:NoSchedule" in f.message for f in broken.errors)


def test_team_quota_below_its_gang_is_reported_by_the_queueing_check() -> None:
    """The team's ClusterQueue borrows at most its quota: a cut-down limit below the 2 x 4-GPU fine-tuning gang
    means Kueue never admits the job."""

    def change(p: dict[str, Any]) -> dict[str, Any]:
        def cut(spec: dict[str, Any]) -> dict[str, Any]:
            group = spec["resourceGroups"][0]
            flavors = [
                {
                    **f,
                    "resources": [
                        {**r, "borrowingLimit": "6"} if r["name"] == "nvidia.com/gpu" else r for r in f["resources"]
                    ],
                }
                for f in group["flavors"]
            ]
            return {**spec, "resourceGroups": [{**group, "flavors": flavors}]}

        return {**p, "spec": pulumi.Output.from_input(p["spec"]).apply(cut)}

    errors = _errors(plan_stack("dev", program_dir=TEAM, edit=_edit_spec("ClusterQueue", change)))
    assert [e[:3] for e in errors] == [("queueing", "vision-finetune-job", "spec")]
