"""GPU type and shape guardrails over every capacity path."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies.base import UndecidedError

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
SUBNET = "aws:ec2/subnet:Subnet"
DEV = {"allowedFamilies": ["g5", "g6", "g6e"]}
TRAINING = {"gpucloud.io/workload": "training"}


def nodepool(name, requirements, limits=None, labels=None):
    spec = {"template": {"metadata": {"labels": labels or {}}, "spec": {"requirements": requirements}}}
    if limits is not None:
        spec["limits"] = limits
    return Res(NODE_POOL, name, {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": spec})


def test_family_allowlist_checks_every_capacity_path():
    resources = [
        Res(NG, "ng-ok", {"instanceTypes": ["g6e.xlarge", "m7i.large"]}),
        Res(NG, "ng-p5", {"instanceTypes": ["g6e.xlarge", "p5.48xlarge"]}),
        Res(LT, "lt-p5", {"instanceType": "p5.48xlarge"}),
        Res(LT, "lt-unset", {}),
        Res(
            ASG,
            "asg-p4d",
            {
                "mixedInstancesPolicy": {
                    "launchTemplate": {"overrides": [{"instanceType": "g6.12xlarge"}, {"instanceType": "p4d.24xlarge"}]}
                }
            },
        ),
        Res(INSTANCE, "instance-p5", {"instanceType": "p5.4xlarge"}),
        Res(INSTANCE, "instance-cpu", {"instanceType": "c7i.large"}),
        nodepool(
            "np-ok",
            [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]}],
            {"nvidia.com/gpu": 8.0},
        ),
        nodepool(
            "np-p5",
            [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}],
            {"nvidia.com/gpu": 8.0},
        ),
        nodepool(
            "np-gpu-name",
            [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["h100"]}],
            {"nvidia.com/gpu": 8.0},
        ),
        nodepool(
            "np-unconstrained-gpu",
            [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
            {"nvidia.com/gpu": 8.0},
        ),
        nodepool("np-cpu", [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]),
    ]
    assert flagged("gpu-family-allowlist", resources, DEV) == {
        "ng-p5",
        "lt-p5",
        "asg-p4d",
        "instance-p5",
        "np-p5",
        "np-gpu-name",
        "np-unconstrained-gpu",
    }
    assert flagged("gpu-family-allowlist", resources) == {"np-unconstrained-gpu"}
    with pytest.raises(UnknownValueError):
        resource_messages("gpu-family-allowlist", Res(LT, "u", {"instanceType": UNKNOWN}), DEV)


def test_family_allowlist_rejects_typos_with_a_suggestion():
    [message] = resource_messages("gpu-family-allowlist", Res(NG, "typo", {"instanceTypes": ["p5.48xlarg"]}))
    assert "unknown instance type 'p5.48xlarg' (did you mean 'p5.48xlarge'" in message


def test_min_gpu_memory_applies_to_training_pools_only():
    resources = [
        Res(NG, "train-l4", {"instanceTypes": ["g6.12xlarge"], "labels": TRAINING}),
        Res(NG, "train-h100", {"instanceTypes": ["p5.48xlarge"], "labels": TRAINING}),
        Res(NG, "infer-l4", {"instanceTypes": ["g6.12xlarge"], "labels": {"gpucloud.io/workload": "inference"}}),
        Res(NG, "unlabelled", {"instanceTypes": ["g4dn.xlarge"]}),
        Res(
            ASG,
            "asg-train-tagged",
            {
                "tags": [{"key": "Workload", "value": "training"}],
                "mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceType": "g5.12xlarge"}]}},
            },
        ),
        nodepool(
            "np-train-t4",
            [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g4dn"]}],
            labels=TRAINING,
        ),
    ]
    assert flagged("gpu-min-memory", resources, {"minGpuMemoryGib": 40}) == {
        "train-l4",
        "asg-train-tagged",
        "np-train-t4",
    }
    assert flagged("gpu-min-memory", resources, {"minGpuMemoryGib": 16}) == set()
    with pytest.raises(UnknownValueError):
        resource_messages("gpu-min-memory", Res(NG, "u", {"instanceTypes": ["p5.48xlarge"], "labels": UNKNOWN}))


def test_deprecated_accelerators():
    resources = [
        Res(NG, "v100", {"instanceTypes": ["p3.8xlarge"]}),
        Res(INSTANCE, "k80", {"instanceType": "p2.xlarge"}),
        Res(NG, "h100", {"instanceTypes": ["p5.48xlarge"]}),
        nodepool("np-p3", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p3"]}]),
    ]
    assert flagged("deprecated-accelerators", resources) == {"v100", "k80", "np-p3"}
    with pytest.raises(UnknownValueError):
        resource_messages("deprecated-accelerators", Res(NG, "u", {"instanceTypes": [UNKNOWN]}))


def test_market_eligibility():
    resources = [
        Res(NG, "p5e-on-demand-implicit", {"instanceTypes": ["p5e.48xlarge"]}),
        Res(NG, "p5e-block", {"instanceTypes": ["p5e.48xlarge"], "capacityType": "CAPACITY_BLOCK"}),
        Res(NG, "g6e-block", {"instanceTypes": ["g6e.12xlarge"], "capacityType": "CAPACITY_BLOCK"}),
        Res(NG, "g6e-spot", {"instanceTypes": ["g6e.12xlarge"], "capacityType": "SPOT"}),
        Res(LT, "lt-no-market", {"instanceType": "trn2.48xlarge"}),
        Res(LT, "lt-trn2-on-demand-instance", {"instanceType": "trn2.48xlarge", "instanceMarketOptions": {}}),
        Res(INSTANCE, "instance-trn2", {"instanceType": "trn2.48xlarge"}),
    ]
    assert flagged("market-eligibility", resources) == {"p5e-on-demand-implicit", "g6e-block", "instance-trn2"}
    with pytest.raises(UnknownValueError):
        resource_messages(
            "market-eligibility", Res(NG, "u", {"instanceTypes": ["p5.48xlarge"], "capacityType": UNKNOWN})
        )


def test_gpu_count_cap_per_pool_per_stack_and_nodepool_limits():
    resources = [
        Res(NG, "small", {"instanceTypes": ["g6e.12xlarge"], "scalingConfig": {"maxSize": 4.0}}),  # 16 GPUs
        Res(NG, "big", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 10.0}}),  # 80 GPUs
        Res(LT, "lt", {"instanceType": "p4d.24xlarge"}),
        Res(
            NG,
            "via-template",
            {"launchTemplate": {"id": UNKNOWN, "version": "$Latest"}, "scalingConfig": {"maxSize": 9.0}},
            deps={"launchTemplate": ["lt"]},
        ),  # 72
        nodepool(
            "np-unbounded", [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["l40s"]}]
        ),
        nodepool(
            "np-bounded",
            [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]}],
            {"nvidia.com/gpu": 32.0},
        ),
        nodepool("np-cpu", [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]),
    ]
    assert stack_flagged("gpu-count-cap", resources, {"maxGpusPerPool": 64, "maxGpusPerStack": 1000}) == {
        "big",
        "via-template",
        "np-unbounded",
    }
    found = stack_messages("gpu-count-cap", resources, {"maxGpusPerPool": 100, "maxGpusPerStack": 150})
    assert {name for name, _ in found} == {"big", "np-unbounded"}
    assert any("the stack can grow to 200 GPUs" in m for _, m in found)
    with pytest.raises(UnknownValueError):
        stack_flagged(
            "gpu-count-cap", [Res(NG, "u", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": UNKNOWN}})]
        )


def _efa_lt(name, n, interface="efa"):
    nis = [
        {"interfaceType": interface, "networkCardIndex": float(i), "deviceIndex": 0.0 if i == 0 else 1.0}
        for i in range(n)
    ]
    return Res(LT, name, {"instanceType": "p5.48xlarge", "networkInterfaces": nis})


def test_efa_shape_for_multi_node_training():
    subnets = [
        Res(SUBNET, "a", {"availabilityZone": "us-east-1a"}),
        Res(SUBNET, "b", {"availabilityZone": "us-east-1b"}),
    ]

    def pool(name, lt, subnet_names, max_size=4.0, labels=TRAINING):
        return Res(
            NG,
            name,
            {
                "labels": labels,
                "scalingConfig": {"maxSize": max_size},
                "subnetIds": [UNKNOWN] * len(subnet_names),
                "launchTemplate": {"id": UNKNOWN, "version": "1"},
            },
            deps={"launchTemplate": [lt], "subnetIds": subnet_names},
        )

    resources = [
        *subnets,
        _efa_lt("lt-full", 32),
        _efa_lt("lt-half", 16),
        _efa_lt("lt-efa-only-primary", 32, "efa-only"),
        Res(LT, "lt-none", {"instanceType": "p5.48xlarge"}),
        Res(LT, "lt-g6", {"instanceType": "g6.xlarge"}),
        pool("good", "lt-full", ["a"]),
        pool("half-efa", "lt-half", ["a"]),
        pool("two-zones", "lt-full", ["a", "b"]),
        pool("no-efa", "lt-none", ["a"]),
        pool("efa-only-primary", "lt-efa-only-primary", ["a"]),
        pool("not-efa-capable", "lt-g6", ["a"]),
        pool("single-node", "lt-none", ["a", "b"], max_size=1.0),
        pool("inference", "lt-none", ["a", "b"], labels={"gpucloud.io/workload": "inference"}),
    ]
    assert stack_flagged("efa-shape", resources) == {
        "half-efa",
        "two-zones",
        "no-efa",
        "efa-only-primary",
        "not-efa-capable",
    }
    unknown_az = [Res(SUBNET, "a", {"availabilityZone": UNKNOWN}), _efa_lt("lt", 32), pool("p", "lt", ["a"])]
    with pytest.raises(UnknownValueError):
        stack_flagged("efa-shape", unknown_az)


def test_gpu_count_cap_reads_scheduled_actions_on_groups():
    """An ASG's scheduled action can raise its size beyond maxSize: the pool grows as far as the action sets it."""
    schedule = "aws:autoscaling/schedule:Schedule"
    lt = Res(LT, "lt", {"instanceType": "p5.48xlarge"})  # 8 GPUs each
    asg = Res(
        ASG,
        "asg",
        {"name": "trainers", "launchTemplate": {"id": UNKNOWN}, "maxSize": 2.0, "minSize": 0.0},
        deps={"launchTemplate": ["lt"]},
    )
    cfg = {"maxGpusPerPool": 64, "maxGpusPerStack": 1000}
    assert stack_flagged("gpu-count-cap", [lt, asg], cfg) == set()
    by_dependency = Res(
        schedule, "burst", {"autoscalingGroupName": UNKNOWN, "maxSize": 20.0}, deps={"autoscalingGroupName": ["asg"]}
    )
    assert stack_messages("gpu-count-cap", [lt, asg, by_dependency], cfg) == [
        (
            "burst",
            "burst: sets its group to 20 instances (160 GPUs at 8 per instance), above the per-pool cap of 64. "
            "Fix: lower the scheduled size to 8 or raise maxGpusPerPool.",
        )
    ]
    by_name = Res(schedule, "nightly", {"autoscalingGroupName": "trainers", "desiredCapacity": 9.0, "maxSize": -1.0})
    assert stack_flagged("gpu-count-cap", [lt, asg, by_name], cfg) == {"nightly"}
    within = Res(schedule, "small", {"autoscalingGroupName": "trainers", "maxSize": 8.0})
    assert stack_flagged("gpu-count-cap", [lt, asg, within], cfg) == set()
    # 8 x 8 = 64 counts toward the stack total, not the group's own 2 x 8.
    assert stack_flagged("gpu-count-cap", [lt, asg, within], {"maxGpusPerPool": 64, "maxGpusPerStack": 63}) == {"small"}
    elsewhere = Res(schedule, "other", {"autoscalingGroupName": "someone-elses", "maxSize": 50.0})
    with pytest.raises(UnknownValueError):
        stack_flagged("gpu-count-cap", [lt, asg, elsewhere], cfg)


