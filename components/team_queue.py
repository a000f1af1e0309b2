"""TeamQueue: one team's Kueue ClusterQueue (in the platform's cohort, up to the team quota) and LocalQueue."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.addons.kueue import KUEUE_API, team_cluster_queue_spec
from gpucloud.components.base import ComponentConfig, child
from gpucloud.spec.team import TeamSpec


class TeamQueueConfig(ComponentConfig):
    """Inputs of TeamQueue."""

    team: TeamSpec = Field(description="The team: namespace, quota and the queue section.")
    cohort: Any = Field(description="The platform's Kueue cohort (platform output kueueCohort; Input[str]).")
    flavours: Any = Field(
        description="Flavour names per platform pool (platform output kueueFlavours; Input[dict[str, list[str]]])."
    )


class TeamQueue(pulumi.ComponentResource):
    """The team's Kueue ClusterQueue (in the platform's cohort, borrowing up to the team quota) and LocalQueue."""

    def __init__(
        self,
        name: str,
        config: TeamQueueConfig,
        *,
        k8s_provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:team:TeamQueue", name, None, opts)
        team = config.team
        queue = team.queue
        assert queue is not None
        pools = list(queue.pools or ([team.training.pool] if team.training is not None else []))
        gpus = team.quota_gpus or 0
        weight = f"{queue.fair_share_weight:g}"

        def spec(args: list[Any]) -> dict[str, Any]:
            cohort, by_pool = args
            missing = [p for p in pools if p not in (by_pool or {})]
            if missing:
                # Raised at deploy (the platform output is only known then); plans see the offline value.
                raise ValueError(
                    f"team {team.name}: queue pools {missing} have no Kueue flavour on the platform "
                    f"(flavoured pools: {sorted(by_pool or {})}); enable addons.kueue there or fix queue.pools"
                )
            names = [f for p in pools for f in by_pool[p]]
            return team_cluster_queue_spec(
                cohort, team.namespace, names, gpus, team.quota.cpu, team.quota.memory, weight
            )

        labels = {"gpucloud.io/team": team.name, "app.kubernetes.io/managed-by": "gpucloud"}
        k8s_opts = child(self, provider=k8s_provider)
        self.cluster_queue_name = team.name
        self.cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-cluster-queue",
            api_version=KUEUE_API,
            kind="ClusterQueue",
            metadata={"name": self.cluster_queue_name, "labels": labels},
            spec=pulumi.Output.all(config.cohort, config.flavours).apply(spec),
            opts=k8s_opts,
        )
        self.local_queue_name = queue.name or f"{team.name}-queue"
        self.local_queue = k8s.apiextensions.CustomResource(
            f"{name}-local-queue",
            api_version=KUEUE_API,
            kind="LocalQueue",
            metadata={"name": self.local_queue_name, "namespace": team.namespace, "labels": labels},
            spec={"clusterQueue": self.cluster_queue_name},
            opts=child(self, provider=k8s_provider, depends_on=[self.cluster_queue]),
        )
        self.register_outputs(
            {"cluster_queue_name": self.cluster_queue_name, "local_queue_name": self.local_queue_name}
        )
