"""One ML team's tenancy on a shared platform: namespace, GPU/CPU/memory quota, container defaults, an IAM role
its pods assume through EKS Pod Identity, and its members' access (EKS access entries bound to namespace RBAC).
Team stacks create it from the platform's StackReference outputs."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.addons.kueue import KUEUE_API, team_cluster_queue_spec
from gpucloud.components.base import ComponentConfig, child, named_tags, pod_identity_trust
from gpucloud.components.storage.csi import static_lustre_claim
from gpucloud.fleet import labels as L
from gpucloud.spec.team import TeamSpec

GPU_RESOURCE = L.NVIDIA_GPU
# The API server defaults a Container LimitRange item's missing `default` to its `max`, then a missing
# `defaultRequest` to that `default` (kubernetes pkg/apis/core/v1/defaults.go, SetDefaults_LimitRangeItem).
# A `max` of 4 GPUs alone therefore gave every container that asks for none a request and limit of 4 GPUs:
# sidecars, data-prep jobs and notebooks blocked on GPUs and drained the quota. An explicit 0 default keeps
# such containers off GPUs; it passes LimitRange validation (defaultRequest <= default <= max) and a
# container's extended resources then still have request == limit, as they must.
NO_GPUS = "0"
# Kubernetes' built-in user-facing ClusterRoles, bound inside the team namespace only.
MEMBER_CLUSTER_ROLES = {"admin": "admin", "edit": "edit", "view": "view"}


def member_group(team: str, access: str) -> str:
    """Kubernetes group an access entry puts a member in (EKS rejects groups starting with `system:`)."""
    return f"gpucloud:{team}:{access}"


def _label_value(value: str) -> str:
    """A tag value as a Kubernetes label value: [A-Za-z0-9._-], alphanumeric at both ends, at most 63 chars."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", value)[:63].strip("-._")


