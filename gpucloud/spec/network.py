"""Network section of the stack spec: VPC layout, NAT, endpoints, flow logs, or an existing VPC.

Subnet CIDRs are carved from `vpcCidr` deterministically (`carve_subnets`), so the same spec always gives the
same layout; the spec model, the platform-level rules and the GpuNetwork component all use that one function.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpucloud.spec.base import RuleViolations, SpecModel

# Interface endpoints private nodes need when NAT is absent or should be bypassed. eks-auth serves Pod Identity
# (AssumeRoleForPodIdentity), which the vpc-cni add-on and team pods use; ssmmessages/ec2messages carry SSM
# Session Manager shells, the replacement for SSH on nodes.
InterfaceService = Literal[
    "ecr.api",
    "ecr.dkr",
    "sts",
    "ec2",
    "ssm",
    "ssmmessages",
    "ec2messages",
    "logs",
    "eks",
    "eks-auth",
    "elasticloadbalancing",
    "autoscaling",
    "sqs",
    "monitoring",
    "fsx",
    "kms",
    "aps",
    "aps-workspaces",
]
DEFAULT_INTERFACE_SERVICES: tuple[InterfaceService, ...] = (
    "ecr.api",
    "ecr.dkr",
    "sts",
    "ec2",
    "ssm",
    "ssmmessages",
    "ec2messages",
    "logs",
    "eks-auth",
)
# The values CloudWatch Logs accepts for retentionInDays.
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
                      3288, 3653)  # fmt: skip
POD_CIDR_SPACES = (ipaddress.IPv4Network("100.64.0.0/10"), ipaddress.IPv4Network("198.19.0.0/16"))
_SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8}([0-9a-f]{9})?$")
_RTB_ID = re.compile(r"^rtb-[0-9a-f]{8}([0-9a-f]{9})?$")


def check_log_retention(value: int) -> int:
    if value not in LOG_RETENTION_DAYS:
        near = min(LOG_RETENTION_DAYS, key=lambda d: abs(d - value))
        raise ValueError(f"CloudWatch Logs accepts only {list(LOG_RETENTION_DAYS)} days; use e.g. {near}")
    return value


class ExistingVpcSpec(SpecModel):
    """Use a VPC and subnets that already exist instead of creating them (only the EFA SG and endpoints are made)."""

    vpc_id: str = Field(pattern=r"^vpc-[0-9a-f]{8}([0-9a-f]{9})?$", description="Existing VPC id (vpc-...).")
    private_subnet_ids: dict[str, str] = Field(
        min_length=1,
        description="Private node subnet per AZ, as a mapping AZ -> subnet id (one entry per platform AZ); "
        "a mapping because EFA pools, FSx and reservations must pick the subnet of one exact AZ.",
    )
    private_route_table_ids: list[str] = Field(
        default_factory=list,
        description="Route tables of the private subnets; when given, the S3 gateway endpoint is attached to them.",
    )

    @field_validator("private_subnet_ids")
    @classmethod
    def _subnet_ids(cls, ids: dict[str, str]) -> dict[str, str]:
        bad = [f"{az}: {sid}" for az, sid in ids.items() if not _SUBNET_ID.match(sid)]
        if bad:
            raise ValueError(f"not subnet ids: {bad}; ids look like subnet-0123456789abcdef0")
        if len(set(ids.values())) != len(ids):
            raise ValueError("one subnet is listed for two AZs; a subnet lives in exactly one AZ")
        return ids

    @field_validator("private_route_table_ids")
    @classmethod
    def _rtb_ids(cls, ids: list[str]) -> list[str]:
        bad = [i for i in ids if not _RTB_ID.match(i)]
        if bad:
            raise ValueError(f"not route table ids: {bad}; ids look like rtb-0123456789abcdef0")
        return ids


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
    private_subnet_cidrs: list[str] | None = Field(
        default=None,
        description="Explicit private subnet CIDRs, one per AZ in availabilityZones order (overrides "
        "privateSubnetPrefix carving).",
    )
    public_subnet_cidrs: list[str] | None = Field(
        default=None,
        description="Explicit public subnet CIDRs, one per AZ in availabilityZones order (overrides "
        "publicSubnetPrefix carving).",
    )
    create_public_subnets: bool = Field(
        default=True,
        description="Create public subnets (and the internet gateway) for NAT gateways and internet-facing "
        "load balancers; nodes never run there.",
    )
    nat_gateways: Literal["per-az", "single", "none"] = Field(
        default="per-az",
        description="NAT gateways: one per AZ (resilient), one shared (cheaper, for dev), or none (fully private).",
    )
    create_interface_endpoints: bool = Field(
        default=True,
        description="Create interface endpoints nodes in private subnets need (ECR api/dkr, STS, EC2, SSM, Logs, "
        "EKS Auth) with private DNS; they keep image pulls and AWS API calls off the NAT gateways.",
    )
    interface_endpoint_services: list[InterfaceService] = Field(
        default_factory=lambda: list(DEFAULT_INTERFACE_SERVICES),
        min_length=1,
        description="Services to create interface endpoints for (short names such as ecr.api, sts).",
    )
    controller_endpoints: bool = Field(
        default=True,
        description="Also create the interface endpoints of the AWS APIs the platform's own controllers call "
        "(sqs for interruption queues, autoscaling for cluster-autoscaler, eks/ssm for Karpenter, "
        "aps-workspaces for AMP, monitoring for Container Insights), derived from the rest of the spec; "
        "without them a private cluster's controllers fail at their first API call.",
    )
    create_s3_gateway_endpoint: bool = Field(
        default=True,
        description="S3 gateway endpoint on the private route tables (free; training data then never pays NAT "
        "processing charges).",
    )
    enable_flow_logs: bool = Field(default=True, description="Send VPC flow logs to a KMS-encrypted log group.")
    flow_log_traffic_type: Literal["ALL", "ACCEPT", "REJECT"] = Field(
        default="ALL", description="Which traffic flow logs record: ALL, ACCEPT or REJECT."
    )
    flow_log_retention_days: int = Field(
        default=90, description="Days CloudWatch Logs keeps flow logs (one of the values CloudWatch accepts)."
    )
    pod_cidr: str | None = Field(
        default=None,
        description="Secondary VPC CIDR for pod IPs (VPC CNI custom networking), e.g. 100.64.0.0/16: pods stop "
        "consuming the node subnets' addresses. Carved into one pod subnet per AZ.",
    )
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

    @field_validator("flow_log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return check_log_retention(value)

    @field_validator("interface_endpoint_services")
    @classmethod
    def _unique_services(cls, value: list[str]) -> list[str]:
        dupes = sorted({s for s in value if value.count(s) > 1})
        if dupes:
            raise ValueError(f"services listed more than once: {dupes}")
        return value

    @model_validator(mode="after")
    def _rules(self) -> NetworkSpec:
        rules = RuleViolations()
        if self.nat_gateways != "none" and not self.create_public_subnets and self.existing is None:
            rules.add(
                "natGateways",
                "NAT gateways live in public subnets; set createPublicSubnets: true or natGateways: none",
            )
        if self.nat_gateways == "none" and not self.create_interface_endpoints and self.existing is None:
            rules.add(
                "createInterfaceEndpoints",
                "with natGateways: none, nodes reach ECR, STS and EC2 only through interface endpoints; "
                "set createInterfaceEndpoints: true or choose natGateways: single",
            )
        for key, cidrs in (
            ("privateSubnetCidrs", self.private_subnet_cidrs),
            ("publicSubnetCidrs", self.public_subnet_cidrs),
        ):
            for i, cidr in enumerate(cidrs or []):
                try:
                    ipaddress.IPv4Network(cidr, strict=True)
                except ValueError as exc:
                    rules.add(f"{key}.{i}", f"'{cidr}' is not an IPv4 network CIDR such as 10.0.0.0/19 ({exc})")
        self._pod_cidr_rules(rules)
        rules.raise_if_any()
        return self

    def _pod_cidr_rules(self, rules: RuleViolations) -> None:
        if self.pod_cidr is None:
            return
        try:
            pods = ipaddress.IPv4Network(self.pod_cidr, strict=True)
        except ValueError as exc:
            rules.add("podCidr", f"'{self.pod_cidr}' is not an IPv4 network CIDR such as 100.64.0.0/16 ({exc})")
            return
        if self.existing is not None:
            rules.add("podCidr", "an existing VPC's CIDRs are managed with that VPC; associate the pod CIDR there")
        # EKS custom networking guidance: pod CIDRs from the shared address space (RFC 6598) or 198.19.0.0/16,
        # which do not collide with corporate RFC 1918 ranges; VPC secondary blocks are /16 to /28.
        if not any(pods.subnet_of(space) for space in POD_CIDR_SPACES):
            rules.add(
                "podCidr",
                f"{self.pod_cidr} is outside {[str(s) for s in POD_CIDR_SPACES]}; pick e.g. 100.64.0.0/16",
            )
        if not 16 <= pods.prefixlen <= 24:
            rules.add("podCidr", f"/{pods.prefixlen} is outside /16../24; a /16 gives each AZ thousands of pod IPs")
        try:
            overlaps = pods.overlaps(ipaddress.IPv4Network(self.vpc_cidr))
        except ValueError:
            overlaps = False
        if overlaps:
            rules.add("podCidr", f"{self.pod_cidr} overlaps vpcCidr {self.vpc_cidr}; pick a disjoint block")

    def pod_subnets(self, azs: Sequence[str]) -> dict[str, str]:
        """One pod subnet per AZ, the pod CIDR split evenly (power-of-two parts), in AZ order."""
        if self.pod_cidr is None:
            return {}
        pods = ipaddress.IPv4Network(self.pod_cidr)
        bits = max(0, (len(azs) - 1).bit_length())
        parts = list(pods.subnets(prefixlen_diff=bits))
        return {az: str(parts[i]) for i, az in enumerate(azs)}

    def subnet_layout(self, azs: Sequence[str]) -> SubnetLayout:
        """The subnet CIDRs of this network for these AZs; raises SubnetLayoutError listing every problem."""
        return carve_subnets(
            self.vpc_cidr,
            azs,
            self.private_subnet_prefix,
            self.public_subnet_prefix if self.create_public_subnets else None,
            private_cidrs=self.private_subnet_cidrs,
            public_cidrs=self.public_subnet_cidrs if self.create_public_subnets else None,
        )


@dataclass(frozen=True)
class SubnetLayout:
    """Subnet CIDRs per AZ, in the AZ order of the spec."""

    private: dict[str, str]
    public: dict[str, str]


class SubnetLayoutError(ValueError):
    """The requested subnets do not fit the VPC or overlap; `problems` are (spec field, message with the fix)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))


