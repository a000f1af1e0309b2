"""Kueue under recording mocks: flavours per pool capacity flavour (labels the pools really set), lending
ClusterQueues per capacity flavour, chart values from the pinned chart, the team's queues and the training job
submitted through them."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from test_addons import cluster_handle, platform_data, spec_of

from gpucloud.charts import lock as charts_lock
from gpucloud.components.addons.kueue import (
    Kueue,
    KueueConfig,
    chart_manager_config,
    kueue_values,
    pool_flavours,
    team_cluster_queue_spec,
)
from gpucloud.components.nodepools import GpuNodePool, GpuNodePoolConfig
from gpucloud.components.platform import build
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import SpecError, parse_platform
from gpucloud.spec.team import parse_team

CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
RF = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


def _kueue_spec(backend: str = "managed", capacity: dict[str, Any] | None = None, **kueue: Any) -> Any:
    data = platform_data({"kueue": {"enabled": True, **kueue}}, backend=backend)
    if capacity is not None:
        data["nodePools"][0]["capacity"] = capacity
    return parse_platform(data)


def _render(spec: Any) -> Plan:
    def program() -> None:
        Kueue(
            "kueue",
            KueueConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons, pools=spec.node_pools),
            cluster_handle(),
        )

    return run_callable(program, preview=False, region="us-east-1")


def test_flavours_of_a_managed_pool_use_the_labels_its_node_groups_set() -> None:
    """Ground truth is the node group the pool component creates: each flavour's nodeLabels are a subset of the
    labels of exactly one node group, and that group's max size is the flavour's node count."""
    spec = _kueue_spec(capacity={"onDemandBase": 1, "onDemandPercentageAboveBase": 50})
    flavours = {f.name: f for f in pool_flavours(spec.node_pools)}
    assert sorted(flavours) == ["infer-l40s-on-demand", "train-h100-on-demand", "train-h100-spot"]

    pool = spec.node_pools[0]

    def program() -> None:
        GpuNodePool(
            "p",
            GpuNodePoolConfig(
                region=spec.region, tags=spec.all_tags, environment="prod", pool=pool, cluster=cluster_handle()
            ),
        )

    groups = run_callable(program, preview=False, region="us-east-1").of_type("aws:eks/nodeGroup:NodeGroup")
    for name in ("train-h100-on-demand", "train-h100-spot"):
        f = flavours[name]
        matching = [g for g in groups if f.node_labels.items() <= (g.inputs.get("labels") or {}).items()]
        assert len(matching) == 1, name
        assert matching[0].inputs["scalingConfig"]["maxSize"] == f.nodes
    # 4 nodes: 1 on-demand base + half of the other 3 (rounded up) on-demand = 3 on-demand, 1 spot; 8 GPUs each.
    assert flavours["train-h100-on-demand"].quota()["nvidia.com/gpu"] == "24"
    assert flavours["train-h100-spot"].quota()["nvidia.com/gpu"] == "8"


def test_capacity_block_and_karpenter_flavours() -> None:
    data = platform_data({"kueue": {"enabled": True}}, backend="managed")
    data["nodePools"][0]["capacity"] = {
        "reserved": {"kind": "capacity-block", "count": 4, "capacityReservationIds": ["cr-0a1b2c3d4e5f60789"]}
    }
    data["nodePools"][0]["efa"] = {"enabled": True, "placementGroup": False}
    spec = parse_platform(data)
    block = next(f for f in pool_flavours(spec.node_pools) if f.pool == "train-h100")
    assert (block.name, block.node_labels, block.nodes) == (
        "train-h100-capacity-block",
        {"gpucloud.io/pool": "train-h100", "gpucloud.io/capacity-type": "capacity-block"},
        4,
    )
    karp = _kueue_spec(backend="karpenter")
    by_pool = {f.pool: f for f in pool_flavours(karp.node_pools)}
    # All on-demand by default: Karpenter's own capacity-type label selects it.
    assert by_pool["train-h100"].node_labels == {
        "gpucloud.io/pool": "train-h100",
        "karpenter.sh/capacity-type": "on-demand",
    }
    mixed = _kueue_spec(backend="karpenter", capacity={"onDemandBase": 1, "onDemandPercentageAboveBase": 0})
    any_ = next(f for f in pool_flavours(mixed.node_pools) if f.pool == "train-h100")
    # On-demand and spot under one NodePool limit: one flavour capped at the pool's max size.
    assert (any_.name, any_.node_labels, any_.nodes) == ("train-h100-any", {"gpucloud.io/pool": "train-h100"}, 4)


def test_quota_is_node_allocatable_of_the_smallest_type() -> None:
    data = platform_data({"kueue": {"enabled": True}})
    data["nodePools"][1]["instanceTypes"] = ["g6.24xlarge", "g6.12xlarge"]
    spec = parse_platform(data)
    f = next(f for f in pool_flavours(spec.node_pools) if f.pool == "infer-l40s")
    # The smaller g6.12xlarge: 48 vCPU, 192 GiB; EKS AMI reserve for 48 cores = 60+10+5*2+2.5*44 = 190m, and
    # 255 + 11*250 pods + 100 = 3105 MiB.
    assert (f.cpu_millis_per_node, f.memory_mib_per_node) == (47810, 192 * 1024 - 3105)
    assert f.quota() == {"nvidia.com/gpu": "16", "cpu": "191240m", "memory": f"{4 * (192 * 1024 - 3105)}Mi"}


def test_kueue_release_lending_queues_and_flavours() -> None:
    plan = _render(_kueue_spec(capacity={"onDemandBase": 1, "onDemandPercentageAboveBase": 50}))
    release = next(r for r in plan.of_type("kubernetes:helm.sh/v3:Release"))
    assert (release.inputs["chart"], release.inputs["version"], release.inputs["namespace"]) == (
        charts_lock.pin("kueue").release_chart,
        "0.19.2",
        "kueue-system",
    )
    queues = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan.of_type(CQ)}
    assert sorted(queues) == ["gpucloud-on-demand", "gpucloud-spot"]
    od = queues["gpucloud-on-demand"]
    assert od["cohortName"] == "gpucloud"
    assert "namespaceSelector" not in od  # admits nothing itself: lends to the cohort
    assert [f["name"] for f in od["resourceGroups"][0]["flavors"]] == ["train-h100-on-demand", "infer-l40s-on-demand"]
    assert od["resourceGroups"][0]["coveredResources"] == ["nvidia.com/gpu", "cpu", "memory"]
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan.of_type(RF)}
    assert flavors["train-h100-spot"]["nodeTaints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    ]


def test_values_extend_the_charts_own_manager_config() -> None:
    spec = _kueue_spec(waitForPodsReadyTimeout="15m")
    values = kueue_values(spec.addons)
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    chart = yaml.safe_load((charts_lock.pin("kueue").chart_dir / "values.yaml").read_text())
    upstream = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    # Upstream's integrations stay, plus PyTorchJob (commented out in the chart) for the training template.
    assert config["integrations"]["frameworks"] == [*upstream["integrations"]["frameworks"], "kubeflow.org/pytorchjob"]
    assert "kubeflow.org/mpijob" in config["integrations"]["frameworks"]
    assert config["waitForPodsReady"] == {
        "timeout": "15m",
        "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }
    # Everything else is the chart's own configuration, unchanged.
    rest = {
        k: v for k, v in config.items() if k not in ("waitForPodsReady", "fairSharing", "resources", "integrations")
    }
    assert rest == {k: v for k, v in upstream.items() if k != "integrations"}
    assert config["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    assert config["resources"] == {"excludeResourcePrefixes": ["vpc.amazonaws.com/", "hugepages-"]}
    off = yaml.safe_load(
        kueue_values(_kueue_spec(fairSharing=False).addons)["managerConfig"]["controllerManagerConfigYaml"]
    )
    assert "fairSharing" not in off


def test_the_charts_manager_config_is_parsed_once_and_never_changed_by_a_stack() -> None:
    spec = _kueue_spec()
    version = spec.addons.kueue.version
    chart = yaml.safe_load((charts_lock.pin("kueue", version).chart_dir / "values.yaml").read_text())
    upstream = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    first = kueue_values(spec.addons)
    # libyaml and the pure-Python parser agree on the chart's configuration.
    assert chart_manager_config(version) == upstream
    assert kueue_values(spec.addons) == first
    # The memo still holds the chart's configuration: each stack extended a copy of it.
    assert "waitForPodsReady" not in chart_manager_config(version)
    assert "kubeflow.org/pytorchjob" not in chart_manager_config(version)["integrations"]["frameworks"]
    before = chart_manager_config.cache_info().misses
    kueue_values(spec.addons)
    assert chart_manager_config.cache_info().misses == before


def test_kueue_off_creates_nothing_and_bad_values_are_one_clear_message() -> None:
    from gpucloud.components.platform import Platform

    spec = spec_of()
    assert spec.addons.kueue.enabled is False
    plan = run_callable(lambda: build(spec), preview=False, region="us-east-1")
    assert plan.of_type(CQ) == [] and plan.of_type(RF) == []
    assert isinstance(Platform(spec=spec), Platform)
    with pytest.raises(SpecError) as err:
        _kueue_spec(cohort="Not_A_Name")
    assert "addons.kueue.cohort" in str(err.value)
    with pytest.raises(SpecError) as err:
        _kueue_spec(version="0.18.0")
    assert "addons.kueue.version" in str(err.value) and "0.19.2" in str(err.value)


def test_team_cluster_queue_borrows_up_to_the_team_quota_in_its_namespace_only() -> None:
    spec = team_cluster_queue_spec("gpucloud", "vision", ["dev-l4-spot"], 12, "96", "768Gi", "2")
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "vision"}}
    assert spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert spec["fairSharing"] == {"weight": "2"}
    assert spec["resourceGroups"][0]["flavors"] == [
        {
            "name": "dev-l4-spot",
            "resources": [
                {"name": "nvidia.com/gpu", "nominalQuota": "0", "borrowingLimit": "12"},
                {"name": "cpu", "nominalQuota": "0", "borrowingLimit": "96"},
                {"name": "memory", "nominalQuota": "0", "borrowingLimit": "768Gi"},
            ],
        }
    ]


def test_team_queue_needs_a_pool() -> None:
    base = {
        "name": "vision",
        "environment": "dev",
        "region": "us-west-2",
        "platformStack": "acme/gpucloud/dev",
        "namespace": "vision",
        "tags": {"CostCenter": "ml", "Team": "vision", "Project": "gpucloud"},
        "quota": {"gpus": 8},
        "queue": {},
    }
    with pytest.raises(SpecError) as err:
        parse_team(base)
    assert "queue.pools" in str(err.value)
    assert parse_team({**base, "queue": {"pools": ["dev-l4"]}}).queue.pools == ["dev-l4"]


@pytest.mark.parametrize("pytorch", [False, True], ids=["job", "pytorchjob"])
def test_training_job_is_submitted_suspended_through_the_local_queue(pytorch: bool) -> None:
    from test_workloads import run, training

    from gpucloud.components.workloads import TrainingJob

    kind = "kubernetes:kubeflow.org/v1:PyTorchJob" if pytorch else "kubernetes:batch/v1:Job"
    queued = run(lambda: TrainingJob("t", training(queue_name="vision-queue", use_pytorch_job=pytorch))).of_type(kind)
    meta = queued[0].inputs["metadata"]
    assert meta["labels"]["kueue.x-k8s.io/queue-name"] == "vision-queue"
    assert meta["annotations"] == {"pulumi.com/skipAwait": "true"}
    spec = queued[0].inputs["spec"]
    assert (spec["runPolicy"]["suspend"] if pytorch else spec["suspend"]) is True
    # The pods keep their own labels: the PDB and the headless Service select them as before.
    template = spec["pytorchReplicaSpecs"]["Master"]["template"] if pytorch else spec["template"]
    assert "kueue.x-k8s.io/queue-name" not in template["metadata"]["labels"]
    plain = run(lambda: TrainingJob("t", training(use_pytorch_job=pytorch))).of_type(kind)[0].inputs
    assert "kueue.x-k8s.io/queue-name" not in plain["metadata"]["labels"]
    assert "suspend" not in (plain["spec"]["runPolicy"] if pytorch else plain["spec"])
