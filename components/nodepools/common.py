"""What GpuNodePool and its backends share: well-known labels and taints, autoscaler tags, small encoders."""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

import pulumi_aws as aws

from gpucloud.catalog import InstanceSpec
from gpucloud.components.nodepools.capacity import (
    GroupPlan,
    capacity_types,
)
from gpucloud.components.nodepools.userdata import Taint
from gpucloud.fleet import labels as L
from gpucloud.spec.pools import NodePoolSpec

LABEL_PREFIX = "gpucloud.io"
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
NEURON_TAINT = Taint("aws.amazon.com/neuron", "true", "NoSchedule")
# cluster-autoscaler auto-discovery (`--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,
# k8s.io/cluster-autoscaler/<cluster>`, which the chart's autoDiscovery.clusterName renders) finds ASGs by the
# presence of both keys; the add-on's IAM policy also scopes SetDesiredCapacity to groups carrying them.
CA_TAG_PREFIX = "k8s.io/cluster-autoscaler"
CA_ENABLED_TAG = f"{CA_TAG_PREFIX}/enabled"
CA_NODE_TEMPLATE = f"{CA_TAG_PREFIX}/node-template"
EFA_RESOURCE = L.EFA
_LtTarget = aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs
_EKS_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}
# The gp3 baseline; image pulls of multi-GB CUDA images are throughput-bound, so raise it above 125 MB/s.
ROOT_IOPS = 3000
ROOT_THROUGHPUT_MBPS = 250


def ca_cluster_tag(cluster_name: str) -> str:
    return f"{CA_TAG_PREFIX}/{cluster_name}"


def autoscaler_node_template_tags(
    labels: dict[str, str], taint: Taint, spec: InstanceSpec, *, efa: bool
) -> dict[str, str]:
    """cluster-autoscaler's node-template ASG tags: what a node of an empty group would look like.

    Format from the cluster-autoscaler AWS provider README (kubernetes/autoscaler,
    cluster-autoscaler/cloudprovider/aws/README.md, "Auto-Discovery Setup"):
    `k8s.io/cluster-autoscaler/node-template/label/<name>` = value, `.../taint/<key>` = `<value>:<Effect>`,
    `.../resources/<resource>` = quantity. Without them an ASG at 0 nodes looks like a plain, untainted
    instance type to CA, so pods selecting the pool label or tolerating the GPU taint never trigger a scale-up,
    and extended resources CA cannot infer from the instance type (EFA) never fit.
    """
    tags = {f"{CA_NODE_TEMPLATE}/label/{k}": v for k, v in labels.items()}
    tags[f"{CA_NODE_TEMPLATE}/taint/{taint.key}"] = f"{taint.value}:{taint.effect}"
    resource = "nvidia.com/gpu" if spec.is_gpu else "aws.amazon.com/neuron"
    tags[f"{CA_NODE_TEMPLATE}/resources/{resource}"] = str(spec.accelerator_count)
    if efa and spec.efa_interfaces:
        tags[f"{CA_NODE_TEMPLATE}/resources/{EFA_RESOURCE}"] = str(spec.efa_interfaces)
    return tags


def version_tags(minor: str, release: str, explicit_id: str | None) -> list[tuple[str, str]]:
    """What the group boots, for the upgrade checks (an explicit AMI id has no EKS release, only the pool's minor)."""
    pairs = [(L.KUBELET_MINOR, minor)]
    if explicit_id is None:
        pairs.append((L.AMI_RELEASE, release))
    return pairs


def _capacity_label(pool: NodePoolSpec, group: GroupPlan | None) -> str:
    if group is not None:
        return {"CAPACITY_BLOCK": "capacity-block", "SPOT": "spot"}.get(
            group.capacity_type, "reserved" if group.role == "reserved" else "on-demand"
        )
    kinds = capacity_types(pool)
    # A mixed ASG launches on-demand and spot from one launch template, so the label cannot be static.
    return kinds[0] if len(kinds) == 1 else "mixed"


def _default_service_cidr(vpc_cidr: str) -> str:
    # What EKS picks when the cluster sets no service CIDR: 172.20.0.0/16 if the VPC is in 10.0.0.0/8.
    if vpc_cidr and ipaddress.IPv4Network(vpc_cidr).subnet_of(ipaddress.IPv4Network("10.0.0.0/8")):
        return "172.20.0.0/16"
    return "10.100.0.0/16"


def _first_asg_name(resources: Any) -> Any:
    # Known only after EKS creates the group; under preview it stays unknown, as the provider reports it.
    for r in resources or []:
        groups = r.get("autoscaling_groups") if isinstance(r, dict) else getattr(r, "autoscaling_groups", None)
        for g in groups or []:
            name = g.get("name") if isinstance(g, dict) else getattr(g, "name", None)
            if name:
                return name
    return None


def _version(v: Any) -> Any:
    # Under update-mode mocks the computed version is None; keep it absent rather than the string "None".
    return None if v is None else str(v)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
