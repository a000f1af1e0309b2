"""EKS cluster section of the stack spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpucloud.spec.base import RuleViolations, SpecModel

# EKS versions in standard or extended support on the catalog date; older ones cost extended-support fees
# or cannot be created.
SUPPORTED_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
KubernetesVersion = Literal["1.32", "1.33", "1.34", "1.35", "1.36"]
LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
DEFAULT_LOG_TYPES: tuple[LogType, ...] = ("api", "audit", "authenticator")


class SystemNodeGroupSpec(SpecModel):
    """Small on-demand CPU node group for cluster services (CoreDNS, controllers)."""

    instance_type: str = Field(default="m7i.xlarge", description="CPU instance type for system pods.")
    min_size: int = Field(default=2, ge=1, description="Fewest system nodes (2 keeps CoreDNS available).")
    desired_size: int = Field(default=2, ge=1, description="System nodes at creation.")
    max_size: int = Field(default=4, ge=1, le=100, description="Most system nodes.")


class ClusterSpec(SpecModel):
    """The EKS control plane and what every node group relies on."""

    kubernetes_version: KubernetesVersion = Field(description="EKS Kubernetes version (minor), e.g. '1.34'.")
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
    admin_principal_arns: list[str] = Field(
        default_factory=list, description="IAM role/user ARNs granted cluster admin through access entries."
    )
    system_node_group: SystemNodeGroupSpec = Field(
        default_factory=SystemNodeGroupSpec, description="CPU node group for cluster services."
    )

    @model_validator(mode="after")
    def _rules(self) -> ClusterSpec:
        rules = RuleViolations()
        if self.endpoint_public_access and not self.public_access_cidrs:
            rules.add(
                "publicAccessCidrs",
                "a public endpoint needs an explicit CIDR allow-list; list your office/VPN CIDRs or set "
                "endpointPublicAccess: false",
            )
        for i, cidr in enumerate(self.public_access_cidrs):
            if cidr in ("0.0.0.0/0", "::/0"):
                rules.add(f"publicAccessCidrs.{i}", f"{cidr} opens the API to the internet; list specific CIDRs")
        missing = {"audit", "authenticator"} - set(self.log_types)
        if missing:
            rules.add("logTypes", f"must include {sorted(missing)} (who did what, and who logged in)")
        s = self.system_node_group
        if not s.min_size <= s.desired_size <= s.max_size:
            rules.add("systemNodeGroup.desiredSize", "sizes must satisfy minSize <= desiredSize <= maxSize")
        rules.raise_if_any()
        return self
