"""EKS cluster section of the stack spec."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpucloud import catalog, versions
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.network import check_log_retention

# The minors the versions table carries (gpucloud/versions/eks.json): each has its add-on builds, AMI releases and
# charts; older ones cost extended-support fees or cannot be created.
SUPPORTED_KUBERNETES_VERSIONS = versions.minors()
LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
DEFAULT_LOG_TYPES: tuple[LogType, ...] = ("api", "audit", "authenticator")
AddonName = Literal["vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent", "eks-node-monitoring-agent"]
# The managed add-ons every gpucloud cluster runs. eks-node-monitoring-agent reports the node conditions
# (AcceleratedHardwareReady ...) that node auto-repair of GPU pools acts on.
CORE_ADDONS: tuple[AddonName, ...] = (
    "vpc-cni",
    "kube-proxy",
    "eks-pod-identity-agent",
    "coredns",
    "eks-node-monitoring-agent",
)
_ADDON_VERSION = re.compile(r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")
# EKS-optimized AMI release versions: AL2023 `1.35.6-20260714` (minor, patch, build date), Bottlerocket
# `1.52.0-4b1e2d7a` (OS version, commit) or `1.52.0`.
_AMI_RELEASE = {
    "al2023": re.compile(r"^1\.\d+\.\d+-\d{8}$"),
    "bottlerocket": re.compile(r"^\d+\.\d+\.\d+(-[0-9a-f]{8})?$"),
}
AmiFamily = Literal["al2023", "bottlerocket"]
_PRINCIPAL_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:(iam|sts)::\d{12}:(role|user|assumed-role)/[\w+=,.@/-]+$")
_KMS_KEY_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$")
SystemAmiType = Literal[
    "AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64"
]


class SystemNodeGroupSpec(SpecModel):
    """Small on-demand CPU node group for cluster services (CoreDNS, controllers)."""

    instance_type: str = Field(default="m7i.xlarge", description="CPU instance type for system pods.")
    ami_type: SystemAmiType = Field(
        default="AL2023_x86_64_STANDARD",
        description="EKS AMI type; ARM_64 types need a Graviton instance type (e.g. m7g.large).",
    )
    min_size: int = Field(default=2, ge=1, description="Fewest system nodes (2 keeps CoreDNS available).")
    desired_size: int = Field(default=2, ge=1, description="System nodes at creation (ignored afterwards).")
    max_size: int = Field(default=4, ge=1, le=100, description="Most system nodes.")
    root_volume_gib: int = Field(default=50, ge=20, le=1000, description="Encrypted gp3 root volume size in GiB.")
    kubernetes_version: str | None = Field(
        default=None,
        description="Kubelet minor of the system nodes (the node group's `version`). Unset: the cluster's. An upgrade "
        "moves the control plane first and the nodes after it (kubelet at most three minors behind, never ahead).",
    )
    ami_release: str | None = Field(
        default=None,
        description="EKS AMI release of the system nodes (`releaseVersion`, e.g. 1.35.6-20260714). Unset: "
        "cluster.amiReleases of the AMI family when the nodes run the cluster's minor, else the versions table's "
        "release for their minor.",
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _node_version(cls, value: object) -> object:
        return None if value is None else check_kubernetes_minor(value)

    @property
    def ami_family(self) -> AmiFamily:
        return "bottlerocket" if self.ami_type.startswith("BOTTLEROCKET") else "al2023"

    @field_validator("instance_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        try:
            catalog.validate_instance_type(value)
        except catalog.UnknownInstanceType as exc:
            raise ValueError(str(exc)) from None
        if catalog.is_gpu_instance_type(value):
            raise ValueError(f"{value} is an accelerated instance type; system nodes are CPU-only (e.g. m7i.large)")
        return value

    @model_validator(mode="after")
    def _arch(self) -> SystemNodeGroupSpec:
        rules = RuleViolations()
        graviton = bool(re.match(r"^[a-z]+\d+[a-z]*g[a-z]*\.", self.instance_type))
        if "ARM_64" in self.ami_type and not graviton:
            rules.add("amiType", f"{self.ami_type} needs a Graviton (arm64) instance type, not {self.instance_type}")
        if "ARM_64" not in self.ami_type and graviton:
            rules.add("amiType", f"{self.instance_type} is arm64; use AL2023_ARM_64_STANDARD or BOTTLEROCKET_ARM_64")
        rules.raise_if_any()
        return self


class ClusterSpec(SpecModel):
    """The EKS control plane and what every node group relies on."""

    kubernetes_version: str = Field(
        description=f"EKS Kubernetes version (minor), one of {list(SUPPORTED_KUBERNETES_VERSIONS)}, e.g. '1.35'."
    )
    endpoint_public_access: bool = Field(
        default=False, description="Expose the API endpoint publicly (needs publicAccessCidrs)."
    )
    public_access_cidrs: list[str] = Field(
        default_factory=list, description="CIDRs allowed to reach a public endpoint; never 0.0.0.0/0."
    )
    log_types: list[LogType] = Field(
        default_factory=lambda: list(DEFAULT_LOG_TYPES),
        description="Control-plane log types sent to CloudWatch (audit and authenticator are required).",
    )
    log_retention_days: int = Field(
        default=90, description="Days the /aws/eks/<name>/cluster log group keeps control-plane logs."
    )
    kms_key_arn: str | None = Field(
        default=None,
        description="Existing KMS key for secrets, logs and node volumes; when unset the cluster creates its own "
        "key with rotation. The key policy must let CloudWatch Logs and the Auto Scaling service-linked role use it.",
    )
    kms_deletion_window_days: int = Field(
        default=30, ge=7, le=30, description="Waiting period before a deleted cluster key is destroyed."
    )
    create_autoscaling_service_linked_role: bool = Field(
        default=False,
        description="Create AWSServiceRoleForAutoScaling (only in accounts that never had an Auto Scaling group); "
        "the created KMS key policy names it so node groups can launch with encrypted volumes.",
    )
    admin_principal_arns: list[str] = Field(
        default_factory=list, description="IAM role/user ARNs granted cluster admin through access entries."
    )
    addon_versions: dict[AddonName, str] = Field(
        default_factory=dict,
        description="Managed add-on versions by name, each an exact vX.Y.Z-eksbuild.N. An add-on left out is "
        "pinned to the versions table's build for the Kubernetes version (gpucloud/versions/eks.json, what EKS "
        "DescribeAddonVersions marks default), so a version bump moves the add-ons with it.",
    )
    ami_releases: dict[AmiFamily, str] = Field(
        default_factory=dict,
        description="EKS AMI release per AMI family for nodes on the cluster's minor (al2023: e.g. "
        "1.35.6-20260714, bottlerocket: e.g. 1.52.0-4b1e2d7a). A family left out is pinned to the versions "
        "table's release for the minor; a new AWS AMI release reaches the nodes only when this changes.",
    )
    system_node_group: SystemNodeGroupSpec = Field(
        default_factory=SystemNodeGroupSpec, description="CPU node group for cluster services."
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        return check_kubernetes_minor(value)

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return check_log_retention(value)

    @field_validator("kms_key_arn")
    @classmethod
    def _kms(cls, value: str | None) -> str | None:
        if value is not None and not _KMS_KEY_ARN.match(value):
            raise ValueError(
                f"'{value}' is not a KMS key ARN; give arn:aws:kms:<region>:<account>:key/<uuid> (not an alias)"
            )
        return value

    @field_validator("admin_principal_arns")
    @classmethod
    def _principals(cls, value: list[str]) -> list[str]:
        bad = [a for a in value if not _PRINCIPAL_ARN.match(a)]
        if bad:
            raise ValueError(f"not IAM role/user ARNs: {bad}; use arn:aws:iam::<account>:role/<name>")
        return value

    @field_validator("addon_versions")
    @classmethod
    def _addon_versions(cls, value: dict[str, str]) -> dict[str, str]:
        bad = {k: v for k, v in value.items() if not _ADDON_VERSION.match(v)}
        if bad:
            raise ValueError(
                f"bad add-on versions {bad}; pin an exact build such as v1.20.1-eksbuild.3, or leave the add-on "
                "out for the versions table's build of the Kubernetes version ('default' and 'latest' are not "
                "pins: the plan could not say what EKS installs)"
            )
        return value

    @field_validator("ami_releases")
    @classmethod
    def _ami_releases(cls, value: dict[str, str]) -> dict[str, str]:
        return {family: check_ami_release(family, release) for family, release in value.items()}

    @model_validator(mode="after")
    def _rules(self) -> ClusterSpec:
        rules = RuleViolations()
        if self.endpoint_public_access and not self.public_access_cidrs:
            rules.add(
                "publicAccessCidrs",
                "a public endpoint needs an explicit CIDR allow-list; list your office/VPN CIDRs or set "
                "endpointPublicAccess: false",
            )
        if self.public_access_cidrs and not self.endpoint_public_access:
            rules.add("publicAccessCidrs", "only used with endpointPublicAccess: true; remove it or enable access")
        for i, cidr in enumerate(self.public_access_cidrs):
            if cidr in ("0.0.0.0/0", "::/0"):
                rules.add(f"publicAccessCidrs.{i}", f"{cidr} opens the API to the internet; list specific CIDRs")
                continue
            try:
                net = ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                rules.add(f"publicAccessCidrs.{i}", f"'{cidr}' is not a CIDR such as 203.0.113.0/24 ({exc})")
                continue
            if net.prefixlen == 0:
                rules.add(f"publicAccessCidrs.{i}", f"{cidr} opens the API to the internet; list specific CIDRs")
        missing = {"audit", "authenticator"} - set(self.log_types)
        if missing:
            rules.add("logTypes", f"must include {sorted(missing)} (who did what, and who logged in)")
        s = self.system_node_group
        if not s.min_size <= s.desired_size <= s.max_size:
            rules.add("systemNodeGroup.desiredSize", "sizes must satisfy minSize <= desiredSize <= maxSize")
        if s.ami_release is not None:
            try:
                check_ami_release(s.ami_family, s.ami_release)
            except ValueError as exc:
                rules.add("systemNodeGroup.amiRelease", str(exc))
        rules.raise_if_any()
        return self

    def addon_version(self, addon: AddonName) -> str:
        """The pinned build of a managed add-on: the spec's, else the versions table's for the cluster minor."""
        pinned = self.addon_versions.get(addon) or versions.addon_build(self.kubernetes_version, addon)
        if pinned is None:
            raise versions.VersionsError(f"the versions table has no build of {addon} for {self.kubernetes_version}")
        return pinned

    def ami_release(self, family: AmiFamily, node_minor: str | None = None, override: str | None = None) -> str:
        """The AMI release a node group on `node_minor` (default: the cluster's) boots."""
        if override:
            return override
        minor = node_minor or self.kubernetes_version
        if minor == self.kubernetes_version and family in self.ami_releases:
            return self.ami_releases[family]
        return versions.for_minor(minor).ami[family].version

    def unverified_pins(self) -> list[str]:
        """Pins taken from versions-table entries the sources did not confirm for this minor (plan warnings)."""
        row = versions.for_minor(self.kubernetes_version)
        out = [
            f"add-on {a} {row.addons[a].version}"
            for a in CORE_ADDONS
            if a not in self.addon_versions and not row.addons[a].verified
        ]
        return out


def check_kubernetes_minor(value: object) -> object:
    if isinstance(value, float):
        value = f"{value:.2f}".rstrip("0")
    if value not in SUPPORTED_KUBERNETES_VERSIONS:
        raise ValueError(
            f"Kubernetes {value!r} is not in EKS standard or extended support; use one of "
            f'{list(SUPPORTED_KUBERNETES_VERSIONS)} (quote it in YAML: "1.35")'
        )
    return value


def check_ami_release(family: str, release: str) -> str:
    pattern = _AMI_RELEASE.get(family)
    if pattern is None or not pattern.match(release):
        example = "1.35.6-20260714" if family == "al2023" else "1.52.0-4b1e2d7a"
        article = "an" if family[0] in "aeiou" else "a"
        raise ValueError(f"'{release}' is not {article} {family} AMI release version; releases look like {example}")
    return release
