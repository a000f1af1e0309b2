"""pod.resources: accelerator pods request CPU and memory (errors for gpucloud's own pods, warnings otherwise),
and the pods gpucloud deploys in the shipped stacks carry requests, limits and (Deployments) probes."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from stackcopy import plan_stack

from gpucloud.conformance import ConformanceContext, run_conformance
from gpucloud.conformance.pod_resources import check_pod_resources, gpucloud_owned
from gpucloud.plan import run_callable


def _findings(resources: dict[str, Any], *, owned: bool = False, limit_range: dict[str, Any] | None = None):
    def program() -> None:
        parent = pulumi.ComponentResource("gpucloud:test:Thing", "thing") if owned else None
        if limit_range is not None:
            k8s.core.v1.LimitRange("lr", metadata={"name": "lr", "namespace": "ml"}, spec={"limits": [limit_range]})
        k8s.batch.v1.Job(
            "train",
            metadata={"name": "train", "namespace": "ml"},
            spec={
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "x:1", "resources": resources}],
                    }
                }
            },
            opts=pulumi.ResourceOptions(parent=parent),
        )

    plan = run_callable(program)
    return [(f.severity, f.field, f.message) for f in check_pod_resources(ConformanceContext(plan=plan))]


GPU_ONLY = {"limits": {"nvidia.com/gpu": "8"}}


def test_gpu_pod_without_cpu_or_memory_warns_for_a_user_pod_and_is_an_error_for_gpucloud_s_own() -> None:
    [(severity, field, message)] = _findings(GPU_ONLY)
    assert (severity, field) == ("warning", "spec.template.spec.containers[main].resources.requests")
    assert message == (
        "Job ml/train: container 'main' asks for nvidia.com/gpu but requests no cpu or memory: it is scheduled as "
        "if it needed none and is among the first evicted under node pressure"
    )
    [(severity, _, message)] = _findings(GPU_ONLY, owned=True)
    assert severity == "error"
    assert message.endswith("(a gpucloud component deploys it)")


@pytest.mark.parametrize(
    ("resources", "missing"),
    [
        ({"requests": {"aws.amazon.com/neuroncore": "2", "cpu": "4"}}, "memory"),
        ({"limits": {"aws.amazon.com/neuron": "1", "memory": "8Gi"}}, "cpu"),
        ({"limits": {"nvidia.com/mig-1g.10gb": "1"}}, "cpu or memory"),
    ],
)
def test_every_accelerator_resource_counts(resources: dict[str, Any], missing: str) -> None:
    [(_, _, message)] = _findings(resources)
    assert f"requests no {missing}:" in message


@pytest.mark.parametrize(
    "resources",
    [
        {"requests": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": "1"}},
        # A limit alone is the request (Kubernetes copies it).
        {"limits": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"}},
        # No accelerator: not this check's business.
        {},
    ],
)
def test_pods_with_requests_or_without_accelerators_pass(resources: dict[str, Any]) -> None:
    assert _findings(resources) == []


def test_a_limit_range_default_counts_as_the_request() -> None:
    both = {"type": "Container", "defaultRequest": {"cpu": "1", "memory": "1Gi"}}
    assert _findings(GPU_ONLY, limit_range=both) == []
    cpu_only = {"type": "Container", "default": {"cpu": "1"}}
    [(_, _, message)] = _findings(GPU_ONLY, limit_range=cpu_only)
    assert "requests no memory:" in message


def test_gpucloud_owned_reads_the_type_chain() -> None:
    assert gpucloud_owned("urn:pulumi:prod::p::gpucloud:workloads:DcgmDiag$kubernetes:batch/v1:Job::j")
    assert not gpucloud_owned("urn:pulumi:prod::p::kubernetes:batch/v1:Job::j")
    # The resource's own type is not a parent.
    assert not gpucloud_owned("urn:pulumi:prod::p::gpucloud:workloads:DcgmDiag::d")


# --- the pods gpucloud deploys in the shipped stacks ---------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    """prod and staging planned once, with the charts rendered (the derived objects)."""
    out = {}
    for stack in ("prod", "staging"):
        plan = plan_stack(stack)
        out[stack] = (plan, run_conformance(plan))
    return out


def _containers(shipped: dict[str, Any], stack: str, kind: str, name: str) -> list[dict[str, Any]]:
    """The containers of every `kind` object named `name` (a prefix with a trailing *), registered or rendered."""
    plan, result = shipped[stack]

    def named(n: Any) -> bool:
        return str(n).startswith(name[:-1]) if name.endswith("*") else n == name

    manifests = [
        r.inputs
        for r in plan.resources
        if r.type.endswith(f":{kind}") and named((r.inputs.get("metadata") or {}).get("name"))
    ] + [d.manifest for d in result.derived if d.kind == kind and named(d.name)]
    found = [c for m in manifests for c in m["spec"]["template"]["spec"]["containers"]]
    assert found, f"{stack}: no {kind} {name}"
    return found


def _sized(container: dict[str, Any]) -> dict[str, set[str]]:
    res = container.get("resources") or {}
    return {part: set(res.get(part) or {}) & {"cpu", "memory"} for part in ("requests", "limits")}


BOTH = {"requests": {"cpu", "memory"}, "limits": {"cpu", "memory"}}


@pytest.mark.parametrize(
    ("stack", "kind", "name"),
    [
        ("prod", "Job", "dcgm-diag-*"),
        ("prod", "Deployment", "mpi-operator"),
        # Helm names the chart's objects after the release (Pulumi autonames it with a suffix).
        ("staging", "Deployment", "gpucloud-staging-karpenter-release-*"),
        ("prod", "Deployment", "gpucloud-prod-nth-release-*"),
    ],
    ids=["dcgm-diag", "mpi-operator", "karpenter", "node-termination-handler"],
)
def test_gpucloud_s_pods_have_cpu_and_memory_requests_and_limits(shipped, stack, kind, name) -> None:
    containers = _containers(shipped, stack, kind, name)
    assert {c["name"]: _sized(c) for c in containers} == {c["name"]: BOTH for c in containers}


def test_the_mpi_operator_is_probed_on_its_health_port(shipped) -> None:
    [container] = _containers(shipped, "prod", "Deployment", "mpi-operator")
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": 8080}


def test_shipped_stacks_have_no_accelerator_pod_without_requests(shipped) -> None:
    for stack in ("prod", "staging"):
        _, result = shipped[stack]
        assert [f.message for f in result.findings if f.check == "pod.resources"] == []
