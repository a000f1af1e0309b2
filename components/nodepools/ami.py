"""GPU AMI choice: EKS AMI type for managed node groups and the public SSM parameters that publish it."""

from __future__ import annotations

from dataclasses import dataclass

from gpucloud.spec.pools import NodePoolSpec


@dataclass(frozen=True)
class AmiChoice:
    """Which AMI a pool boots and where its current id/version is published."""

    family: str  # al2023 | bottlerocket
    variant: str  # nvidia | neuron
    ami_type: str  # EKS amiType, or CUSTOM with an explicit AMI id
    release_parameter: str  # SSM parameter with the release/image version (managed node groups, Karpenter)
    image_parameter: str  # SSM parameter with the AMI id (self-managed)
    explicit_id: str | None

    @property
    def needs_full_bootstrap(self) -> bool:
        """A custom AMI in a managed group gets no EKS-generated bootstrap, so the user data must join the node."""
        return self.explicit_id is not None


def choose_ami(pool: NodePoolSpec, kubernetes_version: str) -> AmiChoice:
    neuron = any(s.accelerator_kind == "neuron" for s in pool.specs)
    variant = "neuron" if neuron else "nvidia"
    if pool.ami.family == "bottlerocket":
        base = f"/aws/service/bottlerocket/aws-k8s-{kubernetes_version}-nvidia/x86_64/latest"
        ami_type = "BOTTLEROCKET_x86_64_NVIDIA"
        release, image = f"{base}/image_version", f"{base}/image_id"
    else:
        base = f"/aws/service/eks/optimized-ami/{kubernetes_version}/amazon-linux-2023/x86_64/{variant}/recommended"
        ami_type = "AL2023_x86_64_NEURON" if neuron else "AL2023_x86_64_NVIDIA"
        release, image = f"{base}/release_version", f"{base}/image_id"
    if pool.ami.id is not None:
        ami_type = "CUSTOM"
    return AmiChoice(pool.ami.family, variant, ami_type, release, image, pool.ami.id)


def karpenter_alias(family: str, release: str) -> str:
    """Karpenter AMI alias pinned to the SSM-published release, so nodes change only when the stack does.

    AL2023 release versions look like `1.34.4-20261120` (alias `al2023@v20261120`); Bottlerocket image
    versions like `1.52.0-4b1e2d7a` (alias `bottlerocket@v1.52.0`). Karpenter picks the NVIDIA/Neuron variant
    from the instance type.
    """
    if family == "bottlerocket":
        return f"bottlerocket@v{release.split('-')[0]}"
    return f"al2023@v{release.rsplit('-', 1)[-1]}"
