"""`support.window`: a release outside its project's published Kubernetes support window is a warning naming the
window and its source; the shipped stacks (Kubernetes 1.35) are inside every recorded window."""

from __future__ import annotations

import json
from typing import Any

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gpucloud.conformance import run_conformance
from gpucloud.plan import Plan, run_callable
from gpucloud.versions import support


def program(control_plane: str, releases: dict[str, tuple[str, dict[str, Any]]]) -> Plan:
    def body() -> None:
        aws.eks.Cluster("eks", role_arn="arn:aws:iam::123456789012:role/eks", version=control_plane,
                        vpc_config={"subnet_ids": ["subnet-0123456789abcdef0"]})  # fmt: skip
        for chart, (version, values) in releases.items():
            k8s.helm.v3.Release(chart, chart=chart, version=version, namespace="kube-system", values=values,
                                repository_opts={"repo": "https://example.test/charts"})  # fmt: skip

    return run_callable(body, preview=True)


def findings(plan: Plan) -> list[tuple[str, str, str]]:
    result = run_conformance(plan, only=["support.window"])
    return sorted((f.severity, f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings)


SHIPPED: dict[str, tuple[str, dict[str, Any]]] = {
    "keda": ("2.20.2", {}),
    "karpenter": ("1.12.1", {}),
    "gpu-operator": ("v26.3.0", {}),
    "kueue": ("0.19.2", {}),
    "cluster-autoscaler": ("9.59.0", {}),
    "metrics-server": ("3.13.1", {}),
    "nvidia-device-plugin": ("0.18.2", {}),
}


def test_the_shipped_versions_are_inside_their_windows_at_1_35() -> None:
    assert findings(program("1.35", SHIPPED)) == []


def test_outside_the_window_warns_with_the_window_and_its_source() -> None:
    result = run_conformance(program("1.36", SHIPPED), only=["support.window"])
    got = sorted((f.severity, f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings)
    runs = "; this stack runs 1.36"
    assert got == [
        (
            "warning",
            "cluster-autoscaler",
            "cluster-autoscaler 1.35.0 is meant for Kubernetes 1.35" + runs,
        ),
        (
            "warning",
            "gpu-operator",
            "gpu-operator@v26.3.0 (app v26.3.0) is published as supporting Kubernetes 1.32 - 1.35" + runs,
        ),
        (
            "warning",
            "karpenter",
            "karpenter@1.12.1 (app 1.12.1) is published as supporting Kubernetes 1.29 - 1.35" + runs,
        ),
        (
            "warning",
            "keda",
            "keda@2.20.2 (app 2.20.2) is published as supporting Kubernetes 1.33 - 1.35" + runs,
        ),
    ]
    keda = next(f for f in result.findings if f.urn.endswith("::keda"))
    assert "kedacore/keda-docs content/docs/2.20/operate/cluster.md" in keda.source
    # Kueue, metrics-server and the device plugin publish only a lower bound: 1.36 is inside it.
    assert not any(f.urn.endswith(("::kueue", "::metrics-server", "::nvidia-device-plugin")) for f in result.findings)


def test_below_the_window_and_the_autoscaler_image_tag_override() -> None:
    plan = program(
        "1.30",
        {
            "keda": ("2.20.2", {}),
            "cluster-autoscaler": ("9.53.0", {"image": {"tag": "v1.30.7"}}),
            "metrics-server": ("3.13.1", {}),
        },
    )
    assert findings(plan) == [
        (
            "warning",
            "keda",
            "keda@2.20.2 (app 2.20.2) is published as supporting Kubernetes 1.33 - 1.35; this stack runs 1.30",
        ),
        (
            "warning",
            "metrics-server",
            "metrics-server@3.13.1 (app 0.8.1) is published as supporting Kubernetes 1.31 and newer; "
            "this stack runs 1.30",
        ),
    ]


def test_the_issue_28_finding_keda_2_17_on_1_34_is_outside_its_window() -> None:
    # KEDA 2.17 (the version shipped before this change) on Kubernetes 1.34, as issue 28 item 5 found it.
    window = support.window("keda", "2.17.2")
    assert window is not None and window.shown == "1.30 - 1.32"
    assert window.covers("1.32") and not window.covers("1.34") and not window.covers("1.29")
    assert support.window("keda", "2.16.0") is None


def test_every_recorded_window_has_a_source_at_a_tag_or_commit() -> None:
    doc = json.loads(support.SUPPORT_FILE.read_text())
    for chart, entry in doc["charts"].items():
        assert " tag " in entry["source"] or " at " in entry["source"], chart
    with pytest.raises(support.SupportError, match=r"charts.x needs a `source`"):
        support.parse({"charts": {"x": {"windows": []}}}, "support.json")