def test_scheduled_sizes_count_toward_the_stack_in_any_order():
    schedule = "aws:autoscaling/schedule:Schedule"
    lt = Res(LT, "lt", {"instanceType": "g6.xlarge"})  # 1 GPU each
    asg = Res(
        ASG, "asg", {"name": "g", "launchTemplate": {"id": UNKNOWN}, "maxSize": 1.0}, deps={"launchTemplate": ["lt"]}
    )
    ng = Res(NG, "ng", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 1.0}})  # 8 GPUs
    action = Res(schedule, "up", {"autoscalingGroupName": "g", "maxSize": 6.0})
    cfg = {"maxGpusPerPool": 4, "maxGpusPerStack": 13}
    for order in ([ng, lt, asg, action], [lt, asg, action, ng]):
        found = stack_messages("gpu-count-cap", order, cfg)
        assert sorted(found) == [
            (
                "ng",
                "ng: can grow to 8 GPUs (max size 1 x 8 GPUs per instance), above the per-pool cap of 4. Fix: lower "
                "the max size to 0 or raise maxGpusPerPool in this environment's policy config.",
            ),
            (
                "ng",
                "ng: the stack can grow to 14 GPUs in all, above maxGpusPerStack 13. Fix: lower pool max sizes (this "
                "pool is the largest) or raise maxGpusPerStack in this environment's policy config.",
            ),
            (
                "up",
                "up: sets its group to 6 instances (6 GPUs at 1 per instance), above the per-pool cap of 4. Fix: "
                "lower the scheduled size to 4 or raise maxGpusPerPool.",
            ),
        ], order
    # The larger of two actions on one group counts.
    second = Res(schedule, "more", {"autoscalingGroupName": "g", "desiredCapacity": 7.0})
    names = [
        n
        for n, _ in stack_messages(
            "gpu-count-cap", [lt, asg, action, second], {"maxGpusPerPool": 6, "maxGpusPerStack": 99}
        )
    ]
    assert names == ["more"]


