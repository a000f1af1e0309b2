"""pod.network: NCCL-style interface lists against the interfaces a pod on the VPC CNI has (lo, eth0)."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from gpucloud.conformance import ConformanceContext
from gpucloud.conformance.pod_network import check_pod_network, selected_interfaces
from gpucloud.plan import run_callable

POD = ("lo", "eth0")


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        ("eth0", ["eth0"]),
        ("eth", ["eth0"]),  # a prefix
        ("en", []),  # the host's predictable names (ens5): a pod has none
        ("=eth", []),  # exact names only
        ("=eth0", ["eth0"]),
        ("^lo,docker", ["eth0"]),  # exclusion list
        ("^eth", ["lo"]),
        ("ens5,eth0:1234", ["eth0"]),  # a port never takes part in the match
        ("", []),
        (",", []),  # an empty entry selects nothing (it is not the empty prefix, which would match all)
        ("^,lo", ["eth0"]),
    ],
)
def test_selected_interfaces_follow_ncclmatcher(value: str, selected: list[str]) -> None:
    assert selected_interfaces(value, POD) == selected


def _job(ifname: str, host_network: bool = False, with_cluster: bool = True, cni_chart: str | None = None):
    def program() -> None:
        if with_cluster:
            aws.eks.Cluster("c", role_arn="arn:aws:iam::123456789012:role/r", vpc_config={"subnet_ids": ["s"]})
        if cni_chart is not None:
            k8s.helm.v3.Release("cni", chart=cni_chart, version="1.18.0", namespace="kube-system")
        k8s.batch.v1.Job(
            "train",
            metadata={"name": "train", "namespace": "ml"},
            spec={
                "template": {
                    "spec": {
                        "hostNetwork": host_network,
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "main", "image": "x:1", "env": [{"name": "NCCL_SOCKET_IFNAME", "value": ifname}]}
                        ],
                    }
                }
            },
        )

    plan = run_callable(program)
    return list(check_pod_network(ConformanceContext(plan=plan)))


def test_prefix_matching_no_pod_interface_is_an_error() -> None:
    [finding] = _job("en")
    assert (finding.check, finding.severity, finding.urn.rsplit("::", 1)[-1]) == ("pod.network", "error", "train")
    assert finding.field == "spec.template.spec.containers[main].env[0].value"
    assert finding.message.startswith("Job ml/train: NCCL_SOCKET_IFNAME='en' selects no interface a pod has")
    assert finding.expected == "eth0 (or an exclusion list such as ^lo,docker)"


def test_eth0_and_exclusions_pass() -> None:
    assert _job("eth0") == []
    assert _job("^lo,docker") == []


def test_host_network_pods_are_not_judged() -> None:
    assert _job("en", host_network=True) == []


def test_cluster_elsewhere_is_a_warning() -> None:
    [finding] = _job("en", with_cluster=False)
    assert finding.severity == "warning"
    assert "assuming EKS's VPC CNI" in finding.message


@pytest.mark.parametrize("chart", ["cilium", "oci://quay.io/cilium/charts/cilium", "tigera-operator"])
def test_a_replacement_cni_names_its_own_interfaces(chart: str) -> None:
    assert _job("en", cni_chart=chart) == []


def test_a_non_cni_chart_changes_nothing() -> None:
    [finding] = _job("en", cni_chart="keda")
    assert finding.severity == "error"
