"""GPU-safe rollouts, one per-pool choice in three encodings: managed node group updateConfig, self-managed ASG
instance refresh, Karpenter disruption budgets; drains sized by the declared checkpoint model."""

from __future__ import annotations

from typing import Any

import pytest
from nodepool_fixtures import build_pool, pool
from pydantic import ValidationError

from gpucloud.spec.pools import NodePoolSpec

NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
NP = "kubernetes:karpenter.sh/v1:NodePool"
CR = "cr-0123456789abcdef0"
P5 = {"instanceTypes": ["p5.48xlarge"], "workload": "training", "availabilityZones": ["us-east-1a"]}
BLOCK = {
    "instanceTypes": ["p5en.48xlarge"],
    "workload": "training",
    "availabilityZones": ["us-east-1a"],
    "minSize": 0,
    "desiredSize": 2,
    "maxSize": 2,
    "capacity": {"reserved": {"kind": "capacity-block", "count": 2, "capacityReservationIds": [CR]}},
}
CHECKPOINT = {"checkpoint": {"intervalMinutes": 30, "writeSeconds": 240}}


# --- managed node groups ---------------------------------------------------------------------------------------


def test_a_capacity_block_group_rolls_minimal_one_node_at_a_time() -> None:
    [group] = build_pool(pool(**BLOCK)).of_type(NG)
    assert group.get("updateConfig") == {"maxUnavailable": 1.0, "updateStrategy": "MINIMAL"}


def test_an_on_demand_inference_group_gets_a_quarter_of_its_nodes_bounded() -> None:
    # 12 on-demand nodes at most: 12 // 4 = 3 replaced at once, with the default (surge) strategy.
    group = build_pool(pool(minSize=0, desiredSize=4, maxSize=12)).find(NG, "p-on-demand")
    assert group.get("updateConfig") == {"maxUnavailable": 3.0}


def test_a_small_inference_group_still_moves_one_node() -> None:
    group = build_pool(pool(maxSize=3, desiredSize=1)).find(NG, "p-on-demand")
    assert group.get("updateConfig") == {"maxUnavailable": 1.0}


def test_training_on_demand_and_spot_groups_go_one_node_at_a_time() -> None:
    plan = build_pool(
        pool(
            workload="training",
            maxSize=8,
            capacity={"onDemandBase": 2, "onDemandPercentageAboveBase": 50},
        )
    )
    assert {g.name: g.get("updateConfig") for g in plan.of_type(NG)} == {
        "p-on-demand": {"maxUnavailable": 1.0},
        "p-spot": {"maxUnavailable": 1.0},
    }


def test_the_spec_sets_the_pace_as_a_count_or_a_percentage() -> None:
    counted = build_pool(pool(maxSize=12, rollout={"maxUnavailable": 5})).find(NG, "p-on-demand")
    assert counted.get("updateConfig") == {"maxUnavailable": 5.0}
    share = build_pool(pool(maxSize=12, rollout={"maxUnavailablePercentage": 10})).find(NG, "p-on-demand")
    assert share.get("updateConfig") == {"maxUnavailablePercentage": 10.0}
    # The spec's pace reaches reserved groups too, still terminate-before-launch.
    [block] = build_pool(pool(**BLOCK, rollout={"maxUnavailable": 2})).of_type(NG)
    assert block.get("updateConfig") == {"maxUnavailable": 2.0, "updateStrategy": "MINIMAL"}


@pytest.mark.parametrize(
    ("rollout", "field", "fix"),
    [
        ({"maxUnavailable": 0}, "rollout.maxUnavailable", "greater than or equal to 1"),
        ({"maxUnavailable": 101}, "rollout.maxUnavailable", "less than or equal to 100"),
        ({"maxUnavailablePercentage": 0}, "rollout.maxUnavailablePercentage", "greater than or equal to 1"),
        ({"maxUnavailable": 2, "maxUnavailablePercentage": 10}, "maxUnavailablePercentage", "not both"),
        ({"checkpoint": {"intervalMinutes": 30, "writeSeconds": 0}}, "writeSeconds", "greater than or equal to 1"),
    ],
)
def test_bad_rollout_values_name_the_field(rollout: dict[str, Any], field: str, fix: str) -> None:
    with pytest.raises(ValidationError) as err:
        pool(rollout=rollout)
    text = str(err.value)
    assert field.split(".")[-1] in text and fix in text


def test_a_freeze_window_is_refused_off_karpenter() -> None:
    with pytest.raises(ValidationError, match=r"rollout\.freeze: a freeze window is a Karpenter disruption budget"):
        pool(rollout={"freeze": {"schedule": "0 8 * * mon-fri", "duration": "10h"}})


