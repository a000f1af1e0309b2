"""Fit: a workload whose pod no node of its pool's types can hold once the system reserve and the DaemonSets
that land there are taken. Allocatable figures are the catalog's (g6e.xlarge: 4 vCPU, 32 GiB) minus the EKS AMI
reserve (gpucloud.catalog.allocatable: 80m CPU, 1,565 MiB at 110 pods)."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from schedkit import GPU_TOLERATION, base_cluster, plan_of
from stackcopy import ROOT, plan_stack

from gpucloud.catalog import get_catalog
from gpucloud.catalog.allocatable import reserve
from gpucloud.conformance import ConformanceContext, run_conformance
from gpucloud.conformance.fit import check_fit

TEAM = ROOT / "stacks" / "teams" / "vision"


def test_g6e_xlarge_allocatable_is_below_the_detectors_request() -> None:
    spec = get_catalog().find("g6e.xlarge")
    assert spec is not None and (spec.vcpu, spec.memory_gib) == (4, 32)
    cpu, mem, pods = reserve(spec)
    assert (round(cpu, 3), mem / 2**20, pods) == (0.08, 255 + 11 * 110 + 100, 110)


def test_the_team_detector_on_g6e_xlarge_is_an_error_the_shipped_g6e_2xlarge_passes() -> None:
    config = yaml.safe_load((TEAM / "Pulumi.dev.yaml").read_text())["config"]
    team = copy.deepcopy(config["gpucloud:team"])
    assert team["inference"]["instanceType"] == "g6e.2xlarge"
    team["inference"]["instanceType"] = "g6e.xlarge"
    before = run_conformance(
        plan_stack("dev", program_dir=TEAM, config_overrides={"gpucloud:team": team}), only=["fit"]
    )
    [finding] = before.findings
    assert (finding.check, finding.severity, finding.urn.rsplit("::", 1)[1]) == (
        "fit",
        "error",  # gpucloud's own InferenceDeployment component
        "vision-detector-deployment",
    )
    assert finding.message.startswith(
        "Deployment vision/detector pins instance types whose nodes cannot hold its pod (g6e.xlarge: memory 32Gi > "
        "30.4717Gi, cpu 4 > 3.92)"
    )
    # The platform's DaemonSets are not in a team plan: the message says their overhead was taken as zero.
    assert "DaemonSet overhead assumed 0: the platform's DaemonSets are not in this plan" in finding.message
    assert finding.source.endswith("DaemonSet overhead assumed 0")
    shipped = run_conformance(plan_stack("dev", program_dir=TEAM), only=["fit"])
    assert shipped.findings == []


def _program(cpu: str, daemonset_cpu: str | None) -> Any:
    def program() -> None:
        import pulumi_kubernetes as k8s

        base_cluster(gpu_types=("g6e.xlarge",), gpu_max=1)
        pod = {
            "tolerations": [GPU_TOLERATION],
            "nodeSelector": {"gpucloud.io/pool": "gpu"},
            "containers": [{"name": "app", "image": "example/app:1", "resources": {"requests": {"cpu": cpu}}}],
        }
        k8s.apps.v1.Deployment(
            "app",
            metadata={"name": "app", "namespace": "ml"},
            spec={"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                  "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod}},
        )  # fmt: skip
        if daemonset_cpu is not None:
            agent = {
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {"name": "agent", "image": "example/agent:1", "resources": {"requests": {"cpu": daemonset_cpu}}}
                ],
            }  # fmt: skip
            k8s.apps.v1.DaemonSet(
                "agent",
                metadata={"name": "agent", "namespace": "kube-system"},
                spec={"selector": {"matchLabels": {"d": "s"}},
                      "template": {"metadata": {"labels": {"d": "s"}}, "spec": agent}},
            )  # fmt: skip

    return program


def _fit(cpu: str, daemonset_cpu: str | None) -> list[Any]:
    plan = plan_of(_program(cpu, daemonset_cpu))
    return list(check_fit(ConformanceContext(plan=plan)))


def test_a_pod_that_fits_only_before_the_daemonsets_is_reported_with_their_share() -> None:
    # 3.9 CPU fits g6e.xlarge's 3.92 allocatable; a 100m DaemonSet on every node leaves 3.82.
    assert _fit("3900m", None) == []
    assert _fit("3800m", "100m") == []
    [finding] = _fit("3900m", "100m")
    assert finding.severity == "warning"  # not a gpucloud component's workload
    assert finding.message == (
        "Deployment ml/app fits no node of its pools once their DaemonSets run "
        "(gpu-1d2ea51 g6e.xlarge: cpu 3.9 > 3.82, "
        "after 1 DaemonSets (agent)): its pods stay Pending"
    )
