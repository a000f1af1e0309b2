"""The whole stack spec: one environment's GPU platform, read from the stack file's `gpucloud:platform` object."""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpucloud import catalog
from gpucloud.spec.addons import AddonsSpec
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.budget import BudgetSpec
from gpucloud.spec.cluster import ClusterSpec
from gpucloud.spec.common import Name, TagMap
from gpucloud.spec.network import NetworkSpec, SubnetLayoutError
from gpucloud.spec.pools import NodePoolSpec
from gpucloud.spec.storage import StorageSpec

Environment = Literal["dev", "staging", "prod"]
REQUIRED_TAGS = ("CostCenter", "Team", "Project")
_AZ = re.compile(r"^(?P<region>[a-z]{2}(-[a-z]+)+-\d)(?P<zone>[a-z])$")


class PlatformSpec(SpecModel):
    """One environment's GPU platform on AWS."""

    name: Name = Field(description="Platform name, the prefix of every resource name (e.g. gpucloud-prod).")
    environment: Environment = Field(description="Environment: dev, staging or prod (guardrails differ).")
    region: str = Field(description="AWS region, e.g. us-east-1.")
    availability_zones: list[str] = Field(
        min_length=1, max_length=6, description="AZs the platform spans, e.g. [us-east-1a, us-east-1b]."
    )
    tags: TagMap = Field(description="Cost-allocation tags on every resource; CostCenter, Team, Project required.")
    network: NetworkSpec = Field(default_factory=NetworkSpec, description="VPC and subnets.")
    cluster: ClusterSpec = Field(description="EKS cluster.")
    node_pools: list[NodePoolSpec] = Field(min_length=1, description="GPU node pools (at least one).")
    storage: StorageSpec | None = Field(default=None, description="S3 buckets and FSx for Lustre.")
    budget: BudgetSpec = Field(description="Monthly budget and alerts.")
    addons: AddonsSpec = Field(
        default_factory=AddonsSpec,
        description="Kubernetes add-ons: GPU/EFA device plugins, observability, autoscaling, acceptance tests.",
    )

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        regions = catalog.ec2_regions()
        if value not in regions:
            import difflib

            near = difflib.get_close_matches(value, sorted(regions), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ValueError(f"unknown AWS region '{value}'{hint}; regions are named like us-east-1")
        return value

    @property
    def all_tags(self) -> dict[str, str]:
        return {**self.tags, "Env": self.environment, "ManagedBy": "gpucloud"}

    @model_validator(mode="after")
    def _rules(self) -> PlatformSpec:
        rules = RuleViolations()
        for i, az in enumerate(self.availability_zones):
            m = _AZ.match(az)
            if not m or m.group("region") != self.region:
                rules.add(f"availabilityZones.{i}", f"'{az}' is not an AZ of {self.region} (e.g. {self.region}a)")
        if len(set(self.availability_zones)) != len(self.availability_zones):
            rules.add("availabilityZones", "AZs are listed more than once")
        missing = [t for t in REQUIRED_TAGS if t not in self.tags]
        if missing:
            rules.add("tags", f"missing required cost-allocation tags {missing}")
        dupes = sorted(n for n, c in Counter(p.name for p in self.node_pools).items() if c > 1)
        if dupes:
            rules.add("nodePools", f"pool names must be unique; repeated: {dupes}")
        for i, pool in enumerate(self.node_pools):
            outside = [az for az in pool.availability_zones or [] if az not in self.availability_zones]
            if outside:
                rules.add(
                    f"nodePools.{i}.availabilityZones",
                    f"{outside} are not among the platform's availabilityZones {self.availability_zones}",
                )
        rules.extend(self._network_and_cluster_rules())
        rules.extend(self._storage_rules())
        rules.extend(self.addons.pool_rules(self.node_pools))
        rules.raise_if_any()
        return self

    def _network_and_cluster_rules(self) -> list[tuple[str, str]]:
        """Rules that tie the network and cluster sections to the platform's AZs, region and environment."""
        problems: list[tuple[str, str]] = []
        azs = self.availability_zones
        existing = self.network.existing
        if existing is not None:
            mapped = list(existing.private_subnet_ids)
            missing = [az for az in azs if az not in mapped]
            extra = [az for az in mapped if az not in azs]
            if missing:
                problems.append(
                    ("network.existing.privateSubnetIds", f"no private subnet for {missing}; map every AZ to one")
                )
            if extra:
                problems.append(
                    (
                        "network.existing.privateSubnetIds",
                        f"{extra} are not among availabilityZones {azs}; remove them or add the AZs",
                    )
                )
        elif len(set(azs)) == len(azs):
            try:
                self.network.subnet_layout(azs)
            except SubnetLayoutError as exc:
                problems += [(f"network.{field}", message) for field, message in exc.problems]
        kms = self.cluster.kms_key_arn
        if kms is not None and kms.split(":")[3] != self.region:
            problems.append(
                ("cluster.kmsKeyArn", f"the key is in {kms.split(':')[3]}; EKS needs a key in {self.region}")
            )
        if self.environment == "prod" and not self.cluster.admin_principal_arns:
            problems.append(
                (
                    "cluster.adminPrincipalArns",
                    "prod clusters do not grant the creator admin; list the IAM roles that administer the cluster",
                )
            )
        return problems

    def _storage_rules(self) -> list[tuple[str, str]]:
        """FSx is single-AZ: its AZ must be a platform AZ and the AZ of the pool it feeds."""
        fsx = self.storage.fsx if self.storage is not None else None
        if fsx is None or not fsx.enabled:
            return []
        out: list[tuple[str, str]] = []
        where = "storage.fsx"
        az = fsx.availability_zone
        if az is not None and az not in self.availability_zones:
            out.append(
                (f"{where}.availabilityZone", f"'{az}' is not one of the platform's AZs {self.availability_zones}")
            )
        if fsx.feeds_pool is None:
            if az is None:
                out.append(
                    (where, "set availabilityZone (the AZ of the GPU pool it feeds) or feedsPool (that pool's name)")
                )
            return out
        pools = {p.name: p for p in self.node_pools}
        pool = pools.get(fsx.feeds_pool)
        if pool is None:
            out.append((f"{where}.feedsPool", f"no node pool named '{fsx.feeds_pool}'; pools are {sorted(pools)}"))
            return out
        pool_azs = pool.availability_zones or list(self.availability_zones)
        if az is not None and az not in pool_azs:
            out.append(
                (
                    f"{where}.availabilityZone",
                    f"'{az}' differs from the AZ of pool '{pool.name}' it feeds ({', '.join(pool_azs)}); FSx serves "
                    "one AZ and cross-AZ reads are slower and billed: set it to "
                    f"{pool_azs[0] if len(pool_azs) == 1 else 'one of ' + str(pool_azs)}",
                )
            )
        elif az is None and len(pool_azs) > 1:
            out.append(
                (
                    f"{where}.availabilityZone",
                    f"pool '{pool.name}' spans {pool_azs}; FSx lives in one AZ: name it (one of those), or pin the "
                    "pool to one AZ",
                )
            )
        return out

    @property
    def fsx_availability_zone(self) -> str | None:
        """The AZ the file system lives in: as given, else the single AZ of the pool it feeds."""
        fsx = self.storage.fsx if self.storage is not None else None
        if fsx is None:
            return None
        if fsx.availability_zone is not None:
            return fsx.availability_zone
        if fsx.feeds_pool is not None:
            azs = self.pool(fsx.feeds_pool).availability_zones or list(self.availability_zones)
            return azs[0] if len(azs) == 1 else None
        return None

    def controller_endpoint_services(self) -> dict[str, str]:
        """Interface endpoint services the enabled controllers call, each with the controller that needs it.

        Sources: EKS user guide "Deploy private clusters with limited internet access" (the endpoints nodes and
        add-ons need) and Karpenter's troubleshooting guide for private clusters (sqs for interruption handling,
        ssm for AMI resolution, eks for cluster discovery); AMP documents aps-workspaces for remote write/query.
        """
        if not (self.network.controller_endpoints and self.network.create_interface_endpoints):
            return {}
        needs: dict[str, str] = {}
        pools = self.node_pools
        karpenter = any(p.backend == "karpenter" for p in pools)
        if karpenter or any(p.backend != "karpenter" and p.needs_interruption_handling for p in pools):
            needs["sqs"] = "interruption queue consumers (Karpenter / aws-node-termination-handler)"
        if karpenter:
            needs["eks"] = "Karpenter (DescribeCluster)"
            needs["ssm"] = "Karpenter (EKS-optimized AMI parameters)"
        if self.addons.resolved_autoscaler(pools) == "cluster-autoscaler":
            needs["autoscaling"] = "cluster-autoscaler (Auto Scaling group reads and resizes)"
        obs = self.addons.observability
        if obs.metrics == "amp":
            needs["aps-workspaces"] = "Amazon Managed Prometheus remote write and KEDA queries"
        if obs.enable_container_insights:
            needs["monitoring"] = "CloudWatch Container Insights agent"
        return needs

    def pool(self, name: str) -> NodePoolSpec:
        return next(p for p in self.node_pools if p.name == name)
