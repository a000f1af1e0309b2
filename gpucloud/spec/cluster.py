"""EKS cluster section of the stack spec."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpucloud import catalog
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.network import check_log_retention

# EKS versions in standard or extended support on the catalog date; older ones cost extended-support fees
# or cannot be created.
SUPPORTED_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
KubernetesVersion = Literal["1.32", "1.33", "1.34", "1.35", "1.36"]
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
        description=f"EKS Kubernetes version (minor), one of {list(SUPPORTED_KUBERNETES_VERSIONS)}, e.g. '1.34'."
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
        description="Managed add-on versions by name: 'default' (EKS's default for the Kubernetes version, the "
        "default for every add-on), 'latest' (newest compatible, resolved at plan time) or an exact "
        "vX.Y.Z-eksbuild.N.",
    )
    system_node_group: SystemNodeGroupSpec = Field(
        default_factory=SystemNodeGroupSpec, description="CPU node group for cluster services."
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        if isinstance(value, float):
            value = f"{value:.2f}".rstrip("0")
        if value not in SUPPORTED_KUBERNETES_VERSIONS:
            raise ValueError(
                f"Kubernetes {value!r} is not in EKS standard or extended support; use one of "
                f'{list(SUPPORTED_KUBERNETES_VERSIONS)} (quote it in YAML: "1.34")'
            )
        return value

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
        bad = {k: v for k, v in value.items() if v not in ("default", "latest") and not _ADDON_VERSION.match(v)}
        if bad:
            raise ValueError(f"bad add-on versions {bad}; use 'default', 'latest' or e.g. v1.19.2-eksbuild.1")
        return value

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
        rules.raise_if_any()
        return self

    def addon_version(self, addon: AddonName) -> str:
        return self.addon_versions.get(addon, "default")
