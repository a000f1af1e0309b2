"""TeamLustreVolume: the platform's FSx for Lustre file system, claimable from one team's namespace."""

from __future__ import annotations

import pulumi
from pydantic import Field

from gpucloud.components.base import ComponentConfig, child
from gpucloud.components.storage.csi import static_lustre_claim
from gpucloud.spec.team import TeamSpec


class TeamLustreVolumeConfig(ComponentConfig):
    """Inputs of TeamLustreVolume."""

    team: TeamSpec = Field(description="The team whose namespace gets the claim.")


class TeamLustreVolume(pulumi.ComponentResource):
    """The platform's FSx for Lustre file system, claimable from the team's namespace.

    A claim is namespaced and the platform's own claim lives in its namespace, so the team gets a second static
    PersistentVolume on the same file system (ReadWriteMany, reclaim Retain: deleting it never touches data).
    """

    def __init__(
        self,
        name: str,
        config: TeamLustreVolumeConfig,
        *,
        file_system_id: pulumi.Input[str],
        dns_name: pulumi.Input[str],
        mount_name: pulumi.Input[str],
        capacity_gib: pulumi.Input[float],
        k8s_provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:team:TeamLustreVolume", name, None, opts)
        team = config.team
        claim_name = f"{team.name}-fsx-lustre"
        self.persistent_volume, self.claim = static_lustre_claim(
            name,
            namespace=team.namespace,
            claim_name=claim_name,
            pv_name=claim_name,
            labels={"gpucloud/storage": "fsx-lustre", "gpucloud.io/team": team.name},
            file_system_id=file_system_id,
            dns_name=dns_name,
            mount_name=mount_name,
            capacity_gib=capacity_gib,
            pv_opts=child(self, provider=k8s_provider),
            pvc_opts=lambda _pv: child(self, provider=k8s_provider),
        )
        self.claim_name = claim_name
        self.register_outputs({"claim_name": claim_name})
