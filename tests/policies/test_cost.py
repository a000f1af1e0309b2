"""Cost guardrails."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, remediate, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies.cost import spend_cap

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
TAGS = {"CostCenter": "ml", "Team": "t", "Project": "p", "Env": "dev"}


def test_cost_tags_on_every_place_tags_must_be():
    full_specs = [{"resourceType": k, "tags": TAGS} for k in ("instance", "volume")]
    resources = [
        Res(NG, "ng-ok", {"tags": TAGS}),
        Res(NG, "ng-missing-team", {"tags": {k: v for k, v in TAGS.items() if k != "Team"}}),
        Res(NG, "ng-untagged", {}),
        Res(LT, "lt-ok", {"tags": TAGS, "tagSpecifications": full_specs}),
        Res(LT, "lt-no-volume-spec", {"tags": TAGS, "tagSpecifications": full_specs[:1]}),
        Res(ASG, "asg-ok", {"tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()]}),
        Res(
            ASG,
            "asg-not-propagated",
            {"tags": [{"key": k, "value": v, "propagateAtLaunch": False} for k, v in TAGS.items()]},
        ),
        Res("aws:s3/bucket:Bucket", "bucket-untagged", {"bucket": "b"}),
        Res("aws:fsx/lustreFileSystem:LustreFileSystem", "fsx-ok", {"tags": TAGS}),
        Res("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "nodeclass-ok", {"spec": {"tags": TAGS}}),
        Res("aws:ec2/vpc:Vpc", "not-checked", {}),
    ]
    assert flagged("cost-tags", resources) == {
        "ng-missing-team",
        "ng-untagged",
        "lt-no-volume-spec",
        "asg-not-propagated",
        "bucket-untagged",
    }
    assert flagged("cost-tags", resources[:1], {"extraRequiredTags": ["ExpiresOn"]}) == {"ng-ok"}
    # One computed tag value hides the whole map at preview (pulumi/pulumi#7854).
    with pytest.raises(UnknownValueError):
        resource_messages("cost-tags", Res(NG, "u", {"tags": {**TAGS, "Team": UNKNOWN}}))


def test_cost_tags_remediation_fills_defaults():
    cfg = {"tagDefaults": {"CostCenter": "unassigned", "Team": "unassigned", "Project": "p", "Env": "dev"}}
    fixed = remediate("cost-tags", Res(LT, "lt", {"tags": {"Team": "ml"}, "instanceType": "g6e.xlarge"}), cfg)
    filled = {"Team": "ml", "CostCenter": "unassigned", "Project": "p", "Env": "dev"}
    assert fixed == {
        "instanceType": "g6e.xlarge",
        "tags": filled,
        "tagSpecifications": [
            {
                "resourceType": "instance",
                "tags": {"CostCenter": "unassigned", "Team": "unassigned", "Project": "p", "Env": "dev"},
            },
            {
                "resourceType": "volume",
                "tags": {"CostCenter": "unassigned", "Team": "unassigned", "Project": "p", "Env": "dev"},
            },
        ],
    }
    assert remediate("cost-tags", Res(NG, "ok", {"tags": TAGS}), cfg) is None
    assert remediate("cost-tags", Res(NG, "no-defaults", {})) is None


def test_budget_and_anomaly():
    budget = Res(
        "aws:budgets/budget:Budget",
        "budget",
        {
            "budgetType": "COST",
            "timeUnit": "MONTHLY",
            "notifications": [{"notificationType": "FORECASTED"}, {"notificationType": "ACTUAL"}],
        },
    )
    monitor = Res("aws:costexplorer/anomalyMonitor:AnomalyMonitor", "monitor", {"monitorType": "CUSTOM"})
    sub = Res("aws:costexplorer/anomalySubscription:AnomalySubscription", "sub", {"thresholdExpression": {}})
    old_sub = Res("aws:costexplorer/anomalySubscription:AnomalySubscription", "old", {"threshold": 100.0})
    assert stack_messages("budget-and-anomaly", [budget, monitor, sub]) == []
    [(where, message)] = stack_messages("budget-and-anomaly", [monitor, old_sub])
    assert where == ""
    assert "no monthly COST budget" in message and "deprecated 'threshold'" in message
    actual_only = Res(
        "aws:budgets/budget:Budget",
        "b",
        {"budgetType": "COST", "timeUnit": "MONTHLY", "notifications": [{"notificationType": "ACTUAL"}]},
    )
    [(_, message)] = stack_messages("budget-and-anomaly", [actual_only, monitor, sub])
    assert "no FORECASTED notification" in message
    with pytest.raises(UnknownValueError):
        stack_messages("budget-and-anomaly", [Res("aws:budgets/budget:Budget", "u", {"budgetType": UNKNOWN})])


def test_scale_to_zero():
    resources = [
        Res(NG, "gpu-zero", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": {"minSize": 0.0}}),
        Res(NG, "gpu-warm", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": {"minSize": 1.0}}),
        Res(NG, "gpu-min-unset", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": {"maxSize": 2.0}}),
        Res(NG, "gpu-by-ami", {"amiType": "AL2023_x86_64_NVIDIA", "scalingConfig": {"minSize": 2.0}}),
        Res(NG, "cpu-warm", {"instanceTypes": ["m7i.large"], "scalingConfig": {"minSize": 2.0}}),
        Res(NODE_POOL, "np-gpu-no-disruption", {"spec": {"limits": {"nvidia.com/gpu": 8.0}, "template": {"spec": {}}}}),
        Res(
            NODE_POOL,
            "np-gpu-ok",
            {
                "spec": {
                    "limits": {"nvidia.com/gpu": 8.0},
                    "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"},
                    "template": {"spec": {"expireAfter": "720h"}},
                }
            },
        ),
    ]
    assert flagged("scale-to-zero", resources) == {"gpu-warm", "gpu-min-unset", "gpu-by-ami", "np-gpu-no-disruption"}
    assert flagged("scale-to-zero", resources, {"exemptPools": ["gpu-warm"]}) == {
        "gpu-min-unset",
        "gpu-by-ami",
        "np-gpu-no-disruption",
    }
    with pytest.raises(UnknownValueError):
        resource_messages("scale-to-zero", Res(NG, "u", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": UNKNOWN}))


def test_reserved_capacity_discipline():
    resources = [
        Res(NG, "block", {"capacityType": "CAPACITY_BLOCK", "instanceTypes": []}),
        Res(NG, "on-demand", {"capacityType": "ON_DEMAND"}),
        Res(
            LT,
            "lt-block",
            {
                "instanceMarketOptions": {"marketType": "capacity-block"},
                "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": "cr-111"}},
            },
        ),
        Res(
            LT,
            "lt-odcr",
            {"capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": "cr-222"}}},
        ),
    ]
    assert flagged("reserved-capacity-discipline", resources) == {"block", "lt-block"}
    prod = {"allowCapacityBlocks": True, "allowedReservationIds": ["cr-111"]}
    assert flagged("reserved-capacity-discipline", resources, prod) == {"lt-odcr"}
    assert flagged("reserved-capacity-discipline", resources, {"allowCapacityReservations": False}) == {
        "block",
        "lt-block",
        "lt-odcr",
    }
    with pytest.raises(UnknownValueError):
        resource_messages("reserved-capacity-discipline", Res(NG, "u", {"capacityType": UNKNOWN}))


def test_nonprod_spot_share():
    spot = Res(NG, "spot", {"capacityType": "SPOT", "instanceTypes": ["g6e.xlarge"], "scalingConfig": {"maxSize": 4.0}})
    on_demand = Res(NG, "on-demand", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": {"maxSize": 4.0}})
    asg = Res(
        ASG,
        "asg",
        {
            "maxSize": 4.0,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 0.0},
                "launchTemplate": {"overrides": [{"instanceType": "g6e.xlarge"}]},
            },
        },
    )
    assert stack_flagged("nonprod-spot-share", [spot, on_demand]) == set()  # exactly 50%
    assert stack_flagged("nonprod-spot-share", [spot, on_demand], {"minSpotPercent": 60}) == {"on-demand"}
    assert stack_flagged("nonprod-spot-share", [on_demand]) == {"on-demand"}
    assert stack_flagged("nonprod-spot-share", [asg, on_demand], {"minSpotPercent": 50}) == set()
    with pytest.raises(UnknownValueError):
        stack_flagged(
            "nonprod-spot-share",
            [
                Res(
                    NG,
                    "u",
                    {"capacityType": UNKNOWN, "instanceTypes": ["g6e.xlarge"], "scalingConfig": {"maxSize": 1.0}},
                )
            ],
        )


def test_monthly_spend_cap_reads_the_cost_section():
    pool = Res(NG, "pool", {"instanceTypes": ["p5.48xlarge"]})
    cost = {
        "monthly": 50_000.0,
        "monthly_ceiling": 300_000.0,
        "items": [{"urn": "urn:pulumi:test::test::aws:eks/nodeGroup:NodeGroup::pool", "monthly_ceiling": 250_000.0}],
        "diff": {"monthly_ceiling_delta": 120_000.0},
    }
    found = stack_messages(
        "monthly-spend-cap",
        [pool],
        {"maxMonthlyUsd": 200_000, "maxPoolMonthlyUsd": 100_000, "maxMonthlyDeltaUsd": 100_000},
        cost=cost,
    )
    assert [w for w, _ in found] == ["pool", "", ""]
    assert (
        stack_messages("monthly-spend-cap", [pool], {"maxMonthlyUsd": 400_000, "maxPoolMonthlyUsd": 300_000}, cost=cost)
        == []
    )
    # Caps unset (0): nothing to check, the cost is not needed.
    assert stack_messages("monthly-spend-cap", [pool], cost=cost) == []
    # The priced plan is an argument, not state: without it the policy prices the resources itself again.
    assert spend_cap.GUARDRAIL.bind_cost is spend_cap.make_validate


def test_monthly_spend_cap_sums_a_pools_node_groups_with_the_real_cost_engine():
    from pathlib import Path

    from gpucloud.guard import evaluate_plan
    from gpucloud.plan import run_program
    from gpucloud.report.pipeline import cost_section

    plan = run_program(Path(__file__).resolve().parents[2], "prod")
    # Priced as of a fixed date: from 2026-12-02 the prod cluster's Kubernetes 1.34 is in extended support.
    plan.config["gpucloud:pricing"] = {"asOf": "2026-11-30"}
    cost = cost_section(plan)
    # train-h100 at max size: ON_DEMAND group 5 x p5.48xlarge ($200,896) + SPOT group 3 x p5.48xlarge ($56,050)
    # + root volumes; each group alone stays under $250k, the pool does not.
    result = evaluate_plan(
        plan, policy_config={"all": "advisory", "monthly-spend-cap": {"maxPoolMonthlyUsd": 250_000}}, cost=cost
    )
    flagged = [v for v in result["violations"] if v["policy"] == "monthly-spend-cap"]
    assert [v["urn"].rsplit("::", 1)[-1] for v in flagged] == ["gpucloud-prod-train-h100"]
    assert "costs up to $257,114" in flagged[0]["message"]  # root volumes include gp3 throughput above 125 MB/s
    stack_cap = evaluate_plan(
        plan, policy_config={"all": "advisory", "monthly-spend-cap": {"maxMonthlyUsd": 400_000}}, cost=cost
    )
    messages = [v["message"] for v in stack_cap["violations"] if v["policy"] == "monthly-spend-cap"]
    assert len(messages) == 1
    assert messages[0].startswith("stack: the stack costs up to $491,381/month at maximum sizes, above maxMonthlyUsd")
