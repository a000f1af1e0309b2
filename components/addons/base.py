"""The plumbing every add-on mixin of GpuAddons shares: namespaces, pinned Helm releases, Pod Identity roles."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpucloud.components.base import account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.pod_identity import pod_identity_association, pod_identity_role
from gpucloud.components.releases import helm_release


class AddonsBase(pulumi.ComponentResource):
    """State and helpers of GpuAddons that its concern mixins (devices, observability, ...) use."""

    _name: str
    _config: Any
    _cluster: ClusterHandle
    releases: dict[str, k8s.helm.v3.Release]
    namespaces: dict[str, k8s.core.v1.Namespace]
    gpu_namespace: str
    monitoring_namespace: str
    autoscaler: str
    # Outputs the concern mixins fill in (None where the concern is switched off).
    prometheus_server_url: pulumi.Output[str] | str | None
    alert_topic_arn: pulumi.Input[str] | None
    storage_class: k8s.storage.v1.StorageClass | None
    ebs_csi_driver: aws.eks.Addon | None
    keda_trigger_authentication: str | None
    amp_workspace_arn: pulumi.Output[str] | None
    amp_workspace_id: pulumi.Output[str] | None
    scraper: aws.amp.Scraper | None
    prometheus_rule: k8s.apiextensions.CustomResource | None
    dashboard: k8s.core.v1.ConfigMap | None
    container_insights: aws.eks.Addon | None
    log_group_name: pulumi.Output[str] | None
    cluster_autoscaler_role_arn: pulumi.Output[str] | None
    mpi_operator: dict[str, pulumi.CustomResource]

    def _k8s(self, **kwargs: Any) -> pulumi.ResourceOptions:
        return child(self, provider=self._cluster.k8s_provider, **kwargs)

    def _namespace(self, role: str, name: str) -> k8s.core.v1.Namespace:
        ns = k8s.core.v1.Namespace(
            f"{self._name}-{role}-ns",
            metadata={"name": name, "labels": {"app.kubernetes.io/managed-by": "gpucloud"}},
            opts=self._k8s(),
        )
        self.namespaces[name] = ns
        return ns

    def _release(
        self,
        role: str,
        chart: str,
        version: str,
        namespace: str,
        values: dict[str, Any],
        depends_on: list[pulumi.Resource] | None = None,
    ) -> k8s.helm.v3.Release:
        deps: list[pulumi.Resource] = list(depends_on or [])
        if namespace in self.namespaces:
            deps.append(self.namespaces[namespace])
        release = helm_release(
            f"{self._name}-{role}",
            chart,
            version,
            release_name=role,
            namespace=namespace,
            create_namespace=False,
            values=values,
            opts=self._k8s(depends_on=deps),
        )
        self.releases[role] = release
        return release

    def _pod_identity_role(
        self, role: str, namespace: str, service_account: str, policy: pulumi.Input[str] | None, managed: list[str]
    ) -> aws.iam.Role:
        iam_role = pod_identity_role(
            f"{self._name}-{role}-role",
            description=f"Pod Identity role of {namespace}/{service_account}",
            tags=self._config.tags,
            opts=child(self),
        )
        if policy is not None:
            aws.iam.RolePolicy(f"{self._name}-{role}-policy", role=iam_role.name, policy=policy, opts=child(self))
        for i, arn in enumerate(managed):
            aws.iam.RolePolicyAttachment(
                f"{self._name}-{role}-managed-{i}", role=iam_role.name, policy_arn=arn, opts=child(self)
            )
        pod_identity_association(
            f"{self._name}-{role}-pod-identity",
            cluster_name=self._cluster.name,
            namespace=namespace,
            service_account=service_account,
            role_arn=iam_role.arn,
            tags=self._config.tags,
            opts=child(self),
        )
        return iam_role

    def _arn_prefix(self, service: str) -> pulumi.Output[str]:
        account, partition = account_and_partition(self)
        return pulumi.Output.concat("arn:", partition, f":{service}:{self._config.region}:", account)