def carve_subnets(
    vpc_cidr: str,
    azs: Sequence[str],
    private_prefix: int,
    public_prefix: int | None,
    *,
    private_cidrs: Sequence[str] | None = None,
    public_cidrs: Sequence[str] | None = None,
) -> SubnetLayout:
    """Lay out one private (and optionally one public) subnet per AZ inside `vpc_cidr`.

    Carved blocks are taken largest first from the start of the VPC, each aligned to its own size, so nothing
    overlaps and adding a public prefix never moves a private subnet. Explicit CIDRs are used as given and
    only checked. Field paths in errors are relative to `network`.
    """
    vpc = ipaddress.IPv4Network(vpc_cidr)
    n = len(azs)
    problems: list[tuple[str, str]] = []
    explicit: dict[str, list[ipaddress.IPv4Network]] = {}
    for key, given in (("privateSubnetCidrs", private_cidrs), ("publicSubnetCidrs", public_cidrs)):
        if given is None:
            continue
        if len(given) != n:
            problems.append((key, f"give exactly one CIDR per AZ ({n} AZs: {list(azs)}), got {len(given)}"))
        nets = []
        for i, cidr in enumerate(given):
            net = ipaddress.IPv4Network(cidr)
            if not net.subnet_of(vpc):
                problems.append((f"{key}.{i}", f"{cidr} is outside vpcCidr {vpc_cidr}; pick a block inside it"))
            nets.append(net)
        explicit[key] = nets

    requests: list[tuple[str, int]] = []
    if private_cidrs is None:
        requests += [("private", private_prefix)] * n
    if public_prefix is not None and public_cidrs is None:
        requests += [("public", public_prefix)] * n
    carved: dict[str, list[ipaddress.IPv4Network]] = {"private": [], "public": []}
    taken = [net for nets in explicit.values() for net in nets]
    cursor = int(vpc.network_address)
    end = int(vpc.broadcast_address) + 1
    for kind, prefix in sorted(requests, key=lambda r: r[1]):
        size = 2 ** (32 - prefix)
        while True:
            cursor = -(-cursor // size) * size
            candidate = ipaddress.IPv4Network((cursor, prefix))
            if cursor + size > end or not any(candidate.overlaps(t) for t in taken):
                break
            cursor += size
        if cursor + size > end:
            field = "privateSubnetPrefix" if kind == "private" else "publicSubnetPrefix"
            total = sum(2 ** (32 - p) for _, p in requests)
            problems.append(
                (
                    field,
                    f"{n} private /{private_prefix}"
                    + (f" and {n} public /{public_prefix}" if public_prefix is not None else "")
                    + f" subnets ({total} addresses) do not fit in vpcCidr {vpc_cidr} ({vpc.num_addresses}); "
                    "use a longer prefix or a larger vpcCidr",
                )
            )
            break
        carved[kind].append(candidate)
        taken.append(candidate)
        cursor += size

    private = explicit.get("privateSubnetCidrs", carved["private"])
    public = explicit.get("publicSubnetCidrs", carved["public"])
    labelled = [("privateSubnetCidrs", i, net) for i, net in enumerate(private)] + [
        ("publicSubnetCidrs", i, net) for i, net in enumerate(public)
    ]
    for a in range(len(labelled)):
        for b in range(a + 1, len(labelled)):
            (ka, ia, na), (kb, ib, nb) = labelled[a], labelled[b]
            if na.overlaps(nb):
                problems.append((f"{kb}.{ib}", f"{nb} overlaps {ka}.{ia} ({na}); give each subnet its own block"))
    if problems:
        raise SubnetLayoutError(problems)
    return SubnetLayout(
        private={az: str(net) for az, net in zip(azs, private)},
        public={az: str(net) for az, net in zip(azs, public)},
    )
