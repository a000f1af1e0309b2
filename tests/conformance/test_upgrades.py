"""The upgrade checks: kubelet skew, one control-plane minor per step, add-on and chart support for the minor,
and objects on APIs the next (or target) minor removes. Each case plans a small raw program and asserts the exact
findings."""

from __future__ import annotations

from typing import Any

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gpucloud.conformance import run_conformance
from gpucloud.conformance.upgrades import kube_version_satisfies
from gpucloud.plan import Plan, run_callable


def program(
    control_plane: str,
    groups: dict[str, tuple[str | None, str | None]] | None = None,
    addons: dict[str, str | None] | None = None,
    releases: dict[str, str] | None = None,
    objects: list[dict[str, Any]] | None = None,
) -> Plan:
    def body() -> None:
        aws.eks.Cluster("eks", role_arn="arn:aws:iam::123456789012:role/eks", version=control_plane,
                        vpc_config={"subnet_ids": ["subnet-0123456789abcdef0"]})  # fmt: skip
        for name, (version, release) in (groups or {}).items():
            aws.eks.NodeGroup(
                name,
                cluster_name="c",
                node_role_arn="arn:aws:iam::123456789012:role/node",
                subnet_ids=["subnet-0123456789abcdef0"],
                scaling_config={"min_size": 1, "max_size": 2, "desired_size": 1},
                version=version,
                release_version=release,
            )
        for name, build in (addons or {}).items():
            aws.eks.Addon(f"addon-{name}", cluster_name="c", addon_name=name, addon_version=build)
        for chart, version in (releases or {}).items():
            k8s.helm.v3.Release(chart, chart=chart, version=version, namespace="kube-system",
                                repository_opts={"repo": "https://example.test/charts"})  # fmt: skip
        for i, obj in enumerate(objects or []):
            k8s.yaml.v2.ConfigGroup(f"objs-{i}", objs=[obj])

    return run_callable(body, preview=True)


def upgrade_findings(plan: Plan, base: str | None = None) -> list[tuple[str, str, str, str]]:
    result = run_conformance(plan, only=["upgrade"], base_kubernetes_version=base)
    return sorted((f.check, f.severity, f.urn.rsplit("::", 1)[-1], f.field) for f in result.findings)


def test_kubelets_on_the_control_plane_minor_or_up_to_three_behind_pass() -> None:
    plan = program("1.36", {"same": ("1.36", "1.36.2-20260714"), "three-behind": ("1.33", "1.33.13-20260714")})
    assert upgrade_findings(plan) == []


def test_kubelet_ahead_or_four_behind_fails() -> None:
    plan = program("1.36", {"ahead": ("1.37", None), "four-behind": ("1.32", "1.32.13-20260714")})
    result = run_conformance(plan, only=["upgrade"])
    messages = {f.urn.rsplit("::", 1)[-1]: f.message for f in result.findings}
    assert messages == {
        "ahead": "kubelet 1.37 is newer than the control plane (1.36): a kubelet may never be ahead",
        "four-behind": "kubelet 1.32 is 4 minors behind the control plane (1.36); at most 3 are supported",
    }
    assert {f.severity for f in result.findings} == {"error"}


def test_a_release_of_another_minor_than_the_group_fails() -> None:
    plan = program("1.35", {"mixed": ("1.35", "1.34.9-20260714")})
    assert upgrade_findings(plan) == [("upgrade.kubelet-skew", "error", "mixed", "releaseVersion")]


def test_the_control_plane_moves_one_minor_per_step() -> None:
    assert upgrade_findings(program("1.35"), base="1.34") == []
    two = run_conformance(program("1.36"), only=["upgrade"], base_kubernetes_version="1.34")
    assert [(f.check, f.severity, f.expected) for f in two.findings] == [
        (
            "upgrade.control-plane-step",
            "error",
            "one step per minor: 1.34 -> 1.35 -> 1.36 (gpucloud upgrade prints the steps)",
        )
    ]
    assert upgrade_findings(program("1.34"), base="1.35") == [("upgrade.control-plane-step", "error", "eks", "version")]


