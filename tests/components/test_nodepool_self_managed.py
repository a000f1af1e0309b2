"""Self-managed backend: one ASG with a mixed instances policy, joined via an EC2_LINUX access entry + nodeadm."""

from __future__ import annotations

import base64

from nodepool_fixtures import NODE_ROLE_ARN, SUBNETS, build_pool, pool, types_of

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
PROFILE = "aws:iam/instanceProfile:InstanceProfile"
ACCESS = "aws:eks/accessEntry:AccessEntry"
CR = "cr-0123456789abcdef0"
MIX = {
    "backend": "self-managed",
    "maxSize": 10,
    "desiredSize": 3,
    "capacity": {"onDemandBase": 2, "onDemandPercentageAboveBase": 25},
}


def test_resources() -> None:
    plan = build_pool(pool(**MIX))
    assert types_of(plan) == sorted([(PROFILE, "p-profile"), (ACCESS, "p-node-access"), (LT, "p-lt"), (ASG, "p-asg")])
    entry = plan.find(ACCESS, "p-node-access")
    assert entry.get("type") == "EC2_LINUX"
    assert entry.get("principalArn") == NODE_ROLE_ARN
    assert plan.find(PROFILE, "p-profile").get("role") == "gpucloud-test-node"


def test_mixed_instances_policy() -> None:
    asg = build_pool(pool(**MIX)).find(ASG, "p-asg")
    # minSize 0 in the spec, but the on-demand base (2) is the group's floor.
    assert asg.get("minSize") == 2.0 and asg.get("maxSize") == 10.0 and asg.get("desiredCapacity") == 3.0
    assert asg.get("mixedInstancesPolicy.instancesDistribution") == {
        "onDemandAllocationStrategy": "prioritized",
        "onDemandBaseCapacity": 2.0,
        "onDemandPercentageAboveBaseCapacity": 25.0,
        "spotAllocationStrategy": "price-capacity-optimized",
    }
    assert asg.get("mixedInstancesPolicy.launchTemplate.overrides") == [
        {"instanceType": "g6e.xlarge"},
        {"instanceType": "g6e.2xlarge"},
        {"instanceType": "g6e.4xlarge"},
    ]
    assert asg.get("capacityRebalance") is True
    assert asg.get("vpcZoneIdentifiers") == list(SUBNETS.values())
    assert asg.ignore_changes == ["desiredCapacity"]
    assert asg.get("capacityReservationSpecification") is None
    assert asg.get("initialLifecycleHooks") is None
    tags = {t["key"]: t for t in asg.get("tags")}
    assert tags["CostCenter"] == {"key": "CostCenter", "value": "ml", "propagateAtLaunch": True}
    assert tags["kubernetes.io/cluster/gpucloud-test"]["value"] == "owned"


def test_capacity_rebalance_off_without_spot() -> None:
    asg = build_pool(pool(backend="self-managed")).find(ASG, "p-asg")
    assert asg.get("capacityRebalance") is False


def test_launch_template_boots_with_nodeadm_and_ssm_image() -> None:
    lt = build_pool(pool(**MIX)).find(LT, "p-lt")
    assert lt.get("imageId").startswith("ami-")
    assert lt.get("metadataOptions.httpTokens") == "required"
    text = base64.b64decode(lt.get("userData")).decode()
    assert "name: gpucloud-test" in text
    assert "certificateAuthority: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==" in text
    assert "gpucloud.io/capacity-type=mixed" in text  # one LT launches both on-demand and spot
    assert "registerWithTaints" in text


def test_pure_spot_label() -> None:
    lt = build_pool(pool(backend="self-managed", capacity={"onDemandPercentageAboveBase": 0})).find(LT, "p-lt")
    assert "gpucloud.io/capacity-type=spot" in base64.b64decode(lt.get("userData")).decode()


