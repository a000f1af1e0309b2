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
from gpucloud.spec.network import NetworkSpec
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
        existing = self.network.existing
        if existing is not None and len(existing.private_subnet_ids) < len(self.availability_zones):
            rules.add(
                "network.existing.privateSubnetIds",
                f"give at least one private subnet per AZ ({len(self.availability_zones)} AZs)",
            )
        rules.extend(self.addons.pool_rules(self.node_pools))
        rules.raise_if_any()
        return self

    def pool(self, name: str) -> NodePoolSpec:
        return next(p for p in self.node_pools if p.name == name)