def test_addon_builds_of_the_minor() -> None:
    plan = program(
        "1.35",
        addons={
            "kube-proxy": "v1.35.3-eksbuild.13",  # the table's verified build: fine
            "coredns": None,  # unpinned: warning
            "vpc-cni": "v1.20.1-eksbuild.3",  # the table's build, unconfirmed for 1.35: warning
            "eks-pod-identity-agent": "v1.9.9-eksbuild.1",  # unknown to an incomplete table: undecided warning
        },
    )
    assert upgrade_findings(plan) == [
        ("upgrade.addon-version", "warning", "addon-coredns", "addonVersion"),
        ("upgrade.addon-version", "warning", "addon-eks-pod-identity-agent", "addonVersion"),
        ("upgrade.addon-version", "warning", "addon-vpc-cni", "addonVersion"),
    ]


def test_a_build_outside_a_complete_table_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpucloud import versions

    row = versions.for_minor("1.35")
    complete = versions.AddonBuilds("v1.35.3-eksbuild.13", True, ("v1.35.3-eksbuild.13", "v1.35.1-eksbuild.2"), True)
    patched = {**versions.table(), "1.35": versions.MinorVersions(
        row.minor, row.released, row.end_of_standard_support, row.end_of_extended_support,
        {**row.addons, "kube-proxy": complete}, row.ami, row.charts)}  # fmt: skip
    monkeypatch.setattr(versions, "table", lambda: patched)
    ok = program("1.35", addons={"kube-proxy": "v1.35.1-eksbuild.2"})
    assert upgrade_findings(ok) == []
    bad = program("1.35", addons={"kube-proxy": "v1.34.6-eksbuild.13"})
    assert upgrade_findings(bad) == [("upgrade.addon-version", "error", "addon-kube-proxy", "addonVersion")]


def test_chart_kube_version_constraints() -> None:
    # keda 2.20.2 declares kubeVersion ">=v1.23.0-0": accepts 1.36.
    assert upgrade_findings(program("1.36", releases={"keda": "2.20.2"})) == []
    assert kube_version_satisfies(">= 1.16-0", "1.36.0") is True
    assert kube_version_satisfies(">=1.20.0-0 <1.35.0-0", "1.35.0") is False
    assert kube_version_satisfies(">=1.20.0-0, <1.35.0-0", "1.34.0") is True
    assert kube_version_satisfies("~1.34", "1.35.0") is False
    assert kube_version_satisfies("^1.8.0-0", "1.36.0") is True
    assert kube_version_satisfies(">=1.37 || <1.20", "1.36.0") is False
    assert kube_version_satisfies("a lot", "1.36.0") is None


def test_a_chart_whose_kube_version_excludes_the_minor_fails(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.conformance.upgrades as upgrades

    chart = tmp_path / "old-1.0.0"
    chart.mkdir()
    (chart / "Chart.yaml").write_text('name: old\nversion: 1.0.0\nkubeVersion: ">=1.20.0-0 <1.35.0-0"\n')
    monkeypatch.setattr(upgrades, "VENDOR_CHARTS", tmp_path)
    assert upgrade_findings(program("1.34", releases={"old": "1.0.0"})) == []
    assert upgrade_findings(program("1.35", releases={"old": "1.0.0"})) == [
        ("upgrade.chart-kube-version", "error", "old", "version")
    ]


def test_objects_on_an_api_the_target_minor_removed() -> None:
    from gpucloud.conformance.k8s_schema import openapi_schemas

    removed = sorted(set(openapi_schemas("1.32").gvks) - set(openapi_schemas("1.33").gvks))
    assert removed, "kubernetes-validate 1.32 -> 1.33 removed no API: pick another pair"
    api_version, kind = removed[0]
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "old", "namespace": "default"}}
    # Against a base on 1.32, planning 1.33: an error. Planning 1.32 with no base: a warning for the next minor.
    on_target = run_conformance(program("1.33", objects=[obj]), only=["upgrade"], base_kubernetes_version="1.32")
    assert [(f.check, f.severity, f.field) for f in on_target.findings] == [
        ("upgrade.removed-api", "error", "apiVersion")
    ]
    ahead = run_conformance(program("1.32", objects=[obj]), only=["upgrade"])
    assert [(f.check, f.severity) for f in ahead.findings] == [("upgrade.removed-api", "warning")]
    assert "blocks the upgrade from 1.32" in ahead.findings[0].message


