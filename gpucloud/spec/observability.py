"""Observability section of the add-ons spec: DCGM metrics, Prometheus or AMP, GPU alerts and log shipping."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpucloud.charts import lock as charts_lock
from gpucloud.spec.base import SpecModel
from gpucloud.spec.chart_pins import DcgmExporterVersion, FluentBitVersion, KubePrometheusStackVersion

MetricsBackend = Literal["kube-prometheus-stack", "amp", "none"]
Email = Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]
_SNS_TOPIC_ARN = r"^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$"


class AlertsSpec(SpecModel):
    """GPU alert rules (PrometheusRule in-cluster, or an AMP rule group namespace) and where they are sent."""

    enabled: bool = Field(default=True, description="Create the GPU alert rules.")
    emails: list[Email] = Field(
        default_factory=list,
        description="Addresses subscribed to the alert SNS topic the platform creates (Alertmanager, or AMP's "
        "alert manager, publishes to it). Empty: the budget's alertEmails.",
    )
    sns_topic_arn: str | None = Field(
        default=None,
        pattern=_SNS_TOPIC_ARN,
        description="Publish to this existing SNS topic (e.g. one wired to a pager or AWS Chatbot) instead of "
        "creating one; emails must then be empty.",
    )
    idle_utilization_percent: float = Field(
        default=10, gt=0, lt=100, description="A GPU below this average utilisation counts as idle spend."
    )
    idle_for_hours: float = Field(default=2, gt=0, le=72, description="Hours of idleness before the alert fires.")
    max_temperature_celsius: float = Field(
        default=85, ge=50, le=110, description="GPU temperature that raises the high-temperature alert."
    )


class FluentBitSpec(SpecModel):
    """Container logs shipped to CloudWatch Logs by Fluent Bit (aws-for-fluent-bit)."""

    enabled: bool = Field(default=True, description="Ship container logs to a KMS-encrypted CloudWatch log group.")
    version: FluentBitVersion = Field(
        default=charts_lock.pinned_version("aws-for-fluent-bit"),
        description="aws-for-fluent-bit chart version (eks-charts).",
    )
    retention_days: Literal[1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 3653] = Field(
        default=30, description="Log retention in days (a CloudWatch Logs allowed value)."
    )


class ObservabilitySpec(SpecModel):
    """GPU metrics, dashboards, alerts and logs."""

    enable_dcgm_exporter: bool = Field(
        default=True, description="Export per-GPU DCGM metrics (utilisation, memory, temperature, power, XID)."
    )
    dcgm_exporter_version: DcgmExporterVersion = Field(
        default=charts_lock.pinned_version("dcgm-exporter"), description="dcgm-exporter chart version."
    )
    metrics: MetricsBackend = Field(
        default="kube-prometheus-stack",
        description="'kube-prometheus-stack': in-cluster Prometheus + Grafana with the GPU dashboard; "
        "'amp': Amazon Managed Prometheus with an agentless scraper; 'none'.",
    )
    kube_prometheus_stack_version: KubePrometheusStackVersion = Field(
        default=charts_lock.pinned_version("kube-prometheus-stack"), description="kube-prometheus-stack chart version."
    )
    prometheus_retention: str = Field(
        default="15d", pattern=r"^\d+[hdwy]$", description="In-cluster Prometheus retention (e.g. 15d)."
    )
    prometheus_storage_gib: int = Field(
        default=100,
        ge=10,
        le=16384,
        description="Size of Prometheus' persistent volume (EBS gp3, encrypted with the cluster key); size it for "
        "the retention: roughly 1-2 GiB per day per 100k active series.",
    )
    grafana_admin_secret: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        description="Existing Secret in the monitoring namespace with keys admin-user and admin-password (e.g. "
        "from External Secrets). Unset: the platform creates one with a random password, kept across updates.",
    )
    alerts: AlertsSpec = Field(default_factory=AlertsSpec, description="GPU alert rules.")
    enable_container_insights: bool = Field(
        default=False,
        description="Install the amazon-cloudwatch-observability EKS add-on (Container Insights; billed per "
        "metric and log volume).",
    )
    fluent_bit: FluentBitSpec = Field(default_factory=FluentBitSpec, description="Log shipping to CloudWatch.")
