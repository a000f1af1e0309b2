"""Each defect class issue 12 found, put back into a copy of a shipped stack: the conformance checks report it.

The defect goes in through a stack transformation (tests/conformance/stackcopy.py) on the inputs the component
really produces, so what is asserted is the checks' verdict on the whole stack, not a field written here. The
same stacks without the edit plan with no conformance error (test_shipped_stacks_conform).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi._types import input_type_to_dict
from stackcopy import ROOT, Props, plan_stack

from gpucloud.conformance import run_conformance

TEAM = ROOT / "stacks" / "teams" / "vision"
RELEASE = "kubernetes:helm.sh/v3:Release"
EKS_CHARTS = "https://aws.github.io/eks-charts"


def _release(suffix: str, change: Callable[[Props], None]) -> Callable[[str, str, Props], Props | None]:
    def edit(type_: str, name: str, props: Props) -> Props | None:
        if type_ != RELEASE or not name.endswith(suffix):
            return None
        props = dict(props)
        change(props)
        return props

    return edit


def _values(change: Callable[[dict[str, Any]], None]) -> Callable[[Props], None]:
    def apply(props: Props) -> None:
        values = copy.deepcopy(props["values"])
        change(values)
        props["values"] = values

    return apply


def _nfd_under_its_chart_name(values: dict[str, Any]) -> None:
    nfd = values["nfd"]
    values["nfd"] = {"enabled": nfd["enabled"]}
    values["node-feature-discovery"] = {k: v for k, v in nfd.items() if k != "enabled"}


def _dcgm_on_gpu_present(values: dict[str, Any]) -> None:
    values.pop("affinity", None)
    values["nodeSelector"] = {"nvidia.com/gpu.present": "true"}


def _efa_affinity(values: dict[str, Any]) -> None:
    types = values.pop("supportedInstanceLabels")["values"]
    values["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}
                        ]
                    }
                ]
            }
        }
    }


def _nth_from_eks_charts(props: Props) -> None:
    props["chart"] = "aws-node-termination-handler"
    props["repository_opts"] = {"repo": EKS_CHARTS}


def _ca_chart(version: str) -> Callable[[Props], None]:
    def apply(props: Props) -> None:
        props["version"] = version

    return apply


def _deep_env(name: str, value: str) -> Callable[[str, str, Props], Props | None]:
    """Every container env entry `name` in any Kubernetes object gets `value` (lists of dicts, as components
    build them)."""

    def walk(node: Any) -> tuple[Any, bool]:
        if isinstance(node, dict):
            if node.get("name") == name and "value" in node:
                return {**node, "value": value}, True
            changed = False
            out = {}
            for k, v in node.items():
                out[k], c = walk(v)
                changed |= c
            return out, changed
        if isinstance(node, list):
            items = [walk(v) for v in node]
            return [v for v, _ in items], any(c for _, c in items)
        return node, False

    def edit(type_: str, _name: str, props: Props) -> Props | None:
        if not type_.startswith("kubernetes:"):
            return None
        new, changed = walk(dict(props))
        return new if changed else None

    return edit


def _asg_without_autoscaler_tags(type_: str, _name: str, props: Props) -> Props | None:
    if type_ != "aws:autoscaling/group:Group":
        return None
    tags = [t for t in props.get("tags") or [] if not str(_get(t, "key")).startswith("k8s.io/cluster-autoscaler/")]
    return {**props, "tags": tags}


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _plain(value: Any) -> Any:
    """Input-type objects (`...Args`) as the camelCase dicts the SDK would send, so a test can edit them."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    try:
        return _plain(input_type_to_dict(value))
    except (AssertionError, AttributeError, TypeError):
        return value


def _team(type_suffix: str, change: Callable[[Props], Props]) -> Callable[[str, str, Props], Props | None]:
    def edit(type_: str, _name: str, props: Props) -> Props | None:
        if not type_.endswith(type_suffix):
            return None
        return change({**props, "spec": _plain(props["spec"])})

    return edit


def _quota_of(gpus: str) -> Callable[[Props], Props]:
    def change(props: Props) -> Props:
        props["spec"]["hard"]["requests.nvidia.com/gpu"] = gpus
        return props

    return change


def _limitrange_max_only(props: Props) -> Props:
    for limit in props["spec"]["limits"]:
        for key in ("default", "defaultRequest"):
            (limit.get(key) or {}).pop("nvidia.com/gpu", None)
    return props