def test_plan_compare_checks_the_step_from_the_base_plan() -> None:
    from gpucloud.report.pipeline import base_kubernetes_version, build_report

    base = build_report(program("1.34"))
    assert base_kubernetes_version(base) == "1.34"
    assert base_kubernetes_version(None) is None
    report = build_report(program("1.36"), compare=base)
    steps = [f for f in report["conformance"]["findings"] if f["check"] == "upgrade.control-plane-step"]
    assert [(f["severity"], f["field"]) for f in steps] == [("error", "version")]
    assert [f["check"] for f in build_report(program("1.35"), compare=base)["conformance"]["findings"]
            if f["check"] == "upgrade.control-plane-step"] == []  # fmt: skip


def node_program(control_plane: str, asg: tuple[str, str] | None, node_class: tuple[str, str | None] | None) -> Plan:
    """A self-managed ASG and a Karpenter EC2NodeClass carrying the kubelet minor / AMI release gpucloud records."""

    def body() -> None:
        aws.eks.Cluster("eks", role_arn="arn:aws:iam::123456789012:role/eks", version=control_plane,
                        vpc_config={"subnet_ids": ["subnet-0123456789abcdef0"]})  # fmt: skip
        if asg is not None:
            aws.autoscaling.Group(
                "asg",
                min_size=0,
                max_size=2,
                vpc_zone_identifiers=["subnet-0123456789abcdef0"],
                tags=[
                    {"key": "gpucloud.io/kubernetes-version", "value": asg[0], "propagate_at_launch": False},
                    {"key": "gpucloud.io/ami-release", "value": asg[1], "propagate_at_launch": False},
                ],
            )
        if node_class is not None:
            labels = {"gpucloud.io/kubernetes-version": node_class[0]}
            if node_class[1] is not None:
                labels["gpucloud.io/ami-release"] = node_class[1]
            k8s.apiextensions.CustomResource(
                "nodeclass",
                api_version="karpenter.k8s.aws/v1",
                kind="EC2NodeClass",
                metadata={"name": "pool", "labels": labels},
                spec={"role": "node", "amiSelectorTerms": [{"alias": "al2023@v20260714"}]},
            )

    return run_callable(body, preview=True)


def test_self_managed_asgs_and_karpenter_node_classes_within_the_skew_pass() -> None:
    plan = node_program("1.36", ("1.33", "1.33.13-20260714"), ("1.36", "1.36.2-20260714"))
    assert upgrade_findings(plan) == []


def test_a_self_managed_asg_four_minors_behind_or_with_another_minors_release_fails() -> None:
    behind = run_conformance(node_program("1.36", ("1.32", "1.32.13-20260714"), None), only=["upgrade"])
    assert [(f.severity, f.field, f.message) for f in behind.findings] == [
        ("error", "tags", "kubelet 1.32 is 4 minors behind the control plane (1.36); at most 3 are supported")
    ]
    mixed = node_program("1.35", ("1.35", "1.34.9-20260714"), None)
    assert upgrade_findings(mixed) == [("upgrade.kubelet-skew", "error", "asg", "tags")]


def test_a_karpenter_pool_ahead_fails_and_one_behind_on_an_alias_is_a_warning() -> None:
    ahead = node_program("1.35", None, ("1.36", None))
    assert upgrade_findings(ahead) == [("upgrade.kubelet-skew", "error", "nodeclass", "metadata.labels")]
    behind = run_conformance(node_program("1.36", None, ("1.35", "1.35.6-20260714")), only=["upgrade"])
    assert [(f.severity, f.expected) for f in behind.findings] == [
        ("warning", "the pool on the cluster's minor (1.36), or an explicit ami.id built for 1.35")
    ]