# --- self-managed ASGs ----------------------------------------------------------------------------------------


def test_a_self_managed_asg_refreshes_launch_before_terminate_at_the_pace() -> None:
    # Inference, max 10: pace 10 // 4 = 2 nodes = 20% of the group; min 100 / max 120 launches first.
    asg = build_pool(pool(backend="self-managed", maxSize=10, desiredSize=3)).find(ASG, "p-asg")
    assert asg.get("instanceRefresh") == {
        "strategy": "Rolling",
        "preferences": {"minHealthyPercentage": 100.0, "maxHealthyPercentage": 120.0, "skipMatching": True},
    }


def test_an_odcr_bound_asg_terminates_before_it_launches() -> None:
    spec = pool(
        backend="self-managed",
        **P5,
        maxSize=4,
        capacity={"reserved": {"kind": "odcr", "count": 4, "capacityReservationIds": [CR]}},
    )
    # Training, one node of 4 at a time: 25%. Max 100 forbids a surge; min 75 lets one node go first.
    asg = build_pool(spec).find(ASG, "p-asg")
    assert asg.get("instanceRefresh.preferences") == {
        "minHealthyPercentage": 75.0,
        "maxHealthyPercentage": 100.0,
        "skipMatching": True,
    }


def test_the_checkpoint_model_paces_the_refresh_and_sizes_the_drain_hook() -> None:
    spec = pool(backend="self-managed", **P5, maxSize=4, rollout=CHECKPOINT)
    asg = build_pool(spec, interruption=True).find(ASG, "p-asg")
    assert asg.get("instanceRefresh.preferences") == {
        "minHealthyPercentage": 100.0,
        "maxHealthyPercentage": 125.0,
        "skipMatching": True,
        # One node (25%) per batch; after each, one interval (1800 s) plus the write (240 s).
        "checkpointPercentages": [25.0, 50.0, 75.0, 100.0],
        "checkpointDelay": "2040",
    }
    # The pods' grace (240 s write + 30 s) plus NTH's 60 s to evict and complete the hook.
    assert asg.get("initialLifecycleHooks")[0]["heartbeatTimeout"] == 330.0


def test_without_a_checkpoint_model_the_drain_hook_keeps_its_300_seconds() -> None:
    asg = build_pool(pool(backend="self-managed"), interruption=True).find(ASG, "p-asg")
    assert asg.get("initialLifecycleHooks")[0]["heartbeatTimeout"] == 300.0


# --- Karpenter ------------------------------------------------------------------------------------------------


def test_a_karpenter_pool_rolls_drift_at_its_pace() -> None:
    np_ = build_pool(pool(backend="karpenter", maxSize=12)).find(NP, "p-nodepool")
    assert np_.get("spec.disruption.budgets") == [{"nodes": "3"}, {"nodes": "3", "reasons": ["Drifted"]}]


def test_a_karpenter_pool_with_a_percentage_pace_and_a_freeze_window() -> None:
    spec = pool(
        backend="karpenter",
        rollout={"maxUnavailablePercentage": 10, "freeze": {"schedule": "0 8 * * mon-fri", "duration": "10h"}},
    )
    assert build_pool(spec).find(NP, "p-nodepool").get("spec.disruption.budgets") == [
        {"nodes": "10%"},
        {"nodes": "10%", "reasons": ["Drifted"]},
        {"nodes": "0", "schedule": "0 8 * * mon-fri", "duration": "10h"},
    ]


def test_a_reservation_only_karpenter_pool_gets_no_drift_replacement() -> None:
    spec = pool(
        backend="karpenter",
        **P5,
        maxSize=4,
        capacity={"reserved": {"kind": "capacity-block", "count": 4, "capacityReservationIds": [CR]}},
    )
    budgets = build_pool(spec).find(NP, "p-nodepool").get("spec.disruption.budgets")
    assert budgets == [{"nodes": "1"}, {"nodes": "0", "reasons": ["Drifted"]}]


def test_the_checkpoint_model_sizes_the_karpenter_node_grace() -> None:
    spec = pool(backend="karpenter", workload="training", rollout=CHECKPOINT)
    # One interval (1800 s) plus the write (240 s) plus the 30 s margin.
    assert build_pool(spec).find(NP, "p-nodepool").get("spec.template.spec.terminationGracePeriod") == "2070s"
    explicit = pool(backend="karpenter", rollout=CHECKPOINT, karpenter={"terminationGracePeriod": "3h"})
    assert build_pool(explicit).find(NP, "p-nodepool").get("spec.template.spec.terminationGracePeriod") == "3h"


