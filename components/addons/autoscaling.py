"""Node and workload autoscaling: Cluster Autoscaler (priority expander), KEDA and metrics-server."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpucloud import versions
from gpucloud.components.addons.base import AddonsBase


class AutoscalingMixin(AddonsBase):
    """Scales pools with the Cluster Autoscaler where Karpenter is not used, and workloads with KEDA."""

    def _metrics_server(self) -> None:
        spec = self._config.addons.autoscaling.metrics_server
        values: dict[str, Any] = {"replicas": spec.replicas}
        if spec.replicas > 1:
            # Without a budget a node drain can evict every replica at once and the metrics API (HPA, kubectl
            # top) goes dark until they reschedule.
            values["podDisruptionBudget"] = {"enabled": True, "minAvailable": 1}
        # No GPU toleration: it belongs on the system nodes, never on an accelerator a job paid for.
        self._release("metrics-server", "metrics-server", spec.version, "kube-system", values)

    def _cluster_autoscaler(self) -> None:
        scaling = self._config.addons.autoscaling
        cluster_name = self._cluster.name
        policy = pulumi.Output.from_input(cluster_name).apply(
            lambda name: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "ScaleOwnedGroups",
                            "Effect": "Allow",
                            "Action": [
                                "autoscaling:SetDesiredCapacity",
                                "autoscaling:TerminateInstanceInAutoScalingGroup",
                            ],
                            "Resource": "*",
                            # Only groups tagged for this cluster: a shared account's other clusters stay untouched.
                            "Condition": {
                                "StringEquals": {
                                    f"aws:ResourceTag/k8s.io/cluster-autoscaler/{name}": "owned",
                                    "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                                }
                            },
                        },
                        {
                            "Sid": "Describe",
                            "Effect": "Allow",
                            "Action": [
                                "autoscaling:DescribeAutoScalingGroups",
                                "autoscaling:DescribeAutoScalingInstances",
                                "autoscaling:DescribeLaunchConfigurations",
                                "autoscaling:DescribeScalingActivities",
                                "autoscaling:DescribeTags",
                                "ec2:DescribeImages",
                                "ec2:DescribeInstanceTypes",
                                "ec2:DescribeLaunchTemplateVersions",
                                "ec2:GetInstanceTypesFromInstanceRequirements",
                                "eks:DescribeNodegroup",
                            ],
                            "Resource": "*",
                        },
                    ],
                }
            )
        )
        role = self._pod_identity_role("cluster-autoscaler", "kube-system", "cluster-autoscaler", policy, [])
        self.cluster_autoscaler_role_arn = role.arn
        # Reserved > on-demand (its group max is the pool's on-demand share) > spot > the rest; the reasons are
        # with expander_priorities, next to the node group roles the regexes match.
        from gpucloud.components.nodepools.capacity import expander_priorities

        priorities = expander_priorities(scaling.reserved_node_group_regex, scaling.spot_node_group_regex)
        self.priority_expander = k8s.core.v1.ConfigMap(
            f"{self._name}-ca-priorities",
            # The expander reads this exact name in the autoscaler's namespace.
            metadata={"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            data={"priorities": yaml.safe_dump(priorities, sort_keys=False)},
            opts=self._k8s(),
        )
        values: dict[str, Any] = {
            "cloudProvider": "aws",
            "awsRegion": self._config.region,
            "autoDiscovery": {"clusterName": cluster_name},
            "rbac": {"serviceAccount": {"create": True, "name": "cluster-autoscaler"}},
            "extraArgs": {
                "expander": "priority",
                "balance-similar-node-groups": True,
                "skip-nodes-with-local-storage": False,
                "skip-nodes-with-system-pods": False,
                # GPU nodes are expensive: remove them soon after they empty.
                "scale-down-unneeded-time": "10m",
                "scale-down-delay-after-add": "10m",
            },
            "priorityClassName": "system-cluster-critical",
        }
        # The autoscaler runs only against its own Kubernetes minor: the versions table names the chart for the
        # cluster's minor, and the image tag where upstream ships no chart of that minor (CA 1.36 on chart 9.59.0).
        choice = versions.for_minor(self._cluster.kubernetes_version).charts["cluster-autoscaler"]
        chart_version = scaling.cluster_autoscaler_version or choice.version
        if choice.image_tag and chart_version == choice.version:
            values["image"] = {"tag": choice.image_tag}
        self._release(
            "cluster-autoscaler",
            "cluster-autoscaler",
            chart_version,
            "kube-system",
            values,
            depends_on=[self.priority_expander],
        )

    def _keda(self) -> None:
        scaling = self._config.addons.autoscaling
        namespace = f"{self._config.addons.namespace_prefix}keda"
        self._namespace("keda", namespace)
        release = self._release("keda", "keda", scaling.keda.version, namespace, {})
        if self.amp_workspace_arn is None:
            return
        policy = self.amp_workspace_arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["aps:QueryMetrics", "aps:GetSeries", "aps:GetLabels", "aps:GetMetricMetadata"],
                            "Resource": arn,
                        }
                    ],
                }
            )
        )
        self._pod_identity_role("keda", namespace, "keda-operator", policy, [])
        self.keda_trigger_authentication = "gpucloud-amp"
        k8s.apiextensions.CustomResource(
            f"{self._name}-keda-amp-auth",
            api_version="keda.sh/v1alpha1",
            kind="ClusterTriggerAuthentication",
            metadata={"name": self.keda_trigger_authentication},
            # SigV4 with the KEDA operator's own Pod Identity role, which may query the AMP workspace.
            spec={"podIdentity": {"provider": "aws", "identityOwner": "keda"}},
            opts=self._k8s(depends_on=[release]),
        )
