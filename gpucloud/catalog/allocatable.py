"""What a node of an instance type keeps for the system, per the EKS AMI: the kubelet's kube-reserved CPU and
memory at the max pods EKS caps to, plus the hard-eviction threshold (awslabs/amazon-eks-ami nodeadm kubelet
defaults). A fact of the instance type and the AMI, so components (Kueue quotas) and conformance (allocatable
resources) read the same figures.

CPU: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% above four; memory: 255 MiB + 11 MiB per
pod at the max pods (110 below 30 vCPUs and 250 above) and the 100 MiB hard-eviction threshold. DaemonSet
requests are not subtracted.
"""

from __future__ import annotations

from gpucloud.catalog import InstanceSpec

RESERVE_SOURCE = "EKS AMI kube-reserved / eviction defaults (awslabs/amazon-eks-ami nodeadm)"


def reserve(spec: InstanceSpec) -> tuple[float, float, int]:
    """(reserved cores, reserved bytes, max pods) per the EKS AMI defaults (see the module docstring)."""
    cores = spec.vcpu
    cpu_m = 60.0 + (10.0 if cores >= 2 else 0) + 5.0 * max(0, min(cores, 4) - 2) + 2.5 * max(0, cores - 4)
    max_pods = 110 if cores < 30 else 250
    mem = (255 + 11 * max_pods + 100) * 2**20
    return cpu_m / 1000, float(mem), max_pods
