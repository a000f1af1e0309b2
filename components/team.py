"""One ML team's tenancy on a shared platform: namespace, GPU/CPU/memory quota, container defaults, an IAM role
its pods assume through EKS Pod Identity, and its members' access (EKS access entries bound to namespace RBAC).
Team stacks create it from the platform's StackReference outputs."""

from __future__ import annotations

import re

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.base import ComponentConfig, child, named_tags
from gpucloud.components.pod_identity import pod_identity_association, pod_identity_role

# The team components a team stack composes, importable from here as they were before each had its module.
from gpucloud.components.team_queue import TeamQueue, TeamQueueConfig
from gpucloud.components.team_volume import TeamLustreVolume, TeamLustreVolumeConfig
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
        self.pod_role = pod_identity_role(
            f"{name}-pod-role",
            description=f"{team.name}: pods of {team.namespace}/{team.service_account} through EKS Pod Identity",
            tags=named_tags(tags, f"{team.name}-pods"),
            opts=child(self),
        )
        self.pod_identity = pod_identity_association(
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


__all__ = [
    "GpuTeam",
    "GpuTeamConfig",
    "TeamLustreVolume",
    "TeamLustreVolumeConfig",
    "TeamQueue",
    "TeamQueueConfig",
    "member_group",
]
