"""Node bootstrap rendering: nodeadm NodeConfig (AL2023) in a MIME multi-part document, or Bottlerocket TOML.

Pure functions of plain values, so golden files pin the exact text; components call them inside
Output.apply once the cluster's endpoint and CA are known.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field

import yaml

MIME_BOUNDARY = "==GPUCLOUD-BOUNDARY=="
NODEADM_CONTENT_TYPE = "application/node.eks.aws"
NODEADM_API_VERSION = "node.eks.aws/v1alpha1"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # Kubernetes spelling: NoSchedule | NoExecute | PreferNoSchedule


@dataclass(frozen=True)
class ClusterInfo:
    """What a node needs to join without calling DescribeCluster."""

    name: str
    endpoint: str
    certificate_authority: str
    service_cidr: str


@dataclass(frozen=True)
class NodeBootstrap:
    """Everything rendered into user data.

    `cluster` None means EKS generates the join part itself (managed node group on an EKS AMI type): then
    only the extras (local storage) are rendered and labels/taints live on the node group.
    """

    cluster: ClusterInfo | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    raid0: bool = False

    @property
    def empty(self) -> bool:
        return self.cluster is None and not self.raid0 and not self.labels and not self.taints


def node_config(b: NodeBootstrap) -> dict[str, object]:
    spec: dict[str, object] = {}
    if b.cluster is not None:
        spec["cluster"] = {
            "name": b.cluster.name,
            "apiServerEndpoint": b.cluster.endpoint,
            "certificateAuthority": b.cluster.certificate_authority,
            "cidr": b.cluster.service_cidr,
        }
    kubelet: dict[str, object] = {}
    if b.taints:
        kubelet["config"] = {
            "registerWithTaints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in b.taints]
        }
    if b.labels:
        kubelet["flags"] = ["--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(b.labels.items()))]
    if kubelet:
        spec["kubelet"] = kubelet
    if b.raid0:
        spec["instance"] = {"localStorage": {"strategy": "RAID0"}}
    return {"apiVersion": NODEADM_API_VERSION, "kind": "NodeConfig", "spec": spec}


def render_nodeadm(b: NodeBootstrap) -> str:
    """MIME multi-part user data holding one NodeConfig part (empty string when there is nothing to say)."""
    if b.empty:
        return ""
    body = "---\n" + yaml.safe_dump(node_config(b), sort_keys=False, default_flow_style=False)
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n'
        "\n"
        f"--{MIME_BOUNDARY}\n"
        f"Content-Type: {NODEADM_CONTENT_TYPE}\n"
        "\n"
        f"{body}"
        f"--{MIME_BOUNDARY}--\n"
    )


def cluster_dns_ip(service_cidr: str) -> str:
    """kube-dns sits at .10 of the service network, as EKS sets it up."""
    return str(ipaddress.ip_network(service_cidr).network_address + 10)


def _toml_str(value: str) -> str:
    return json.dumps(value)  # TOML basic strings share JSON's escaping for everything rendered here


def render_bottlerocket(b: NodeBootstrap) -> str:
    """Bottlerocket settings TOML: join settings, labels, taints and instance-store RAID0 via ephemeral-storage."""
    lines: list[str] = []
    if b.cluster is not None:
        lines += [
            "[settings.kubernetes]",
            f"cluster-name = {_toml_str(b.cluster.name)}",
            f"api-server = {_toml_str(b.cluster.endpoint)}",
            f"cluster-certificate = {_toml_str(b.cluster.certificate_authority)}",
            f"cluster-dns-ip = {_toml_str(cluster_dns_ip(b.cluster.service_cidr))}",
            "",
        ]
    if b.labels:
        lines.append("[settings.kubernetes.node-labels]")
        lines += [f"{_toml_str(k)} = {_toml_str(v)}" for k, v in sorted(b.labels.items())]
        lines.append("")
    if b.taints:
        lines.append("[settings.kubernetes.node-taints]")
        lines += [f"{_toml_str(t.key)} = [{_toml_str(f'{t.value}:{t.effect}')}]" for t in b.taints]
        lines.append("")
    if b.raid0:
        # ephemeral-storage init assembles every instance-store disk as one RAID0 array; bind moves the
        # image store, kubelet and pod logs onto it.
        lines += [
            "[settings.bootstrap-commands.k8s-ephemeral-storage]",
            'commands = [["apiclient", "ephemeral-storage", "init"], ["apiclient", "ephemeral-storage", "bind", '
            '"--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"]]',
            "essential = true",
            'mode = "always"',
            "",
        ]
    return "\n".join(lines)


def render(family: str, b: NodeBootstrap) -> str:
    return render_bottlerocket(b) if family == "bottlerocket" else render_nodeadm(b)