def test_scheduled_action_details():
    schedule = "aws:autoscaling/schedule:Schedule"
    lt = Res(LT, "lt", {"instanceType": "g6.xlarge"})
    asg = Res(
        ASG, "asg", {"name": "g", "launchTemplate": {"id": UNKNOWN}, "maxSize": 1.0}, deps={"launchTemplate": ["lt"]}
    )
    big = Res(schedule, "big", {"autoscalingGroupName": "g", "maxSize": 9.0})
    small = Res(schedule, "small", {"autoscalingGroupName": "g", "maxSize": 7.0})
    # The larger action wins whichever comes first; an action setting no size (unset, -1) changes nothing.
    cfg = {"maxGpusPerPool": 6, "maxGpusPerStack": 99}
    assert [n for n, _ in stack_messages("gpu-count-cap", [lt, asg, big, small], cfg)] == ["big"]
    noop = Res(schedule, "noop", {"autoscalingGroupName": "g", "maxSize": -1.0})
    assert stack_messages("gpu-count-cap", [lt, asg, noop], {"maxGpusPerPool": 1, "maxGpusPerStack": 1}) == []
    # A schedule that names another resource (not a group) is not joined to it.
    other = Res(NG, "ng", {"instanceTypes": ["g6.xlarge"], "scalingConfig": {"maxSize": 1.0}})
    odd = Res(schedule, "odd", {"autoscalingGroupName": UNKNOWN, "maxSize": 9.0}, deps={"autoscalingGroupName": ["ng"]})
    with pytest.raises(UndecidedError) as exc:
        stack_messages("gpu-count-cap", [other, odd], cfg)
    assert [(u.urn.rsplit("::", 1)[-1], u.field, u.reason) for u in exc.value.undecided] == [
        ("odd", "autoscalingGroupName", "string value at .autoscalingGroupName can't be known during preview")
    ]
    elsewhere = Res(schedule, "elsewhere", {"autoscalingGroupName": "not-here", "maxSize": 9.0})
    with pytest.raises(UndecidedError) as exc:
        stack_messages("gpu-count-cap", [lt, asg, elsewhere], cfg)
    assert [(u.urn.rsplit("::", 1)[-1], u.field, u.reason) for u in exc.value.undecided] == [
        ("elsewhere", "autoscalingGroupName", "the scheduled action's group is not in this plan")
    ]
