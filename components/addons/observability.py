"""Metrics, dashboards, alerts and logs for GPU nodes: DCGM, kube-prometheus-stack or AMP, CloudWatch."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import yaml

from gpucloud import versions
from gpucloud.components.addons.common import (
    ALERTMANAGER_SERVICE_ACCOUNT,
    DASHBOARD_LABEL,
    DASHBOARD_LABEL_VALUE,
    DCGM_PORT,
    EBS_STORAGE_CLASS,
    FATAL_XIDS,
    GPU_TOLERATION,
    GRAFANA_ADMIN_SECRET,
    KPS_RELEASE,
    grafana_dashboard_configmap,
    grafana_panel,
)
from gpucloud.components.addons.devices import gpu_node_affinity
from gpucloud.components.addons.storage import EbsStorageMixin
from gpucloud.components.base import account_and_partition, child
from gpucloud.components.pod_identity import pod_identity_role
from gpucloud.spec import AddonsSpec


def gpu_alert_rules(addons: AddonsSpec) -> list[dict[str, Any]]:
    """Prometheus alerting rules on DCGM metrics: idle spend, XID errors, high temperature."""
    alerts = addons.observability.alerts
    idle_for = f"{alerts.idle_for_hours:g}h"
    fatal = " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {x}" for x in FATAL_XIDS)
    return [
        {
            "alert": "GpuIdle",
            "expr": f"avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL) < {alerts.idle_utilization_percent:g}",
            "for": idle_for,
            "labels": {"severity": "warning", "category": "cost"},
            "annotations": {
                "summary": "GPUs on {{ $labels.Hostname }} idle for " + idle_for,
                "description": f"Average GPU utilisation below {alerts.idle_utilization_percent:g}% for "
                f"{idle_for}: the node is billed while idle. Scale the pool down or release the reservation.",
            },
        },
        {
            "alert": "GpuXidError",
            "expr": "max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0",
            "for": "1m",
            "labels": {"severity": "warning", "category": "health"},
            "annotations": {
                "summary": "XID {{ $value }} on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
                "description": "The driver reported an XID error; check `dmesg` and the DCGM health of the node.",
            },
        },
        {
            "alert": "GpuFatalXidError",
            "expr": f"count by (Hostname, gpu) ({fatal}) > 0",
            "for": "0m",
            "labels": {"severity": "critical", "category": "health"},
            "annotations": {
                "summary": "Fatal XID on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
                "description": f"XIDs {list(FATAL_XIDS)} mean broken GPU memory, NVLink or bus: cordon and "
                "replace the node (do not repair in place).",
            },
        },
        {
            "alert": "GpuHighTemperature",
            "expr": f"max by (Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP) > {alerts.max_temperature_celsius:g}",
            "for": "5m",
            "labels": {"severity": "warning", "category": "health"},
            "annotations": {
                "summary": "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} at {{ $value }} C",
                "description": f"Above {alerts.max_temperature_celsius:g} C for 5 minutes: the GPU throttles "
                "its clocks and may fail.",
            },
        },
    ]


def gpu_dashboard() -> dict[str, Any]:
    """Grafana dashboard for the DCGM exporter: utilisation, memory, temperature, power, XID errors."""

    panel = grafana_panel
    sel = '{Hostname=~"$node", gpu=~"$gpu"}'
    per_gpu = "{{Hostname}} / GPU {{gpu}}"
    return {
        "uid": "gpucloud-gpus",
        "title": "GPU fleet (DCGM)",
        "tags": ["gpu", "dcgm", "gpucloud"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
                {
                    "name": "node",
                    "type": "query",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": "label_values(DCGM_FI_DEV_GPU_UTIL, Hostname)",
                    "includeAll": True,
                    "multi": True,
                    "refresh": 2,
                },
                {
                    "name": "gpu",
                    "type": "query",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": 'label_values(DCGM_FI_DEV_GPU_UTIL{Hostname=~"$node"}, gpu)',
                    "includeAll": True,
                    "multi": True,
                    "refresh": 2,
                },
            ]
        },
        "panels": [
            panel(1, "GPU utilisation", f"DCGM_FI_DEV_GPU_UTIL{sel}", "percent", 0, 0, per_gpu),
            panel(
                2,
                "GPU memory used",
                f"DCGM_FI_DEV_FB_USED{sel} / (DCGM_FI_DEV_FB_USED{sel} + DCGM_FI_DEV_FB_FREE{sel}) * 100",
                "percent",
                12,
                0,
                per_gpu,
            ),
            panel(3, "GPU temperature", f"DCGM_FI_DEV_GPU_TEMP{sel}", "celsius", 0, 8, per_gpu),
            panel(4, "GPU power", f"DCGM_FI_DEV_POWER_USAGE{sel}", "watt", 12, 8, per_gpu),
            panel(
                5,
                "XID errors (last XID per GPU)",
                f"max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{sel})",
                "none",
                0,
                16,
                per_gpu,
                "stat",
            ),
            panel(
                6,
                "Fleet average utilisation",
                f"avg(DCGM_FI_DEV_GPU_UTIL{sel})",
                "percent",
                12,
                16,
                "average",
                "gauge",
            ),
        ],
    }


class ObservabilityMixin(EbsStorageMixin):
    """DCGM exporter, Prometheus or AMP, alert routing to SNS, Container Insights and Fluent Bit."""

    def _dcgm_exporter(self) -> None:
        kps = self._config.addons.observability.metrics == "kube-prometheus-stack"
        values = {
            "serviceMonitor": {"enabled": kps, "interval": "15s", "honorLabels": True},
            "tolerations": [GPU_TOLERATION],
            # Not nvidia.com/gpu.present: only the GPU Operator sets that label, so in the device-plugin setup
            # the exporter would never schedule.
            "affinity": gpu_node_affinity(self._config.pools),
            # honorLabels above keeps the exporter's pod/namespace labels (from the kubelet pod-resources API)
            # instead of renaming them exported_*, so KEDA and alerts select the pod that uses the GPU.
            "kubeletPath": "/var/lib/kubelet/pod-resources",
        }
        deps: list[pulumi.Resource] = [self.releases[KPS_RELEASE]] if kps else []
        self._release(
            "dcgm-exporter",
            "dcgm-exporter",
            self._config.addons.observability.dcgm_exporter_version,
            self.monitoring_namespace,
            values,
            depends_on=deps,
        )

    def _alert_topic(self, publisher_service: str | None = None) -> pulumi.Input[str]:
        """The SNS topic alerts go to: the stack's existing one, or one created here with the addresses subscribed.

        `publisher_service` is the AWS service principal that publishes (AMP's alert manager); it needs a topic
        policy, and the topic is not encrypted at rest: the cluster key's policy does not let that service use the
        key, and an AWS managed key cannot be granted to it. Messages carry alert names and labels only. An
        in-cluster Alertmanager publishes as its Pod Identity role, which may use the cluster key.
        """
        alerts = self._config.addons.observability.alerts
        if alerts.sns_topic_arn is not None:
            self.alert_topic_arn = alerts.sns_topic_arn
            return alerts.sns_topic_arn
        topic = aws.sns.Topic(
            f"{self._name}-alerts",
            display_name="gpucloud GPU alerts",
            kms_master_key_id=None if publisher_service else self._cluster.kms_key_arn,
            tags=self._config.tags,
            opts=child(self),
        )
        for i, address in enumerate(alerts.emails or self._config.alert_emails):
            aws.sns.TopicSubscription(
                f"{self._name}-alerts-email-{i}", topic=topic.arn, protocol="email", endpoint=address, opts=child(self)
            )
        if publisher_service is not None:
            account, _ = account_and_partition(self)
            aws.sns.TopicPolicy(
                f"{self._name}-alerts-policy",
                arn=topic.arn,
                policy=pulumi.Output.all(topic.arn, account).apply(
                    lambda a: json.dumps(
                        {
                            "Version": "2012-10-17",
                            "Statement": [
                                {
                                    "Sid": "AlertManagerPublishes",
                                    "Effect": "Allow",
                                    "Principal": {"Service": publisher_service},
                                    "Action": ["sns:Publish", "sns:GetTopicAttributes"],
                                    "Resource": a[0],
                                    "Condition": {"StringEquals": {"aws:SourceAccount": a[1]}},
                                }
                            ],
                        }
                    )
                ),
                opts=child(self),
            )
        self.alert_topic_arn = topic.arn
        return topic.arn

    def _alertmanager_config(self, topic_arn: pulumi.Input[str]) -> dict[str, Any]:
        """Route every alert to SNS; the chart's always-firing Watchdog stays on the silent receiver."""
        return {
            "route": {
                "receiver": "sns",
                "group_by": ["alertname", "namespace"],
                "routes": [{"receiver": "null", "matchers": ['alertname = "Watchdog"']}],
            },
            "receivers": [
                {"name": "null"},
                {
                    "name": "sns",
                    "sns_configs": [
                        {
                            "topic_arn": topic_arn,
                            # SigV4 with the default credential chain, i.e. the Pod Identity role below.
                            "sigv4": {"region": self._config.region},
                            "subject": "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}",
                            "send_resolved": True,
                        }
                    ],
                },
            ],
        }

    def _grafana_admin_secret(self) -> tuple[str, list[pulumi.Resource]]:
        """The Secret Grafana reads its admin credentials from (admin.existingSecret of the grafana sub-chart)."""
        existing = self._config.addons.observability.grafana_admin_secret
        if existing is not None:
            return existing, []
        secret = k8s.core.v1.Secret(
            f"{self._name}-grafana-admin",
            metadata={"name": GRAFANA_ADMIN_SECRET, "namespace": self.monitoring_namespace},
            type="Opaque",
            string_data={
                "admin-user": "admin",
                # Generated once: ignore_changes keeps the first password, so later runs never rotate it.
                "admin-password": pulumi.Output.secret(secrets.token_urlsafe(24)),
            },
            opts=self._k8s(
                depends_on=[self.namespaces[self.monitoring_namespace]],
                ignore_changes=["stringData", "data"],
                additional_secret_outputs=["stringData", "data"],
            ),
        )
        return GRAFANA_ADMIN_SECRET, [secret]

    def _kube_prometheus_stack(self) -> None:
        obs = self._config.addons.observability
        storage_class = self._ebs_storage()
        grafana_secret, grafana_deps = self._grafana_admin_secret()
        topic_arn = self._alert_topic()
        self._alertmanager_publisher(topic_arn)
        values = {
            "prometheus": {
                "prometheusSpec": {
                    "retention": obs.prometheus_retention,
                    # Pick up every ServiceMonitor/PrometheusRule, not only those labelled with this release.
                    "serviceMonitorSelectorNilUsesHelmValues": False,
                    "podMonitorSelectorNilUsesHelmValues": False,
                    "ruleSelectorNilUsesHelmValues": False,
                    # The TSDB on a persistent volume: on the node's root disk it filled the disk and was lost
                    # with every node replacement.
                    "storageSpec": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "storageClassName": EBS_STORAGE_CLASS,
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": f"{obs.prometheus_storage_gib}Gi"}},
                            }
                        }
                    },
                }
            },
            "alertmanager": {
                "serviceAccount": {"create": True, "name": ALERTMANAGER_SERVICE_ACCOUNT},
                "config": self._alertmanager_config(topic_arn),
            },
            "grafana": {
                # The parent chart's adminPassword default is a published string; credentials come from a Secret.
                "admin": {"existingSecret": grafana_secret, "userKey": "admin-user", "passwordKey": "admin-password"},
                "sidecar": {
                    "dashboards": {
                        "enabled": True,
                        "label": DASHBOARD_LABEL,
                        "labelValue": DASHBOARD_LABEL_VALUE,
                        "searchNamespace": "ALL",
                    }
                },
            },
        }
        release = self._release(
            KPS_RELEASE,
            KPS_RELEASE,
            obs.kube_prometheus_stack_version,
            self.monitoring_namespace,
            values,
            depends_on=[storage_class, *grafana_deps],
        )
        self.prometheus_server_url = (
            f"http://{KPS_RELEASE}-prometheus.{self.monitoring_namespace}.svc.cluster.local:9090"
        )
        self.dashboard = grafana_dashboard_configmap(
            f"{self._name}-gpu-dashboard",
            "gpucloud-gpu-dashboard",
            self.monitoring_namespace,
            "gpucloud-gpus.json",
            gpu_dashboard(),
            self._k8s(depends_on=[self.namespaces[self.monitoring_namespace]]),
        )
        if obs.alerts.enabled:
            self.prometheus_rule = k8s.apiextensions.CustomResource(
                f"{self._name}-gpu-alerts",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={
                    "name": "gpucloud-gpu-alerts",
                    "namespace": self.monitoring_namespace,
                    "labels": {"release": KPS_RELEASE},
                },
                spec={"groups": [{"name": "gpucloud-gpu", "rules": gpu_alert_rules(self._config.addons)}]},
                # The PrometheusRule CRD comes with the chart.
                opts=self._k8s(depends_on=[release]),
            )

    def _alertmanager_publisher(self, topic_arn: pulumi.Input[str]) -> None:
        """Pod Identity for Alertmanager: publish to the alert topic and use the key that encrypts it."""
        statements: list[dict[str, Any]] = [{"Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn}]
        if self._config.addons.observability.alerts.sns_topic_arn is None:
            statements.append(
                {
                    "Effect": "Allow",
                    "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                    "Resource": self._cluster.kms_key_arn,
                }
            )
        policy = pulumi.Output.from_input(statements).apply(
            lambda st: json.dumps({"Version": "2012-10-17", "Statement": st})
        )
        self._pod_identity_role("alertmanager", self.monitoring_namespace, ALERTMANAGER_SERVICE_ACCOUNT, policy, [])

    def _amp(self) -> None:
        cluster = self._cluster
        tags = self._config.tags
        workspace = aws.amp.Workspace(
            f"{self._name}-amp",
            alias=f"{self._name}-gpu-metrics",
            kms_key_arn=cluster.kms_key_arn,
            tags=tags,
            opts=child(self),
        )
        self.amp_workspace_arn = workspace.arn
        self.amp_workspace_id = workspace.id
        self.prometheus_server_url = workspace.prometheus_endpoint
        scrape = {
            "global": {"scrape_interval": "30s"},
            "scrape_configs": [
                {
                    "job_name": "dcgm-exporter",
                    "kubernetes_sd_configs": [{"role": "pod"}],
                    "relabel_configs": [
                        {
                            "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                            "action": "keep",
                            "regex": str(DCGM_PORT),
                        },
                        {
                            "source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
                            "action": "keep",
                            "regex": "dcgm-exporter|nvidia-dcgm-exporter",
                        },
                        {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node"},
                    ],
                }
            ],
        }
        cluster_arn = cluster.extra.get("arn") or pulumi.Output.concat(
            self._arn_prefix("eks"), ":cluster/", cluster.name
        )
        # The managed collector needs subnets in at least two AZs.
        subnets = cluster.subnet_ids()
        self.scraper = aws.amp.Scraper(
            f"{self._name}-scraper",
            alias=f"{self._name}-dcgm",
            source={
                "eks": {
                    "cluster_arn": cluster_arn,
                    "subnet_ids": subnets,
                    "security_group_ids": [cluster.node_security_group_id],
                }
            },
            destination={"amp": {"workspace_arn": workspace.arn}},
            scrape_configuration=yaml.safe_dump(scrape, sort_keys=False),
            tags=tags,
            opts=child(self),
        )
        # The scraper reads the Kubernetes API as this user; EKS maps its service-linked role to it.
        aws.eks.AccessEntry(
            f"{self._name}-scraper-access",
            cluster_name=cluster.name,
            principal_arn=self.scraper.role_arn,
            user_name="aps-collector-user",
            tags=tags,
            opts=child(self),
        )
        k8s.rbac.v1.ClusterRole(
            f"{self._name}-scraper-role",
            metadata={"name": "aps-collector-role"},
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""],
                    resources=["nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints", "pods", "configmaps"],
                    verbs=["get", "list", "watch"],
                ),
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=["networking.k8s.io"], resources=["ingresses"], verbs=["get", "list", "watch"]
                ),
                k8s.rbac.v1.PolicyRuleArgs(non_resource_urls=["/metrics"], verbs=["get"]),
            ],
            opts=self._k8s(),
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{self._name}-scraper-binding",
            metadata={"name": "aps-collector-user-role-binding"},
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="aps-collector-role"
            ),
            subjects=[
                k8s.rbac.v1.SubjectArgs(kind="User", name="aps-collector-user", api_group="rbac.authorization.k8s.io")
            ],
            opts=self._k8s(),
        )
        if self._config.addons.observability.alerts.enabled:
            topic_arn = self._alert_topic(publisher_service="aps.amazonaws.com")
            # Rules without an alert manager definition fire into nothing; AMP's alert manager speaks SNS only.
            aws.amp.AlertManagerDefinition(
                f"{self._name}-alert-manager",
                workspace_id=workspace.id,
                definition=pulumi.Output.from_input(topic_arn).apply(
                    lambda arn: yaml.safe_dump(
                        {
                            "alertmanager_config": yaml.safe_dump(
                                {
                                    "route": {"receiver": "sns", "group_by": ["alertname"]},
                                    "receivers": [
                                        {
                                            "name": "sns",
                                            "sns_configs": [
                                                {
                                                    "topic_arn": arn,
                                                    "sigv4": {"region": self._config.region},
                                                    "send_resolved": True,
                                                }
                                            ],
                                        }
                                    ],
                                },
                                sort_keys=False,
                            )
                        },
                        sort_keys=False,
                    )
                ),
                opts=child(self),
            )
            aws.amp.RuleGroupNamespace(
                f"{self._name}-gpu-alerts",
                name="gpucloud-gpu-alerts",
                workspace_id=workspace.id,
                data=yaml.safe_dump(
                    {"groups": [{"name": "gpucloud-gpu", "rules": gpu_alert_rules(self._config.addons)}]},
                    sort_keys=False,
                ),
                tags=tags,
                opts=child(self),
            )

    def _container_insights(self) -> None:
        namespace, service_account = "amazon-cloudwatch", "cloudwatch-agent"
        role = pod_identity_role(
            f"{self._name}-container-insights-role",
            description=f"Pod Identity role of {namespace}/{service_account}",
            tags=self._config.tags,
            opts=child(self),
        )
        aws.iam.RolePolicyAttachment(
            f"{self._name}-container-insights-managed-0",
            role=role.name,
            policy_arn=aws.get_partition_output().partition.apply(
                lambda p: f"arn:{p}:iam::aws:policy/CloudWatchAgentServerPolicy"
            ),
            opts=child(self),
        )
        self.container_insights = aws.eks.Addon(
            f"{self._name}-container-insights",
            cluster_name=self._cluster.name,
            addon_name="amazon-cloudwatch-observability",
            # The versions table's build for the cluster minor (None where no source names one: EKS's default).
            addon_version=versions.addon_build(self._cluster.kubernetes_version, "amazon-cloudwatch-observability"),
            pod_identity_associations=[{"role_arn": role.arn, "service_account": service_account}],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._config.tags,
            opts=child(self),
        )

    def _fluent_bit(self) -> None:
        fb = self._config.addons.observability.fluent_bit
        namespace = f"{self._config.addons.namespace_prefix}logging"
        self._namespace("logging", namespace)
        log_group = aws.cloudwatch.LogGroup(
            f"{self._name}-container-logs",
            name=f"/gpucloud/{self._name}/containers",
            retention_in_days=fb.retention_days,
            kms_key_id=self._cluster.kms_key_arn,
            tags=self._config.tags,
            opts=child(self),
        )
        self.log_group_name = log_group.name
        policy = log_group.arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                            "Resource": [arn, f"{arn}:*"],
                        },
                        {"Effect": "Allow", "Action": ["logs:DescribeLogGroups"], "Resource": "*"},
                    ],
                }
            )
        )
        self._pod_identity_role("fluent-bit", namespace, "aws-for-fluent-bit", policy, [])
        values = {
            "serviceAccount": {"create": True, "name": "aws-for-fluent-bit"},
            "cloudWatch": {"enabled": False},
            "cloudWatchLogs": {
                "enabled": True,
                "region": self._config.region,
                "logGroupName": log_group.name,
                "autoCreateGroup": False,
            },
            "firehose": {"enabled": False},
            "kinesis": {"enabled": False},
            "elasticsearch": {"enabled": False},
            # Logs of GPU jobs matter most; run on every node whatever its taints.
            "tolerations": [{"operator": "Exists"}],
        }
        self._release("aws-for-fluent-bit", "aws-for-fluent-bit", fb.version, namespace, values)
