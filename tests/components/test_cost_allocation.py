"""Per-team cost: OpenCost's CSV prices and values, the team cost dashboard, and the CUR 2.0 billing export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpucloud.components.addons.cost_allocation import pricing_csv, pricing_rows, team_cost_dashboard
from gpucloud.components.cost_reporting import (
    EKS_SPLIT_TAGS,
    GpuCostReporting,
    GpuCostReportingConfig,
    bucket_policy,
    key_policy,
    query_statement,
)
from gpucloud.plan import run_callable
from gpucloud.spec import SpecError
from gpucloud.spec.budget import CostReportingSpec
from tests.components.test_addons import releases, render, spec_of

TAGS = {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud", "Env": "prod"}


def test_pricing_rows_split_a_gpu_node_into_node_and_per_gpu_rows() -> None:
    rows, unpriced = pricing_rows(["p5.48xlarge", "g5.xlarge", "p5.48xlarge"], "us-east-1", 0.9)
    assert unpriced == []
    by = {(r["InstanceID"], r["AssetClass"]): r for r in rows}
    # p5.48xlarge: $55.04/h, 8 GPUs; 90 % on the GPUs: 49.536 / 8 = 6.192 per GPU, 5.504 for CPU and memory.
    assert by[("p5.48xlarge", "node")]["MarketPriceHourly"] == "5.504000"
    assert by[("p5.48xlarge", "gpu")]["MarketPriceHourly"] == "6.192000"
    assert by[("g5.xlarge", "gpu")]["MarketPriceHourly"] == "0.905400"
    assert by[("g5.xlarge", "node")]["MarketPriceHourly"] == "0.100600"
    # OpenCost keys node rows by region and looks GPU classes up without one.
    assert (by[("p5.48xlarge", "node")]["Region"], by[("p5.48xlarge", "gpu")]["Region"]) == ("us-east-1", "")
    assert by[("p5.48xlarge", "node")]["InstanceIDField"] == "metadata.labels.node.kubernetes.io/instance-type"
    assert by[("p5.48xlarge", "gpu")]["InstanceIDField"] == "node.kubernetes.io/instance-type"
    assert len(rows) == 4


def test_pricing_uses_the_regions_own_rates_and_never_borrows_another_regions() -> None:
    rows, unpriced = pricing_rows(["p5.48xlarge", "m7i.large", "g5.12xlarge", "g6.xlarge", "x9.huge"], "eu-west-1", 1.0)
    # The plan's eu-west-1 figures: g5.12xlarge $6.33167/h in the price book (us-east-1: $5.672), 4 GPUs at
    # 1.5829175 each; m7i.large $0.11235/h in the service rates (us-east-1: $0.1008). p5.48xlarge and g6.xlarge are
    # not sold in eu-west-1 per the snapshot's sources, x9.huge is no type at all: no row, never the US rate.
    assert [(r["InstanceID"], r["AssetClass"], r["Region"], r["MarketPriceHourly"]) for r in rows] == [
        ("g5.12xlarge", "node", "eu-west-1", "0.000000"),
        ("g5.12xlarge", "gpu", "", "1.582917"),
        ("m7i.large", "node", "eu-west-1", "0.112350"),
    ]
    assert unpriced == ["g6.xlarge", "p5.48xlarge", "x9.huge"]


def test_pricing_csv_has_opencosts_header_and_parses_back() -> None:
    rows, _ = pricing_rows(["g6e.12xlarge"], "us-east-1", 1.0)
    text = pricing_csv(rows)
    assert text.splitlines()[0] == (
        "EndTimestamp,InstanceID,Region,AssetClass,InstanceIDField,InstanceType,MarketPriceHourly,Version"
    )
    parsed = list(csv.DictReader(io.StringIO(text)))
    # All on the GPUs: node row 0, each of 4 GPUs a quarter of $10.49264/h.
    assert [(r["AssetClass"], r["MarketPriceHourly"]) for r in parsed] == [("node", "0.000000"), ("gpu", "2.623160")]


def test_opencost_release_reads_the_csv_from_a_mounted_configmap_and_the_platform_prometheus() -> None:
    plan = render(spec_of({"costAllocation": {"enabled": True}}))
    release = releases(plan)["opencost"]
    assert (release["chart"], release["version"], release["namespace"]) == ("opencost", "2.5.17", "opencost")
    values = release["values"]
    exporter = values["opencost"]["exporter"]
    assert exporter["extraEnv"] == {"USE_CSV_PROVIDER": "true", "CSV_PATH": "/var/gpucloud/pricing/pricing.csv"}
    assert exporter["extraVolumeMounts"] == [
        {"name": "pricing", "mountPath": "/var/gpucloud/pricing", "readOnly": True}
    ]
    assert values["extraVolumes"] == [{"name": "pricing", "configMap": {"name": "gpucloud-pricing"}}]
    assert values["opencost"]["prometheus"]["internal"] == {
        "enabled": True,
        "serviceName": "kube-prometheus-stack-prometheus",
        "namespaceName": "monitoring",
        "port": 9090,
    }
    (pricing,) = [r for r in plan if r.name == "addons-opencost-pricing"]
    assert pricing.inputs["metadata"] == {"name": "gpucloud-pricing", "namespace": "opencost"}
    types = {row["InstanceID"] for row in csv.DictReader(io.StringIO(pricing.inputs["data"]["pricing.csv"]))}
    assert types == {"p5.48xlarge", "g6e.12xlarge"}
    (dashboard,) = [r for r in plan if r.name == "addons-team-cost-dashboard"]
    assert dashboard.inputs["metadata"]["labels"] == {"grafana_dashboard": "1"}
    assert json.loads(dashboard.inputs["data"]["gpucloud-team-cost.json"])["uid"] == "gpucloud-team-cost"


def test_opencost_is_off_by_default_and_needs_the_in_cluster_prometheus() -> None:
    assert "opencost" not in releases(render(spec_of()))
    with pytest.raises(SpecError) as err:
        spec_of({"costAllocation": {"enabled": True}, "observability": {"metrics": "amp"}})
    assert [i.path for i in err.value.issues] == ["gpucloud:platform.addons.costAllocation.enabled"]
    assert "observability.metrics: kube-prometheus-stack" in err.value.issues[0].message


def test_team_cost_dashboard_sums_gpu_requests_and_dollars_by_namespace() -> None:
    panels = {p["title"]: p["targets"][0]["expr"] for p in team_cost_dashboard()["panels"]}
    assert panels["GPUs allocated per team"] == (
        'sum by (namespace) (kube_pod_container_resource_requests{resource="nvidia_com_gpu"})'
    )
    assert panels["GPU $/h per team"] == (
        "sum by (namespace) (container_gpu_allocation * on (node) group_left() max by (node) (node_gpu_hourly_cost))"
    )
    assert set(panels) == {"GPUs allocated per team", "GPU-hours per team (range)", "GPU $/h per team",
                           "GPU $ per team (range)"}  # fmt: skip


# -- CUR 2.0 export ----------------------------------------------------------------------------------------


def test_bucket_and_key_policies_admit_only_this_accounts_exports_over_tls() -> None:
    policy = json.loads(bucket_policy("arn:aws:s3:::b", "123456789012", "aws"))
    deny, allow = policy["Statement"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert allow["Principal"] == {"Service": ["billingreports.amazonaws.com", "bcm-data-exports.amazonaws.com"]}
    assert allow["Action"] == ["s3:PutObject", "s3:GetBucketPolicy"]
    assert allow["Condition"]["StringLike"] == {
        "aws:SourceAccount": "123456789012",
        "aws:SourceArn": [
            "arn:aws:cur:us-east-1:123456789012:definition/*",
            "arn:aws:bcm-data-exports:us-east-1:123456789012:export/*",
        ],
    }
    key = json.loads(key_policy("123456789012", "aws"))["Statement"]
    assert key[1]["Action"] == ["kms:GenerateDataKey*", "kms:Encrypt", "kms:Decrypt"]
    assert key[1]["Condition"] == allow["Condition"]


def _reporting(**spec: Any) -> Any:
    config = GpuCostReportingConfig(
        region="us-west-2",
        tags=TAGS,
        name_prefix="gpucloud-prod",
        reporting=CostReportingSpec.model_validate({"enabled": True, **spec}),
        tag_keys=sorted(TAGS),
        protect=True,
    )
    return run_callable(lambda: GpuCostReporting("billing", config), preview=False, region="us-west-2")


def test_export_selects_split_cost_columns_into_a_retained_encrypted_bucket() -> None:
    plan = _reporting()
    (export,) = plan.of_type("aws:bcmdata/export:Export")
    spec = export.inputs["export"]
    query = spec["dataQueries"][0]
    assert query["queryStatement"] == query_statement()
    assert "split_line_item_split_cost" in query["queryStatement"] and "resource_tags" in query["queryStatement"]
    assert query["tableConfigurations"] == {
        "COST_AND_USAGE_REPORT": {
            "TIME_GRANULARITY": "HOURLY",
            "INCLUDE_RESOURCES": "TRUE",
            "INCLUDE_SPLIT_COST_ALLOCATION_DATA": "TRUE",
            "INCLUDE_MANUAL_DISCOUNT_COMPATIBILITY": "FALSE",
        }
    }
    s3 = spec["destinationConfigurations"][0]["s3Destinations"][0]
    assert (s3["s3Prefix"], s3["s3Region"]) == ("cur2", "us-west-2")
    assert s3["s3OutputConfigurations"] == [
        {"overwrite": "OVERWRITE_REPORT", "format": "PARQUET", "compression": "PARQUET", "outputType": "CUSTOM"}
    ]
    assert spec["refreshCadences"] == [{"frequency": "SYNCHRONOUS"}]
    (provider,) = plan.of_type("pulumi:providers:aws")
    assert provider.inputs["region"] == "us-east-1"
    assert export.provider is not None and export.provider.startswith(provider.urn)
    (bucket,) = plan.of_type("aws:s3/bucket:Bucket")
    (key,) = plan.of_type("aws:kms/key:Key")
    for r in (bucket, key):
        assert (r.retain_on_delete, r.protect) == (True, True)
    assert key.inputs["enableKeyRotation"] is True
    (sse,) = plan.of_type("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    assert sse.inputs["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
    assert plan.of_type("aws:costexplorer/costAllocationTag:CostAllocationTag") == []


def test_activate_tags_turns_on_the_stack_tags_and_the_eks_split_tags() -> None:
    plan = _reporting(activateTags=True, granularity="DAILY")
    tags = {
        r.inputs["tagKey"]: r.inputs["status"]
        for r in plan.of_type("aws:costexplorer/costAllocationTag:CostAllocationTag")
    }
    assert tags == dict.fromkeys([*TAGS, *EKS_SPLIT_TAGS], "Active")
    (export,) = plan.of_type("aws:bcmdata/export:Export")
    assert (
        export.inputs["export"]["dataQueries"][0]["tableConfigurations"]["COST_AND_USAGE_REPORT"]["TIME_GRANULARITY"]
        == "DAILY"
    )


def test_pricing_rows_follow_a_refreshed_cpu_price_like_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A refresh priced m7i.large at $0.112/h in us-east-1 (the shipped table says $0.1008): the cost engine prices
    # it at the refresh's figure, so the OpenCost export must too; c6a.large is in no table, only in the refresh.
    path = tmp_path / "prices.json"
    refreshed = {"price_date": "2026-08-03", "price_source": "aws-price-list-api"}
    path.write_text(json.dumps({"schema": "gpucloud.prices/v1", "regions": {"us-east-1": {
        "m7i.large": {"on_demand_usd": 0.112, **refreshed},
        "c6a.large": {"on_demand_usd": 0.0765, **refreshed},
    }}}))  # fmt: skip
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(path))
    rows, unpriced = pricing_rows(["m7i.large", "c6a.large"], "us-east-1", 1.0)
    assert [(r["InstanceID"], r["MarketPriceHourly"]) for r in rows] == [
        ("c6a.large", "0.076500"),
        ("m7i.large", "0.112000"),
    ]
    assert unpriced == []