def _pdb_max_unavailable(props: Props) -> Props:
    if "minAvailable" in props["spec"]:
        props["spec"].pop("minAvailable")
        props["spec"]["maxUnavailable"] = 1
    return props


def _spot_first_and_no_floor(type_: str, name: str, props: Props) -> Props | None:
    """The expander order before the fix (reserved, spot, then on-demand last) with on-demand groups at min 0."""
    if type_ == "kubernetes:core/v1:ConfigMap" and "priorities" in (props.get("data") or {}):
        old = {30: [".*-reserved.*|.*-capacity-block.*"], 20: [".*-spot.*"], 10: [".*"]}
        return {**props, "data": {"priorities": yaml.safe_dump(old)}}
    if type_ == "aws:eks/nodeGroup:NodeGroup" and props.get("capacity_type") == "ON_DEMAND":
        scaling = _plain(props["scaling_config"])
        return {**props, "scaling_config": {**scaling, "minSize": 0}}
    return None


CASES: list[tuple[str, str, Path, Callable[[str, str, Props], Props | None], str, str]] = [
    # (id, stack, program, edit, check, resource name the finding names)
    (
        "nfd-values-under-chart-name",
        "dev",
        ROOT,
        _release("nvidia-device-plugin", _values(_nfd_under_its_chart_name)),
        "helm.values",
        "gpucloud-dev-addons-nvidia-device-plugin",
    ),
    (
        "nfd-worker-without-gpu-toleration",
        "dev",
        ROOT,
        _release("nvidia-device-plugin", _values(_nfd_under_its_chart_name)),
        "scheduling.daemonset",
        "gpucloud-dev-addons-nvidia-device-plugin",
    ),
    (
        "dcgm-on-gpu-operator-label",
        "dev",
        ROOT,
        _release("dcgm-exporter", _values(_dcgm_on_gpu_present)),
        "scheduling.daemonset",
        "gpucloud-dev-addons-dcgm-exporter",
    ),
    (
        "efa-plugin-affinity-unread",
        "prod",
        ROOT,
        _release("aws-efa-k8s-device-plugin", _values(_efa_affinity)),
        "helm.values",
        "gpucloud-prod-addons-aws-efa-k8s-device-plugin",
    ),
    (
        "nth-from-eks-charts",
        "dev",
        ROOT,
        _release("nth-release", _nth_from_eks_charts),
        "helm.lock",
        "gpucloud-dev-nth-release",
    ),
    (
        "cluster-autoscaler-1.32-chart",
        "dev",
        ROOT,
        _release("cluster-autoscaler", _ca_chart("9.46.6")),
        "helm.lock",
        "gpucloud-dev-addons-cluster-autoscaler",
    ),
    ("nccl-ifname-en-platform", "prod", ROOT, _deep_env("NCCL_SOCKET_IFNAME", "en"), "pod.network", None),
    ("nccl-ifname-en-team", "dev", TEAM, _deep_env("NCCL_SOCKET_IFNAME", "en"), "pod.network", "vision-finetune-job"),
    (
        "asg-without-autoscaler-tags",
        "dev",
        ROOT,
        _asg_without_autoscaler_tags,
        "scheduling.autoscaling",
        "gpucloud-dev-dev-l4-asg",
    ),
    ("team-quota-below-workloads", "dev", TEAM, _team(":ResourceQuota", _quota_of("8")), "scheduling.quota", None),
    ("limitrange-max-without-default", "dev", TEAM, _team(":LimitRange", _limitrange_max_only), "scheduling", None),
    (
        "training-pdb-blocks-drain",
        "dev",
        TEAM,
        _team(":PodDisruptionBudget", _pdb_max_unavailable),
        "scheduling.drain",
        "vision-finetune-pdb",
    ),
    ("expander-spot-before-on-demand", "prod", ROOT, _spot_first_and_no_floor, "scheduling.autoscaling", None),
]


@pytest.mark.parametrize(
    ("stack", "program", "edit", "check", "resource"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_defect_put_back_is_reported(stack, program, edit, check, resource) -> None:
    result = run_conformance(plan_stack(stack, program_dir=program, edit=edit))
    hits = [f for f in result.findings if f.check == check or f.check.startswith(check + ".")]
    assert hits, f"no {check} finding; got {[(f.check, f.urn.rsplit('::', 1)[-1]) for f in result.findings]}"
    if resource is not None:
        assert resource in {f.urn.rsplit("::", 1)[-1] for f in hits}
