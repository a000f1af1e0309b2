"""Every shipped stack and the team stack hold against upstream: zero conformance errors, every check ran."""

from __future__ import annotations

import pytest
from stackcopy import ROOT, plan_stack

from gpucloud.conformance import registered_checks, run_conformance

STACKS = [("dev", ROOT), ("staging", ROOT), ("prod", ROOT), ("dev", ROOT / "stacks" / "teams" / "vision")]


@pytest.mark.parametrize(("stack", "program"), STACKS, ids=["dev", "staging", "prod", "team-vision"])
def test_shipped_stack_conforms(stack, program) -> None:
    result = run_conformance(plan_stack(stack, program_dir=program))
    assert [f for f in result.errors] == []
    assert result.checks == registered_checks()


def test_platform_stacks_render_their_charts() -> None:
    result = run_conformance(plan_stack("dev"))
    sources = {d.source for d in result.derived}
    assert {
        "chart nvidia-device-plugin@0.18.2",
        "chart dcgm-exporter@4.8.1",
        "chart kube-prometheus-stack@75.6.1",
        "chart cluster-autoscaler@9.59.0",
        "chart aws-node-termination-handler@0.27.0",
    } <= sources
    # The device plugin's NFD sub-chart renders its worker, which must tolerate the GPU taint: the values under
    # the `nfd` alias give it a toleration of every taint (key-less Exists).
    workers = [d for d in result.derived if d.kind == "DaemonSet" and d.name.endswith("node-feature-discovery-worker")]
    assert [d.source for d in workers] == ["chart nvidia-device-plugin@0.18.2"]
    tolerations = workers[0].manifest["spec"]["template"]["spec"]["tolerations"]
    assert tolerations == [{"operator": "Exists"}]


def test_prod_pulls_the_efa_device_plugin_from_its_own_region() -> None:
    # Rendered by real Helm from the pinned chart: the chart's default image is the us-west-2 copy, which a
    # us-east-1 node would pull across Regions over NAT.
    result = run_conformance(plan_stack("prod"))
    [plugin] = [d for d in result.derived if d.kind == "DaemonSet" and d.name == "aws-efa-k8s-device-plugin"]
    images = [c["image"] for c in plugin.manifest["spec"]["template"]["spec"]["containers"]]
    assert images == ["602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.8"]
