"""What components hand each other. Cross-resource values are constructor arguments, never spec fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi


@dataclass(frozen=True)
class ClusterHandle:
    """Everything node pools, storage and add-ons need from the network and the EKS cluster.

    Built by the platform from GpuNetwork + GpuCluster; team stacks build one from StackReference outputs;
    tests build one from literal strings.
    """

    name: pulumi.Input[str]
    kubernetes_version: str
    endpoint: pulumi.Input[str]
    certificate_authority: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    vpc_cidr: pulumi.Input[str]
    subnet_ids_by_az: Mapping[str, pulumi.Input[str]]
    node_security_group_id: pulumi.Input[str]
    cluster_security_group_id: pulumi.Input[str]
    efa_security_group_id: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    node_role_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_provider_url: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    k8s_provider: pulumi.ProviderResource | None = None
    extra: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)

    def subnet_ids(self, azs: list[str] | None = None) -> list[pulumi.Input[str]]:
        """Private subnet ids, optionally only those in the given AZs (EFA and reserved pools use one AZ)."""
        if azs is None:
            return list(self.subnet_ids_by_az.values())
        missing = [az for az in azs if az not in self.subnet_ids_by_az]
        if missing:
            raise ValueError(f"no private subnet in {missing}; the platform's AZs are {list(self.subnet_ids_by_az)}")
        return [self.subnet_ids_by_az[az] for az in azs]