def _slug(arn: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", arn.rsplit("/", 1)[-1].lower()).strip("-") or "principal"


class GpuTeamConfig(ComponentConfig):
    """Inputs of GpuTeam."""

    team: TeamSpec = Field(description="The team's namespace, quota, limits and service account.")


class GpuTeam(pulumi.ComponentResource):
    """Namespace + ResourceQuota + LimitRange + ServiceAccount, and the team's Pod Identity IAM role."""

    def __init__(
        self,
        name: str,
        config: GpuTeamConfig,
        *,
        cluster_name: pulumi.Input[str],
        k8s_provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:team:GpuTeam", name, None, opts)
        team = config.team
        tags = config.tags
        k8s_opts = child(self, provider=k8s_provider)
        labels = {"gpucloud.io/team": team.name, "app.kubernetes.io/managed-by": "gpucloud"}
        # OpenCost aggregates by namespace labels: the team's cost center rides on its namespace.
        cost_center = _label_value(team.tags.get("CostCenter", ""))
        namespace_labels = {**labels, **({"gpucloud.io/cost-center": cost_center} if cost_center else {})}

        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=team.namespace,
                labels={
                    **namespace_labels,
                    # Baseline blocks privileged and host-namespace pods; GPUs and EFA arrive through device
                    # plugins, which baseline allows.
                    "pod-security.kubernetes.io/enforce": "baseline",
                    "pod-security.kubernetes.io/warn": "restricted",
                },
            ),
            opts=k8s_opts,
        )
        ns = self.namespace.metadata.apply(lambda m: m.name if m and m.name else team.namespace)
        q = team.quota
        # The spec derives the GPU ceiling from the team's own workloads when it is not given, and rejects one
        # below their peak (gpucloud/spec/team.py), so the quota never keeps the team's own jobs Pending.
        gpus = team.quota_gpus if team.quota_gpus is not None else 0
        self.quota = k8s.core.v1.ResourceQuota(
            f"{name}-quota",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{team.name}-quota", namespace=ns, labels=labels),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                # Extended resources such as GPUs can only be capped through requests.<name>.
                hard={"requests.nvidia.com/gpu": str(gpus), "requests.cpu": q.cpu, "requests.memory": q.memory}
            ),
            opts=k8s_opts,
        )
        lim = team.limits
        self.limit_range = k8s.core.v1.LimitRange(
            f"{name}-limits",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{team.name}-limits", namespace=ns, labels=labels),
            spec=k8s.core.v1.LimitRangeSpecArgs(
                limits=[
                    k8s.core.v1.LimitRangeItemArgs(
                        type="Container",
                        # No default CPU limit: CFS throttling slows data loaders feeding GPUs.
                        default_request={
                            "cpu": lim.default_cpu_request,
                            "memory": lim.default_memory_request,
                            GPU_RESOURCE: NO_GPUS,
                        },
                        default={"memory": lim.default_memory_limit, GPU_RESOURCE: NO_GPUS},
                        max={GPU_RESOURCE: str(lim.max_gpus_per_container)},
                    )
                ]
            ),
            opts=k8s_opts,
        )
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=team.service_account, namespace=ns, labels=labels),
            opts=k8s_opts,
        )
        self.pod_role = aws.iam.Role(
            f"{name}-pod-role",
            description=f"{team.name}: pods of {team.namespace}/{team.service_account} through EKS Pod Identity",
            assume_role_policy=pod_identity_trust(),
            tags=named_tags(tags, f"{team.name}-pods"),
            opts=child(self),
        )
        self.pod_identity = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster_name,
            namespace=ns,
            service_account=team.service_account,
            role_arn=self.pod_role.arn,
            tags=named_tags(tags, f"{team.name}-pods"),
            opts=child(self, depends_on=[self.service_account]),
        )
        self.access_entries = self._members(name, team, tags, ns, cluster_name, k8s_opts)
        self.namespace_name = ns
        self.service_account_name = team.service_account
        self.pod_role_arn = self.pod_role.arn
        self.pod_role_name = self.pod_role.name
        self.register_outputs(
            {
                "namespace_name": self.namespace_name,
                "service_account_name": self.service_account_name,
                "pod_role_arn": self.pod_role_arn,
                "pod_role_name": self.pod_role_name,
            }
        )

    def _members(
        self,
        name: str,
        team: TeamSpec,
        tags: dict[str, str],
        ns: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        k8s_opts: pulumi.ResourceOptions,
    ) -> list[aws.eks.AccessEntry]:
        """An access entry per member, in a group bound to admin/edit/view in the team namespace and nowhere else.

        No access policy is associated: EKS authorizes the entry through Kubernetes RBAC on its groups, so the
        rights are the RoleBindings below, visible with kubectl in the namespace they apply to.
        """
        entries: list[aws.eks.AccessEntry] = []
        seen: set[str] = set()
        for i, member in enumerate(team.members):
            slug = _slug(member.principal_arn)
            slug = slug if slug not in seen else f"{slug}-{i}"
            seen.add(slug)
            entries.append(
                aws.eks.AccessEntry(
                    f"{name}-member-{slug}",
                    cluster_name=cluster_name,
                    principal_arn=member.principal_arn,
                    type="STANDARD",
                    kubernetes_groups=[member_group(team.name, member.access)],
                    tags=named_tags(tags, f"{team.name}-member-{slug}"),
                    opts=child(self),
                )
            )
        for access in sorted({m.access for m in team.members}):
            k8s.rbac.v1.RoleBinding(
                f"{name}-{access}-binding",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=f"{team.name}-{access}",
                    namespace=ns,
                    labels={"gpucloud.io/team": team.name, "app.kubernetes.io/managed-by": "gpucloud"},
                ),
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=MEMBER_CLUSTER_ROLES[access]
                ),
                subjects=[
                    k8s.rbac.v1.SubjectArgs(
                        api_group="rbac.authorization.k8s.io", kind="Group", name=member_group(team.name, access)
                    )
                ],
                opts=k8s_opts,
            )
        return entries


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