def test_the_drain_grace_is_the_write_plus_the_margin() -> None:
    spec = NodePoolSpec.model_validate(
        {"name": "t", "workload": "training", "instanceTypes": ["p5.48xlarge"], "minSize": 0, "desiredSize": 0}
        | {"maxSize": 2, "rollout": CHECKPOINT}
    )
    assert spec.rollout.drain_grace_seconds == 270
    assert pool().rollout.drain_grace_seconds is None


# --- what the upgrade checks read ----------------------------------------------------------------------------


def test_self_managed_and_karpenter_pools_record_their_kubelet_minor_and_release() -> None:
    asg = build_pool(pool(backend="self-managed")).find(ASG, "p-asg")
    tags = {t["key"]: (t["value"], t["propagateAtLaunch"]) for t in asg.get("tags")}
    assert tags["gpucloud.io/kubernetes-version"] == ("1.34", False)
    assert tags["gpucloud.io/ami-release"] == ("1.34.9-20260714", False)
    nc = build_pool(pool(backend="karpenter")).find("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "p-nodeclass")
    assert nc.get("metadata.labels") == {
        "gpucloud.io/pool": "pool",
        "gpucloud.io/kubernetes-version": "1.34",
        "gpucloud.io/ami-release": "1.34.9-20260714",
    }
    # The alias stays pinned to that release's date, never @latest.
    assert nc.get("spec.amiSelectorTerms") == [{"alias": "al2023@v20260714"}]


# --- aws-node-termination-handler -----------------------------------------------------------------------------


def test_nth_starts_a_scheduled_drain_ahead_of_the_longest_checkpointed_drain() -> None:
    from gpucloud.components.nodepools.rollout import nth_node_grace_seconds
    from gpucloud.components.termination_handler import nth_values

    slow = pool(name="slow", rollout=CHECKPOINT)  # 240 s write: 270 s grace + 60 s NTH overhead
    fast = pool(name="fast", rollout={"checkpoint": {"intervalMinutes": 30, "writeSeconds": 30}})
    karpenter = pool(
        name="k", backend="karpenter", rollout={"checkpoint": {"intervalMinutes": 60, "writeSeconds": 900}}
    )
    assert nth_node_grace_seconds([slow, fast, karpenter], 120) == 330
    assert nth_node_grace_seconds([pool()], 120) == 120
    assert nth_values("https://q", "us-east-1", 330)["nodeTerminationGracePeriod"] == 330
    # The chart's own default (120) is left to the chart.
    assert "nodeTerminationGracePeriod" not in nth_values("https://q", "us-east-1")


def test_prod_declares_a_checkpoint_model_on_its_training_pools() -> None:
    from pathlib import Path

    import yaml

    from gpucloud.spec import parse_platform

    root = Path(__file__).resolve().parents[2]
    spec = parse_platform(yaml.safe_load((root / "stacks/Pulumi.prod.yaml").read_text())["config"]["gpucloud:platform"])
    graces = {p.name: p.rollout.drain_grace_seconds for p in spec.node_pools}
    assert graces == {"train-h100": 120, "train-h200": 120, "infer-l40s": None}


# --- against the vendored Karpenter CRD -----------------------------------------------------------------------

CRD = "vendor/upstream/charts/karpenter-1.12.1/crds/karpenter.sh_nodepools.yaml"


@pytest.mark.parametrize(
    "rollout",
    [
        {},
        {"maxUnavailablePercentage": 10, "freeze": {"schedule": "0 8 * * mon-fri", "duration": "10h"}},
        {"maxUnavailable": 2, "checkpoint": {"intervalMinutes": 30, "writeSeconds": 240}},
    ],
)
def test_the_node_pool_spec_validates_against_the_vendored_crd(rollout: dict[str, Any]) -> None:
    from pathlib import Path

    import jsonschema
    import yaml

    from gpucloud.components.nodepools.karpenter_pool import karpenter_node_pool_spec
    from gpucloud.components.nodepools.userdata import Taint

    crd = yaml.safe_load((Path(__file__).resolve().parents[2] / CRD).read_text())
    [v1] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec = karpenter_node_pool_spec(
        pool(backend="karpenter", workload="training", rollout=rollout),
        ["us-east-1a"],
        {"gpucloud.io/pool": "pool"},
        Taint("nvidia.com/gpu", "true", "NoSchedule"),
    )
    jsonschema.Draft7Validator(schema).validate(spec)
    assert spec["disruption"]["budgets"][1]["reasons"] == ["Drifted"]
