"""Network section of the stack spec: VPC layout, NAT, endpoints, flow logs, or an existing VPC."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator

from gpucloud.spec.base import SpecModel


class ExistingVpcSpec(SpecModel):
    """Use a VPC and subnets that already exist instead of creating them."""

    vpc_id: str = Field(pattern=r"^vpc-[0-9a-f]{8,17}$", description="Existing VPC id (vpc-...).")
    private_subnet_ids: list[str] = Field(
        min_length=1, description="Private subnet ids for nodes, one or more per AZ the platform uses."
    )
    public_subnet_ids: list[str] = Field(default_factory=list, description="Public subnet ids for load balancers.")


class NetworkSpec(SpecModel):
    """VPC across the platform's AZs with private node subnets and public subnets for NAT and load balancers."""

    vpc_cidr: str = Field(default="10.0.0.0/16", description="IPv4 CIDR of the VPC (a /16 leaves room for pod IPs).")
    private_subnet_prefix: int = Field(
        default=19,
        ge=16,
        le=28,
        description="Prefix length of each private subnet (one per AZ); VPC-CNI gives "
        "every pod a VPC IP, so keep these large.",
    )
    public_subnet_prefix: int = Field(
        default=24, ge=16, le=28, description="Prefix length of each public subnet (NAT and load balancers only)."
    )
    nat_gateways: Literal["per-az", "single", "none"] = Field(
        default="per-az",
        description="NAT gateways: one per AZ (resilient), one shared (cheaper, for dev), or none (fully private).",
    )
    interface_endpoints: bool = Field(
        default=True,
        description="Create interface endpoints nodes in private subnets need (ECR api/dkr, STS, EC2, SSM, Logs).",
    )
    flow_logs: bool = Field(default=True, description="Send VPC flow logs to CloudWatch Logs.")
    existing: ExistingVpcSpec | None = Field(default=None, description="Use an existing VPC instead of creating one.")

    @field_validator("vpc_cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            net = ipaddress.IPv4Network(value, strict=True)
        except ValueError as exc:
            raise ValueError(f"'{value}' is not an IPv4 network CIDR such as 10.0.0.0/16 ({exc})") from None
        if not 16 <= net.prefixlen <= 24:
            raise ValueError(f"VPC CIDR prefix must be /16 to /24 (AWS limits), got /{net.prefixlen}")
        return value
