"""Well-known node labels, each defined here once, and the values a node of each instance type carries.

Keys and their aliases follow Kubernetes (k8s.io/api core/v1 well_known_labels.go) and Karpenter: the alias
table is kubernetes-sigs/karpenter v1.12.0 pkg/apis/v1/labels.go ``NormalizedLabels`` plus the EBS CSI zone
alias that aws/karpenter-provider-aws v1.12.1 adds in pkg/operator/operator.go. The values per instance type
are karpenter-provider-aws v1.12.1 pkg/providers/instancetype/types.go ``computeRequirements``, fed from the
catalog (whose ``ec2_accelerator_name`` and ``cpu_manufacturer`` are EC2's DescribeInstanceTypes names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from gpucloud.catalog import InstanceSpec

# ---- Kubernetes ------------------------------------------------------------------------------------------------
INSTANCE_TYPE: Final = "node.kubernetes.io/instance-type"
INSTANCE_TYPE_BETA: Final = "beta.kubernetes.io/instance-type"
ARCH: Final = "kubernetes.io/arch"
ARCH_BETA: Final = "beta.kubernetes.io/arch"
OS: Final = "kubernetes.io/os"
OS_BETA: Final = "beta.kubernetes.io/os"
ZONE: Final = "topology.kubernetes.io/zone"
ZONE_BETA: Final = "failure-domain.beta.kubernetes.io/zone"
ZONE_EBS_CSI: Final = "topology.ebs.csi.aws.com/zone"
REGION: Final = "topology.kubernetes.io/region"
REGION_BETA: Final = "failure-domain.beta.kubernetes.io/region"
HOSTNAME: Final = "kubernetes.io/hostname"
WINDOWS_BUILD: Final = "node.kubernetes.io/windows-build"

# ---- Karpenter (karpenter.sh) ------------------------------------------------------------------------------
CAPACITY_TYPE: Final = "karpenter.sh/capacity-type"
NODEPOOL: Final = "karpenter.sh/nodepool"
DO_NOT_DISRUPT: Final = "karpenter.sh/do-not-disrupt"

# ---- Karpenter on AWS (karpenter.k8s.aws) ----------------------------------------------------------------------
EC2NODECLASS: Final = "karpenter.k8s.aws/ec2nodeclass"
INSTANCE_FAMILY: Final = "karpenter.k8s.aws/instance-family"
INSTANCE_CATEGORY: Final = "karpenter.k8s.aws/instance-category"
INSTANCE_GENERATION: Final = "karpenter.k8s.aws/instance-generation"
INSTANCE_SIZE: Final = "karpenter.k8s.aws/instance-size"
INSTANCE_CPU: Final = "karpenter.k8s.aws/instance-cpu"
INSTANCE_CPU_MANUFACTURER: Final = "karpenter.k8s.aws/instance-cpu-manufacturer"
INSTANCE_MEMORY: Final = "karpenter.k8s.aws/instance-memory"
INSTANCE_HYPERVISOR: Final = "karpenter.k8s.aws/instance-hypervisor"
INSTANCE_LOCAL_NVME: Final = "karpenter.k8s.aws/instance-local-nvme"
INSTANCE_GPU_NAME: Final = "karpenter.k8s.aws/instance-gpu-name"
INSTANCE_GPU_MANUFACTURER: Final = "karpenter.k8s.aws/instance-gpu-manufacturer"
INSTANCE_GPU_COUNT: Final = "karpenter.k8s.aws/instance-gpu-count"
INSTANCE_GPU_MEMORY: Final = "karpenter.k8s.aws/instance-gpu-memory"
INSTANCE_ACCELERATOR_NAME: Final = "karpenter.k8s.aws/instance-accelerator-name"
INSTANCE_ACCELERATOR_MANUFACTURER: Final = "karpenter.k8s.aws/instance-accelerator-manufacturer"
INSTANCE_ACCELERATOR_COUNT: Final = "karpenter.k8s.aws/instance-accelerator-count"

# ---- EKS managed node groups ----------------------------------------------------------------------------------
EKS_NODEGROUP: Final = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE: Final = "eks.amazonaws.com/capacityType"
EKS_NODEGROUP_IMAGE: Final = "eks.amazonaws.com/nodegroup-image"

# ---- gpucloud's own keys (labels and tags) -------------------------------------------------------------------
WORKLOAD: Final = "gpucloud.io/workload"
INTERRUPTIBLE: Final = "gpucloud.io/interruptible"
POOL: Final = "gpucloud.io/pool"
# Karpenter has no desired size; gpucloud's NodePools state the pool's expected nodes in this annotation.
EXPECTED_NODES: Final = "gpucloud.io/expected-nodes"
# The kubelet minor and AMI release a self-managed ASG (tags) or a Karpenter EC2NodeClass (labels) boots: the
# launch template's image id and a Karpenter alias do not name the minor, the upgrade checks read it from here.
KUBELET_MINOR: Final = "gpucloud.io/kubernetes-version"
AMI_RELEASE: Final = "gpucloud.io/ami-release"

# ---- device resources the plugins advertise ------------------------------------------------------------------
NVIDIA_GPU: Final = "nvidia.com/gpu"
AMD_GPU: Final = "amd.com/gpu"
NEURON: Final = "aws.amazon.com/neuron"
NEURONCORE: Final = "aws.amazon.com/neuroncore"
NEURONDEVICE: Final = "aws.amazon.com/neurondevice"
EFA: Final = "vpc.amazonaws.com/efa"
# Limits keys a Karpenter NodePool can bound accelerators with.
ACCELERATOR_RESOURCES: Final = (NVIDIA_GPU, NEURON, NEURONDEVICE, AMD_GPU)

# Aliases Karpenter translates before it matches a requirement (NormalizedLabels, see the module docstring).
NORMALIZED: Final[Mapping[str, str]] = {
    ZONE_BETA: ZONE,
    ARCH_BETA: ARCH,
    OS_BETA: OS,
    INSTANCE_TYPE_BETA: INSTANCE_TYPE,
    REGION_BETA: REGION,
    ZONE_EBS_CSI: ZONE,
}

# The labels a type's catalog record decides (the rest come from the pool, the zone or the AMI).
INSTANCE_LABELS: Final = frozenset(
    {
        INSTANCE_TYPE,
        INSTANCE_FAMILY,
        INSTANCE_CATEGORY,
        INSTANCE_GENERATION,
        INSTANCE_SIZE,
        INSTANCE_CPU,
        INSTANCE_CPU_MANUFACTURER,
        INSTANCE_MEMORY,
        INSTANCE_HYPERVISOR,
        INSTANCE_LOCAL_NVME,
        INSTANCE_GPU_NAME,
        INSTANCE_GPU_MANUFACTURER,
        INSTANCE_GPU_COUNT,
        INSTANCE_GPU_MEMORY,
        INSTANCE_ACCELERATOR_NAME,
        INSTANCE_ACCELERATOR_MANUFACTURER,
        INSTANCE_ACCELERATOR_COUNT,
        ARCH,
    }
)
# Labels every EC2 type carries but only a catalog record gives the value of.
SPEC_LABELS: Final = INSTANCE_LABELS - {INSTANCE_TYPE, INSTANCE_FAMILY, INSTANCE_CATEGORY, INSTANCE_GENERATION}
SPEC_LABELS_ALWAYS: Final = frozenset({INSTANCE_CPU, INSTANCE_MEMORY, ARCH, INSTANCE_SIZE})

# karpenter-provider-aws instanceTypeScheme: category, an optional "-NNtb" memory suffix, then the generation.
_TYPE_SCHEME: Final = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")
# Graviton families carry a "g" after the generation (m7g, c6gn, r8gd); g-family GPU types start with it.
_GRAVITON: Final = re.compile(r"^[a-z]+\d+g[a-z]*$")


def normalize(key: str) -> str:
    """The well-known key an alias stands for (``beta.kubernetes.io/arch`` -> ``kubernetes.io/arch``)."""
    return NORMALIZED.get(key, key)


def normalize_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """``labels`` with aliased keys renamed; a key given both ways keeps the well-known key's value."""
    out: dict[str, str] = {}
    for key, value in labels.items():
        if key not in NORMALIZED:
            out[key] = value
    for key, value in labels.items():
        if key in NORMALIZED:
            out.setdefault(NORMALIZED[key], value)
    return out


