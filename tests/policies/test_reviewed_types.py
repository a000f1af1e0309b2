"""reviewed-types-only (GC-SEC-149): passing and failing fixtures with the exact resources flagged; components the
plan shows without children are undecided under the policy's unknowns setting."""

from __future__ import annotations

import pytest

from gpucloud.guard.harness import Res, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import coverage
from gpucloud.policies.gpucloud_policies.base import UndecidedError

POLICY = "reviewed-types-only"


def patch(name: str, **spec: object) -> Res:
    return Res(
        "kubernetes:core/v1:ServicePatch", name, {"metadata": {"name": name}, **({"spec": spec} if spec else {})}
    )


REVIEWED = [
    Res("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"instanceType": "g6e.12xlarge"}),
    Res("kubernetes:karpenter.sh/v1:NodePool", "np", {"spec": {}}),
    Res("kubernetes:kubeflow.org/v2beta1:MPIJob", "mpi", {"spec": {}}),
    Res("kubernetes:apps/v1:Deployment", "web", {"spec": {}}),
    # A component with children: each child is judged by its own type.
    Res("mycorp:index:Platform", "platform", {}, custom=False),
    Res("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16"}, parent="platform"),
    Res("pulumi:providers:aws", "east", {"region": "us-east-1"}),
    # A patch that sets no spec changes no exposure.
    patch("idle"),
]


WITH_NETWORK = {"unreadSurfaces": ["compute", "network"]}


@pytest.fixture
def patch_unread(monkeypatch: pytest.MonkeyPatch):
    """Every pair of the inventory is read or out of scope today, so an unread surface is simulated: the Service
    patch's network surface loses its reader (k8s-no-public-load-balancer), as a provider upgrade's new input
    nobody reads yet would be."""
    real = coverage.readers

    def readers(token: str, surface_id: str | None = None) -> list[str]:
        return [] if token == "kubernetes:core/v1:ServicePatch" else real(token, surface_id)

    monkeypatch.setattr(coverage, "readers", readers)
    coverage.unread_roots.cache_clear()
    yield
    coverage.unread_roots.cache_clear()


def test_reviewed_types_pass() -> None:
    assert stack_messages(POLICY, REVIEWED) == []
    assert stack_messages(POLICY, REVIEWED, WITH_NETWORK) == []
    # A Service patch's network surface is read (k8s-no-public-load-balancer): setting it is no unread surface.
    assert stack_flagged(POLICY, [patch("lb", type="LoadBalancer")], WITH_NETWORK) == set()


def test_unreviewed_types_fail(patch_unread: None) -> None:
    found = [
        Res("gcp:compute/instance:Instance", "gcp-vm", {"machineType": "a2-highgpu-8g"}),
        Res("kubernetes:serving.kserve.io/v1beta1:InferenceService", "isvc", {"spec": {}}),
        patch("gpu", type="LoadBalancer"),
    ]
    # Every compute surface is read (the default unreadSurfaces); the network surface made unread shows it.
    messages = dict(stack_messages(POLICY, [*REVIEWED, *found], WITH_NETWORK))
    assert set(messages) == {"gcp-vm", "isvc", "gpu"}
    assert messages["gcp-vm"].startswith(
        "gcp-vm: type gcp:compute/instance:Instance is not reviewed: no guardrail reads it"
    )
    assert "Fix: use a reviewed type, or review it and add it to reviewedTypes" in messages["isvc"]
    assert messages["gpu"].startswith(
        "gpu: kubernetes:core/v1:ServicePatch sets spec (network), a surface no guardrail reads yet"
    )


def test_config_reviews_types_and_surfaces(patch_unread: None) -> None:
    found = [
        Res("gcp:compute/instance:Instance", "gcp-vm", {}),
        Res("gcp:storage/bucket:Bucket", "gcs", {}),
        patch("gpu", type="LoadBalancer"),
    ]
    assert stack_flagged(POLICY, found, {"reviewedTypes": ["gcp:compute/*"], **WITH_NETWORK}) == {"gcs", "gpu"}
    assert stack_flagged(POLICY, found, {"reviewedTypes": ["gcp:compute/*"]}) == {"gcs"}
    reviewed = {"reviewedTypes": ["kubernetes:core/v1:ServicePatch"], **WITH_NETWORK}
    assert stack_flagged(POLICY, found, reviewed) == {"gcp-vm", "gcs"}
    assert stack_flagged(POLICY, found, {"unreadSurfaces": []}) == {"gcp-vm", "gcs"}
    # A surface a guardrail reads never makes a type unreviewed.
    lt = Res("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"userData": "x", "instanceType": "p5.48xlarge"})
    assert stack_flagged(POLICY, [lt], {"unreadSurfaces": ["compute", "secrets", "network"]}) == set()
    # Every secrets surface with a plain-text store is read now (no-plaintext-secrets reads the inventory's
    # paths), so a job definition's parameters make it unreviewed on no surface.
    jd = Res("aws:batch/jobDefinition:JobDefinition", "jd", {"parameters": {"k": "v"}})
    assert stack_flagged(POLICY, [jd], {"unreadSurfaces": ["secrets", "iam", "principal"]}) == set()


def test_component_without_children_is_undecided() -> None:
    opaque = Res("eks:index:Cluster", "cluster", {"desiredCapacity": 2}, custom=False)
    found: list[tuple[str, str]] = []
    with pytest.raises(UndecidedError) as exc:
        stack_messages(POLICY, [*REVIEWED, opaque], found=found)
    assert found == []
    assert [(u.urn.rsplit("::", 1)[-1], u.field) for u in exc.value.undecided] == [("cluster", "children")]
    assert "component eks:index:Cluster registered no children the plan can see" in exc.value.undecided[0].reason
    blocked = stack_messages(POLICY, [opaque], {"unknowns": "block"})
    assert [name for name, _ in blocked] == ["cluster"]
    assert "cannot be decided at preview (unknown: children): component eks:index:Cluster" in blocked[0][1]


def test_online_a_childless_unknown_type_is_unreviewed() -> None:
    # The engine does not tell a policy whether a resource is a component: without children it is judged as a type.
    assert stack_flagged(POLICY, [Res("eks:index:Cluster", "cluster", {})]) == {"cluster"}


def test_environments() -> None:
    import json
    from pathlib import Path

    configs = Path(__file__).resolve().parents[2] / "policies" / "configs"
    dev = json.loads((configs / "dev.json").read_text())
    prod = json.loads((configs / "prod.json").read_text())
    assert dev[POLICY] == "advisory"
    assert prod[POLICY] == {"unknowns": "block"} and prod["all"] == "mandatory"