def test_access_entry_off() -> None:
    plan = build_pool(pool(**MIX), create_access_entry=False)
    assert (ACCESS, "p-node-access") not in types_of(plan)


def test_odcr_folds_into_base_and_targets_at_asg_level() -> None:
    spec = pool(
        backend="self-managed",
        instanceTypes=["p5.48xlarge"],
        workload="training",
        availabilityZones=["us-east-1a"],
        maxSize=6,
        capacity={
            "onDemandBase": 1,
            "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR], "preference": "open"},
        },
    )
    asg = build_pool(spec).find(ASG, "p-asg")
    assert asg.get("mixedInstancesPolicy.instancesDistribution.onDemandBaseCapacity") == 3.0
    assert asg.get("capacityReservationSpecification") == {
        "capacityReservationPreference": "capacity-reservations-first",
        "capacityReservationTarget": {"capacityReservationIds": [CR]},
    }
    assert asg.get("vpcZoneIdentifiers") == [SUBNETS["us-east-1a"]]


def test_nth_lifecycle_hook_and_tag() -> None:
    asg = build_pool(pool(**MIX), interruption=True).find(ASG, "p-asg")
    assert asg.get("initialLifecycleHooks") == [
        {
            "name": "gpucloud-drain",
            "lifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING",
            "defaultResult": "CONTINUE",
            "heartbeatTimeout": 300.0,
        }
    ]
    tags = {t["key"]: t["value"] for t in asg.get("tags")}
    assert tags["aws-node-termination-handler/managed"] == "true"


def test_efa_and_placement() -> None:
    spec = pool(
        backend="self-managed",
        instanceTypes=["p4d.24xlarge"],
        workload="training",
        availabilityZones=["us-east-1a"],
        efa={"enabled": True},
    )
    plan = build_pool(spec)
    lt = plan.find(LT, "p-lt")
    assert [n["interfaceType"] for n in lt.get("networkInterfaces")] == ["efa"] * 4
    assert set(lt.get("placement")) == {"groupName"}


def test_instance_profile_from_node_role() -> None:
    plan = build_pool(pool(**MIX), preview=True)
    lt = plan.find(LT, "p-lt")
    assert lt.property_dependencies["iamInstanceProfile"] == [plan.find(PROFILE, "p-profile").urn]


def test_cluster_autoscaler_discovers_and_templates_the_group() -> None:
    # Tag formats from kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md (Auto-Discovery Setup):
    # discovery needs both keys; node-template/label|taint|resources describe a node of an empty group.
    asg = build_pool(pool(**MIX)).find(ASG, "p-asg")
    ca = {t["key"]: (t["value"], t["propagateAtLaunch"]) for t in asg.get("tags") if t["key"].startswith("k8s.io/")}
    assert ca == {
        "k8s.io/cluster-autoscaler/enabled": ("true", False),
        "k8s.io/cluster-autoscaler/gpucloud-test": ("owned", False),
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool": ("pool", False),
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/workload": ("inference", False),
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/accelerator": ("l40s", False),
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/capacity-type": ("mixed", False),
        "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": ("true:NoSchedule", False),
        "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu": ("1", False),
    }


def test_cluster_autoscaler_template_advertises_efa() -> None:
    efa_pool = pool(
        backend="self-managed",
        workload="training",
        instanceTypes=["p5.48xlarge"],
        availabilityZones=["us-east-1a"],
        efa={"enabled": True},
    )
    asg = build_pool(efa_pool).find(ASG, "p-asg")
    tags = {t["key"]: t["value"] for t in asg.get("tags")}
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "32"


def test_on_demand_base_is_the_group_floor() -> None:
    asg = build_pool(pool(backend="self-managed", minSize=0, desiredSize=0, capacity={"onDemandBase": 1})).find(
        ASG, "p-asg"
    )
    assert (asg.get("minSize"), asg.get("desiredCapacity"), asg.get("maxSize")) == (1.0, 1.0, 4.0)
