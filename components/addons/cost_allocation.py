"""Per-team GPU cost after deploy: OpenCost priced from the plan's dated per-region prices, and a Grafana dashboard of
GPU-hours and dollars per team namespace.

OpenCost allocates each node's hourly price to the pods on it by their requests. It gets the price from a CSV
(its CSV pricing provider, `USE_CSV_PROVIDER` / `CSV_PATH`, opencost pkg/cloud/provider/csvprovider.go) that
gpucloud writes from the same dated prices the plan's cost section uses, so the dashboard and `gpucloud plan`
agree on what an hour of each instance type costs.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

import pulumi_kubernetes as k8s

from gpucloud import catalog
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.addons.common import KPS_RELEASE, grafana_dashboard_configmap, grafana_panel
from gpucloud.fleet import labels as L
from gpucloud.prices.instance_rates import on_demand_rates

# OpenCost's CSV columns, in its struct's order (csvutil header of `price`); EndTimestamp and Version are unused.
CSV_HEADER = (
    "EndTimestamp",
    "InstanceID",
    "Region",
    "AssetClass",
    "InstanceIDField",
    "InstanceType",
    "MarketPriceHourly",
    "Version",
)
INSTANCE_TYPE_LABEL = L.INSTANCE_TYPE
# NodeValueFromMapField joins everything after `metadata.labels.` with dots, so the label key keeps its dots.
NODE_ID_FIELD = f"metadata.labels.{INSTANCE_TYPE_LABEL}"
PRICING_CONFIGMAP = "gpucloud-pricing"
PRICING_MOUNT = "/var/gpucloud/pricing"
TEAM_LABEL = "gpucloud.io/team"


def pricing_rows(
    instance_types: Iterable[str], region: str, gpu_share: float
) -> tuple[list[dict[str, str]], list[str]]:
    """OpenCost CSV rows for these instance types, and the types left unpriced.

    A GPU type gets two rows: a node row (region-scoped) with the CPU/memory part of the hourly price, and a gpu
    row (no region: OpenCost looks GPU classes up without one) keyed by the same instance-type label with the
    per-GPU part. OpenCost adds GPU count x gpu row to the node row, so the node still costs its full price and
    a pod's share follows the GPUs it requests.
    """
    rows: list[dict[str, str]] = []
    unpriced: list[str] = []
    # The On-Demand rates the cost engine prices with (gpucloud.prices.instance_rates, the one resolution both
    # read), so the export and `gpucloud plan` agree; another region's rate is never borrowed.
    hourly_by_type = on_demand_rates(sorted(set(instance_types)), region)
    for itype, hourly in hourly_by_type.items():
        if hourly is None:
            unpriced.append(itype)
            continue
        spec = catalog.get_catalog().find(itype)
        gpus = spec.accelerator_count if spec is not None and spec.accelerator_kind == "gpu" else 0
        gpu_part = hourly * gpu_share if gpus else 0.0
        base = {"EndTimestamp": "", "Region": region, "InstanceType": itype, "Version": ""}
        rows.append(
            {
                **base,
                "InstanceID": itype,
                "AssetClass": "node",
                "InstanceIDField": NODE_ID_FIELD,
                "MarketPriceHourly": f"{hourly - gpu_part:.6f}",
            }
        )
        if gpus:
            rows.append(
                {
                    **base,
                    "Region": "",
                    "InstanceID": itype,
                    "AssetClass": "gpu",
                    "InstanceIDField": INSTANCE_TYPE_LABEL,
                    "MarketPriceHourly": f"{gpu_part / gpus:.6f}",
                }
            )
    return rows, unpriced


def pricing_csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def team_cost_dashboard() -> dict[str, Any]:
    """GPU-hours and dollars per team namespace, from kube-state-metrics requests and OpenCost's prices."""
    gpu_requests = 'kube_pod_container_resource_requests{resource="nvidia_com_gpu"}'
    # OpenCost's allocation x its per-GPU hourly price of the node (node_gpu_hourly_cost is per GPU; one series per
    # node is kept in case several scrapes carry it).
    dollars_per_hour = (
        "sum by (namespace) (container_gpu_allocation * on (node) group_left() max by (node) (node_gpu_hourly_cost))"
    )

    def panel(pid: int, title: str, expr: str, unit: str, x: int, y: int, kind: str) -> dict[str, Any]:
        return grafana_panel(pid, title, expr, unit, x, y, "{{namespace}}", kind)

    return {
        "uid": "gpucloud-team-cost",
        "title": "GPU cost per team",
        "tags": ["gpu", "cost", "opencost", "gpucloud"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "5m",
        "time": {"from": "now-7d", "to": "now"},
        "templating": {
            "list": [{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"}]
        },
        "panels": [
            panel(1, "GPUs allocated per team", f"sum by (namespace) ({gpu_requests})", "none", 0, 0, "timeseries"),
            panel(
                2,
                "GPU-hours per team (range)",
                f"sum by (namespace) (sum_over_time((sum by (namespace) ({gpu_requests}))[$__range:1h]))",
                "none",
                12,
                0,
                "bargauge",
            ),
            panel(3, "GPU $/h per team", dollars_per_hour, "currencyUSD", 0, 8, "timeseries"),
            panel(
                4,
                "GPU $ per team (range)",
                f"sum by (namespace) (sum_over_time(({dollars_per_hour})[$__range:1h]))",
                "currencyUSD",
                12,
                8,
                "bargauge",
            ),
        ],
    }


class CostAllocationMixin(AddonsBase):
    """OpenCost with the plan's prices, reading the in-cluster Prometheus, and the per-team cost dashboard."""

    def _cost_allocation(self) -> None:
        spec = self._config.addons.cost_allocation
        namespace = f"{self._config.addons.namespace_prefix}opencost"
        self._namespace("opencost", namespace)
        types = [t for p in self._config.pools for t in p.instance_types]
        rows, unpriced = pricing_rows(types, self._config.region, spec.gpu_price_share)
        self.opencost_unpriced_types = unpriced
        pricing = k8s.core.v1.ConfigMap(
            f"{self._name}-opencost-pricing",
            metadata={"name": PRICING_CONFIGMAP, "namespace": namespace},
            data={"pricing.csv": pricing_csv(rows)},
            opts=self._k8s(depends_on=[self.namespaces[namespace]]),
        )
        values: dict[str, Any] = {
            "opencost": {
                "exporter": {
                    "defaultClusterId": self._cluster.name,
                    "extraEnv": {"USE_CSV_PROVIDER": "true", "CSV_PATH": f"{PRICING_MOUNT}/pricing.csv"},
                    "extraVolumeMounts": [{"name": "pricing", "mountPath": PRICING_MOUNT, "readOnly": True}],
                },
                "prometheus": {
                    "internal": {
                        "enabled": True,
                        "serviceName": f"{KPS_RELEASE}-prometheus",
                        "namespaceName": self.monitoring_namespace,
                        "port": 9090,
                    }
                },
                # OpenCost's own series (node_gpu_hourly_cost, ...) feed the dashboard; the platform's Prometheus
                # selects every ServiceMonitor.
                "metrics": {"serviceMonitor": {"enabled": True}},
                "ui": {"enabled": spec.ui},
            },
            "extraVolumes": [{"name": "pricing", "configMap": {"name": PRICING_CONFIGMAP}}],
        }
        deps: list[Any] = [pricing]
        kps = self.releases.get(KPS_RELEASE)
        if kps is not None:
            deps.append(kps)
        self._release("opencost", "opencost", spec.version, namespace, values, depends_on=deps)
        self.team_cost_dashboard = grafana_dashboard_configmap(
            f"{self._name}-team-cost-dashboard",
            "gpucloud-team-cost-dashboard",
            self.monitoring_namespace,
            "gpucloud-team-cost.json",
            team_cost_dashboard(),
            self._k8s(depends_on=[self.namespaces[self.monitoring_namespace]]),
        )
