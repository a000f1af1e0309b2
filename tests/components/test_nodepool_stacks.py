"""The three stacks' node pools, built through the platform's _build_node_pools with a literal ClusterHandle
(the network/cluster code that sets platform.cluster lives on another branch)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from nodepool_fixtures import cluster_handle, run

from gpucloud.components.platform import Platform, _build_node_pools
from gpucloud.plan import Plan
from gpucloud.spec import PlatformSpec, parse_platform

ROOT = Path(__file__).resolve().parents[2]
LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
PG = "aws:ec2/placementGroup:PlacementGroup"
RULE = "aws:cloudwatch/eventRule:EventRule"
Q = "aws:sqs/queue:Queue"
NP = "kubernetes:karpenter.sh/v1:NodePool"
REL = "kubernetes:helm.sh/v3:Release"


def stack_spec(env: str) -> PlatformSpec:
    data = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{env}.yaml").read_text())
    return parse_platform(data["config"]["gpucloud:platform"])


def plan_stack(env: str) -> tuple[Plan, Platform]:
    spec = stack_spec(env)
    holder: dict[str, Platform] = {}

    def program() -> None:
        from gpucloud.components.interfaces import ClusterHandle

        base = cluster_handle()
        cluster = ClusterHandle(
            **{
                **{f: getattr(base, f) for f in base.__dataclass_fields__},
                "subnet_ids_by_az": {az: f"subnet-{az}" for az in spec.availability_zones},
                "kubernetes_version": spec.cluster.kubernetes_version,
            }
        )
        platform = Platform(spec=spec, cluster=cluster)
        _build_node_pools(spec, platform)
        holder["p"] = platform

    plan = run(program)
    return plan, holder["p"]


@pytest.mark.parametrize("env", ["dev", "staging", "prod"])
def test_stack_specs_parse(env: str) -> None:
    assert stack_spec(env).node_pools


def test_prod_training_pool() -> None:
    plan, platform = plan_stack("prod")
    lt_od = plan.find(LT, "gpucloud-prod-train-h100-on-demand-lt")
    lt_spot = plan.find(LT, "gpucloud-prod-train-h100-spot-lt")
    for lt in (lt_od, lt_spot):
        nis = lt.get("networkInterfaces")
        assert len(nis) == 32  # p5.48xlarge: 32 EFA interfaces
        assert nis[0]["interfaceType"] == "efa" and {n["interfaceType"] for n in nis[1:]} == {"efa-only"}
        assert set(lt.get("placement")) == {"groupName"}
    assert plan.find(PG, "gpucloud-prod-train-h100-placement").get("strategy") == "cluster"
    od = plan.find(NG, "gpucloud-prod-train-h100-on-demand")
    spot = plan.find(NG, "gpucloud-prod-train-h100-spot")
    assert (od.get("capacityType"), od.get("scalingConfig")) == (
        "ON_DEMAND",
        # "2 on-demand nodes always": onDemandBase 2 is the group's floor although the pool's minSize is 0.
        {"minSize": 2.0, "desiredSize": 2.0, "maxSize": 5.0},
    )
    assert (spot.get("capacityType"), spot.get("scalingConfig")) == (
        "SPOT",
        {"minSize": 0.0, "desiredSize": 0.0, "maxSize": 3.0},
    )
    assert od.get("subnetIds") == ["subnet-us-east-1a"]
    # H200 Capacity Block: its own group, no placement group
    cb = plan.find(NG, "gpucloud-prod-train-h200-capacity-block")
    assert cb.get("capacityType") == "CAPACITY_BLOCK"
    assert len(plan.find(LT, "gpucloud-prod-train-h200-capacity-block-lt").get("networkInterfaces")) == 16
    assert "gpucloud-prod-train-h200-placement" not in {r.name for r in plan.of_type(PG)}
    # the interruption queue with its rules, consumed by NTH (no Karpenter pool in prod)
    assert [q.name for q in plan.of_type(Q)] == ["gpucloud-prod-interruption-node-termination-handler"]
    # the four NTH acts on, plus the two reservation events the relay turns into per-instance notices for the
    # Capacity Block pool (NTH 1.25 drops both)
    assert sorted(r.name.removeprefix("gpucloud-prod-interruption-") for r in plan.of_type(RULE)) == [
        "capacity-block-expiry",
        "health",
        "rebalance",
        "reservation-interruption",
        "spot-interruption",
        "state-change",
    ]
    relay_targets = {t.name: t.get("arn") for t in plan.of_type("aws:cloudwatch/eventTarget:EventTarget")}
    assert "gpucloud-prod-interruption-reservation-interruption-node-termination-handler" not in relay_targets
    assert "gpucloud-prod-interruption-capacity-block-expiry-relay" in relay_targets
    assert [r.name for r in plan.of_type(REL)] == ["gpucloud-prod-nth-release"]
    assert set(platform.exports) == {"interruptionQueueName", "interruptionQueueArn", "interruptionQueues", "nodePools"}
    assert set(platform.exports["nodePools"]) == {"train-h100", "train-h200", "infer-l40s"}


def test_dev_spot_heavy_inference_scales_to_zero() -> None:
    plan, _ = plan_stack("dev")
    groups = [r for r in plan.of_type(NG) if r.name.startswith("gpucloud-dev-infer-l40s")]
    assert [(g.name, g.get("capacityType"), g.get("scalingConfig.minSize")) for g in groups] == [
        ("gpucloud-dev-infer-l40s-spot", "SPOT", 0.0)
    ]
    asg = plan.find(ASG, "gpucloud-dev-dev-l4-asg")
    assert asg.get("minSize") == 0.0
    assert asg.get("mixedInstancesPolicy.instancesDistribution.onDemandPercentageAboveBaseCapacity") == 0.0
    assert len(asg.get("mixedInstancesPolicy.launchTemplate.overrides")) == 3
    # the self-managed pool owns the node role's access entry; the ASG termination hook reaches NTH
    assert [r.name for r in plan.of_type("aws:eks/accessEntry:AccessEntry")] == ["gpucloud-dev-dev-l4-node-access"]
    assert "gpucloud-dev-interruption-asg-terminate" in {r.name for r in plan.of_type(RULE)}


def test_staging_karpenter_and_nth_use_separate_queues() -> None:
    plan, _ = plan_stack("staging")
    assert sorted(q.name for q in plan.of_type(Q)) == [
        "gpucloud-staging-interruption-karpenter",
        "gpucloud-staging-interruption-node-termination-handler",
    ]
    assert sorted(r.name for r in plan.of_type(REL)) == [
        "gpucloud-staging-karpenter-release",
        "gpucloud-staging-nth-release",
    ]
    np_ = plan.find(NP, "gpucloud-staging-infer-l40s-nodepool")
    assert np_.get("spec.template.spec.requirements.0.values") == ["spot", "on-demand"]
    assert np_.get("spec.limits") == {"nvidia.com/gpu": "6"}
    # no managed node group for the karpenter pool
    assert not [r for r in plan.of_type(NG) if "infer-l40s" in r.name]


def test_nth_managed_tag_only_on_nth_pools() -> None:
    plan, _ = plan_stack("staging")
    lt = plan.find(LT, "gpucloud-staging-train-l40s-spot-lt")
    inst = {s["resourceType"]: s["tags"] for s in lt.get("tagSpecifications")}["instance"]
    assert inst["aws-node-termination-handler/managed"] == "true"
    nc = plan.find("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "gpucloud-staging-infer-l40s-nodeclass")
    assert "aws-node-termination-handler/managed" not in nc.get("spec.tags")


def test_root_program_pools_share_the_system_groups_access_entry() -> None:
    from gpucloud.plan import run_program

    plan = run_program(Path(__file__).resolve().parents[2], "dev")
    # The system managed node group already gives the node role its EC2_LINUX entry (EKS creates it), so the
    # self-managed pool must not add a second one.
    assert [r.name for r in plan.of_type("aws:eks/accessEntry:AccessEntry") if r.get("type") == "EC2_LINUX"] == []
    assert plan.find(ASG, "gpucloud-dev-dev-l4-asg").get("minSize") == 0.0
    assert {r.name for r in plan.of_type(NG)} >= {"gpucloud-dev-infer-l40s-spot"}