def lower_kebab(name: str) -> str:
    """karpenter-provider-aws ``lowerKabobCase``: lower case, spaces to dashes."""
    return name.replace(" ", "-").lower()


def arch(instance_type: str) -> str:
    return "arm64" if _GRAVITON.match(instance_type.partition(".")[0]) else "amd64"


def type_labels(instance_type: str) -> dict[str, str]:
    """The labels Karpenter derives from the name alone (any EC2 type, in the catalog or not)."""
    family, _, size = instance_type.partition(".")
    out = {INSTANCE_TYPE: instance_type, ARCH: arch(instance_type)}
    match = _TYPE_SCHEME.match(instance_type)
    if match:
        out[INSTANCE_CATEGORY] = match.group(1)
        out[INSTANCE_GENERATION] = match.group(3)
    if size:
        out[INSTANCE_FAMILY] = family
        out[INSTANCE_SIZE] = size
    return out


def accelerator_label(spec: InstanceSpec) -> str:
    """The accelerator's name as Karpenter labels it: EC2's name when the catalog records it (``a100`` for
    A100-40GB), else the catalog's own name in Karpenter's spelling."""
    return spec.ec2_accelerator_name or lower_kebab(spec.accelerator)


def instance_labels(spec: InstanceSpec) -> dict[str, str]:
    """Every well-known label a node of a catalog type carries, with Karpenter's values."""
    out = type_labels(spec.instance_type)
    out[INSTANCE_CPU] = str(spec.vcpu)
    out[INSTANCE_MEMORY] = str(round(spec.memory_gib * 1024))
    # Bare metal types run without a hypervisor (EC2 reports none; Karpenter labels the empty string).
    out[INSTANCE_HYPERVISOR] = "" if spec.instance_type.endswith(".metal") else "nitro"
    if spec.cpu_manufacturer:
        out[INSTANCE_CPU_MANUFACTURER] = spec.cpu_manufacturer
    if spec.local_nvme_gb:
        out[INSTANCE_LOCAL_NVME] = str(spec.local_nvme_gb)
    if spec.accelerator_count > 0:
        if spec.is_gpu:
            out[INSTANCE_GPU_NAME] = accelerator_label(spec)
            out[INSTANCE_GPU_MANUFACTURER] = lower_kebab(spec.manufacturer)
            out[INSTANCE_GPU_COUNT] = str(spec.accelerator_count)
            out[INSTANCE_GPU_MEMORY] = str(round(spec.accelerator_memory_gib * 1024))
        else:
            out[INSTANCE_ACCELERATOR_NAME] = accelerator_label(spec)
            out[INSTANCE_ACCELERATOR_MANUFACTURER] = lower_kebab(spec.manufacturer)
            out[INSTANCE_ACCELERATOR_COUNT] = str(spec.accelerator_count)
    return out


def accelerator_resource(spec: InstanceSpec) -> str | None:
    """The extended resource a device plugin advertises this type's accelerators as, or None without any."""
    if spec.accelerator_count <= 0:
        return None
    if spec.accelerator_kind == "neuron":
        return NEURON
    return AMD_GPU if spec.manufacturer == "amd" else NVIDIA_GPU


def requirement_matches(labels: Mapping[str, str], key: str, operator: str, values: Sequence[str]) -> bool:
    """A node-selector requirement against a node's labels (Kubernetes semantics: a missing label fails In,
    Exists and the numeric operators, and passes NotIn and DoesNotExist)."""
    value = labels.get(normalize(key))
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt", "Gte", "Lte"):
        # Gte and Lte: Karpenter 1.12's NodePool CRD allows them beside Gt and Lt.
        bound = _integer(values[0]) if len(values) == 1 else None
        if bound is None:
            # The API server refuses a numeric requirement without one integer value: nothing is decided here.
            return True
        have = _integer(value)
        if have is None:
            return False
        return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound, "Lte": have <= bound}[operator]
    # An operator Kubernetes does not define: the API server refuses it, so nothing is decided here.
    return True


def _integer(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
