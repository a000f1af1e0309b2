"""The "queueing" check: queued workloads need their LocalQueue, and their ClusterQueue must be able to admit the
whole gang at once (nominalQuota + borrowingLimit per flavour) and cover every resource they request."""

from __future__ import annotations

from typing import Any

from schedkit import keyed, plan_of

from gpucloud.conformance import ConformanceContext, DerivedObject, kubernetes_version
from gpucloud.conformance.queueing import check_queueing

Q = "kueue.x-k8s.io/queue-name"


def job(
    name: str = "train", *, queue: str | None = "team-queue", gpus: int = 4, pods: int = 2, extra: Any = None
) -> Any:
    import pulumi_kubernetes as k8s

    labels = {"app": name, **({Q: queue} if queue else {})}
    resources = {"nvidia.com/gpu": str(gpus), "memory": "8Gi", **(extra or {})}
    k8s.batch.v1.Job(
        name,
        metadata={"name": name, "namespace": "team", "labels": labels},
        spec={
            "suspend": True,
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "t", "image": "x:1", "resources": {"requests": resources, "limits": resources}}
                    ],
                },
            },
        },
    )


def queues(
    *, gpu_nominal: str = "0", gpu_borrow: str | None = "8", covered: tuple[str, ...] = ("nvidia.com/gpu", "memory")
) -> None:
    import pulumi_kubernetes as k8s

    def res(name: str) -> dict[str, Any]:
        if name == "nvidia.com/gpu":
            out: dict[str, Any] = {"name": name, "nominalQuota": gpu_nominal}
            if gpu_borrow is not None:
                out["borrowingLimit"] = gpu_borrow
            return out
        return {"name": name, "nominalQuota": "0", "borrowingLimit": "1Ti"}

    k8s.apiextensions.CustomResource(
        "cq",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="ClusterQueue",
        metadata={"name": "team"},
        spec={
            "cohortName": "gpucloud",
            "resourceGroups": [
                {
                    "coveredResources": list(covered),
                    "flavors": [{"name": "gpu-spot", "resources": [res(r) for r in covered]}],
                }
            ],
        },
    )
    k8s.apiextensions.CustomResource(
        "lq",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="LocalQueue",
        metadata={"name": "team-queue", "namespace": "team"},
        spec={"clusterQueue": "team"},
    )


def findings(fn: Any, extra: list[DerivedObject] | None = None) -> list[Any]:
    plan = plan_of(fn)
    ctx = ConformanceContext(plan=plan, derived=list(extra or []), kubernetes_version=kubernetes_version(plan))
    return list(check_queueing(ctx))


def test_a_gang_within_the_borrowing_limit_is_admissible() -> None:
    assert findings(lambda: (queues(), job(gpus=4, pods=2))) == []
    # Unqueued jobs and plans without Kueue objects are none of this check's business.
    assert findings(lambda: job(queue=None)) == []
    assert findings(lambda: job()) == []


def test_a_gang_larger_than_its_queue_is_never_admitted() -> None:
    found = findings(lambda: (queues(gpu_borrow="4"), job(gpus=4, pods=2)))
    assert keyed(found) == [("queueing", "train", "spec", None)]
    assert "needs 8 of nvidia.com/gpu at once" in found[0].message
    assert "can give at most 4" in found[0].message
    assert found[0].expected == "nominalQuota + borrowingLimit >= 8 for nvidia.com/gpu in one flavour"
    # nominal + borrowing is what counts.
    assert findings(lambda: (queues(gpu_nominal="4", gpu_borrow="4"), job(gpus=4, pods=2))) == []
    # No borrowing limit in a cohort: the queue may borrow what the cohort has idle, unknown here.
    assert findings(lambda: (queues(gpu_borrow=None), job(gpus=8, pods=4))) == []


def test_a_queue_name_without_its_local_queue() -> None:
    found = findings(lambda: (queues(), job(queue="nope")))
    assert keyed(found) == [("queueing", "train", f"metadata.labels.{Q}", None)]
    assert "(its LocalQueues: team-queue)" in found[0].message


def test_uncovered_resources_only_when_the_kueue_configuration_is_known() -> None:
    efa = {"vpc.amazonaws.com/efa": "1"}
    # The configuration is elsewhere (a team stack): it may exclude the resource, so nothing is said.
    assert findings(lambda: (queues(), job(extra=efa))) == []

    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {
            "controller_manager_config.yaml": "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "resources:\n  excludeResourcePrefixes: [hugepages-]\n"
        },
    }

    def fn() -> None:
        import pulumi_kubernetes as k8s

        queues()
        job(extra=efa)
        k8s.helm.v3.Release("kueue", name="kueue", chart="kueue", version="0.19.2", namespace="kueue-system")

    plan = plan_of(fn)
    owner = next(r.urn for r in plan.of_type("kubernetes:helm.sh/v3:Release"))
    ctx = ConformanceContext(
        plan=plan,
        derived=[DerivedObject(owner, "chart kueue@0.19.2", config)],
        kubernetes_version=kubernetes_version(plan),
    )
    found = list(check_queueing(ctx))
    assert keyed(found) == [("queueing", "train", "spec", None)]
    assert "requests vpc.amazonaws.com/efa, which no resource group of ClusterQueue team covers" in found[0].message
    config["data"]["controller_manager_config.yaml"] += "  - vpc.amazonaws.com/\n"
    config["data"]["controller_manager_config.yaml"] = config["data"]["controller_manager_config.yaml"].replace(
        "[hugepages-]\n  - vpc.amazonaws.com/\n", "[hugepages-, vpc.amazonaws.com/]\n"
    )
    ctx = ConformanceContext(
        plan=plan,
        derived=[DerivedObject(owner, "chart kueue@0.19.2", config)],
        kubernetes_version=kubernetes_version(plan),
    )
    assert list(check_queueing(ctx)) == []
