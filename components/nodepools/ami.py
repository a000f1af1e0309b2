"""GPU AMI choice: EKS AMI type for managed node groups, the pinned release, and the public SSM parameter of that
release's image id (self-managed groups).

The release is pinned in the stack spec (or the versions table for the pool's minor), never read from the SSM
"recommended"/"latest" parameters at plan time: with those, every AWS AMI release changed the node groups' inputs
and an unrelated `pulumi up` rolled every GPU pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucloud import versions
from gpucloud.spec.pools import NodePoolSpec


@dataclass(frozen=True)
class AmiChoice:
    """Which AMI a pool boots and where its current id/version is published."""

    family: str  # al2023 | bottlerocket
    variant: str  # nvidia | neuron
    ami_type: str  # EKS amiType, or CUSTOM with an explicit AMI id
    kubernetes_version: str  # the kubelet minor the nodes run (managed node group `version`)
    release: str  # the pinned EKS AMI release (managed `releaseVersion`, Karpenter alias)
    image_parameter: str  # SSM parameter with that release's AMI id (self-managed)
    explicit_id: str | None

    @property
    def needs_full_bootstrap(self) -> bool:
        """A custom AMI in a managed group gets no EKS-generated bootstrap, so the user data must join the node."""
        return self.explicit_id is not None


def choose_ami(pool: NodePoolSpec, kubernetes_version: str, release: str | None = None) -> AmiChoice:
    """The AMI of `pool` on its kubelet minor (the pool's own, else `kubernetes_version`, the cluster's).

    `release` defaults to the pool's `ami.release`, else the versions table's release for that minor.
    """
    minor = pool.kubernetes_version or kubernetes_version
    family = pool.ami.family
    pinned = release or pool.ami.release or versions.for_minor(minor).ami[family].version
    neuron = any(s.accelerator_kind == "neuron" for s in pool.specs)
    variant = "neuron" if neuron else "nvidia"
    if family == "bottlerocket":
        ami_type = "BOTTLEROCKET_x86_64_NVIDIA"
    else:
        ami_type = "AL2023_x86_64_NEURON" if neuron else "AL2023_x86_64_NVIDIA"
    image = versions.ami_image_parameter(family, variant, minor, pinned)
    if pool.ami.id is not None:
        ami_type = "CUSTOM"
    return AmiChoice(family, variant, ami_type, minor, pinned, image, pool.ami.id)


def karpenter_alias(family: str, release: str) -> str:
    """Karpenter AMI alias pinned to the spec's release, so nodes change only when the stack does.

    AL2023 release versions look like `1.34.4-20261120` (alias `al2023@v20261120`); Bottlerocket image
    versions like `1.52.0-4b1e2d7a` (alias `bottlerocket@v1.52.0`). Karpenter picks the NVIDIA/Neuron variant
    from the instance type.
    """
    if family == "bottlerocket":
        return f"bottlerocket@v{release.split('-')[0]}"
    return f"al2023@v{release.rsplit('-', 1)[-1]}"
