"""Managed backend: launch templates and one EKS managed node group per capacity type, every toggle on/off."""

from __future__ import annotations

import base64

from nodepool_fixtures import EFA_SG, KMS_ARN, NODE_SG, SUBNETS, TAGS, build_pool, pool, types_of

LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
PG = "aws:ec2/placementGroup:PlacementGroup"
CR_TYPE = "aws:ec2/capacityReservation:CapacityReservation"
TAG = "aws:autoscaling/tag:Tag"
CR = "cr-0123456789abcdef0"
P5 = {"instanceTypes": ["p5.48xlarge"], "workload": "training", "availabilityZones": ["us-east-1a"]}


def user_data(lt_inputs: dict) -> str:
    return base64.b64decode(lt_inputs["userData"]).decode() if lt_inputs.get("userData") else ""


def test_default_pool_one_on_demand_group() -> None:
    plan = build_pool(pool())
    assert types_of(plan) == [(LT, "p-on-demand-lt"), (NG, "p-on-demand")]
    ng = plan.find(NG, "p-on-demand")
    assert ng.get("capacityType") == "ON_DEMAND"
    assert ng.get("instanceTypes") == ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"]
    assert ng.get("amiType") == "AL2023_x86_64_NVIDIA"
    assert (ng.get("version"), ng.get("releaseVersion")) == ("1.34", "1.34.9-20260714")
    assert ng.get("scalingConfig") == {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 4.0}
    assert ng.get("subnetIds") == list(SUBNETS.values())
    assert ng.get("taints") == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert ng.get("labels") == {
        "gpucloud.io/pool": "pool",
        "gpucloud.io/workload": "inference",
        "gpucloud.io/accelerator": "l40s",
        "gpucloud.io/capacity-type": "on-demand",
    }
    assert ng.get("nodeRepairConfig") == {"enabled": True}
    assert ng.ignore_changes == ["scalingConfig.desiredSize"]
    assert ng.get("tags") == {**TAGS, "Name": "p-on-demand"}


def test_launch_template_hardening() -> None:
    lt = build_pool(pool()).find(LT, "p-on-demand-lt")
    assert lt.get("metadataOptions") == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1.0,
    }
    assert lt.get("blockDeviceMappings") == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 200.0,
                "volumeType": "gp3",
                "iops": 3000.0,
                "throughput": 250.0,
                "encrypted": "true",
                "kmsKeyId": KMS_ARN,
                "deleteOnTermination": "true",
            },
        }
    ]
    specs = {s["resourceType"]: s["tags"] for s in lt.get("tagSpecifications")}
    assert set(specs) == {"instance", "volume", "network-interface"}
    assert specs["instance"] == {**TAGS, "Name": "p-node"}
    assert specs["volume"] == {**TAGS, "Name": "p-node"}
    assert lt.get("vpcSecurityGroupIds") == [NODE_SG]
    assert lt.get("networkInterfaces") is None
    assert lt.get("placement") is None
    assert lt.get("imageId") is None  # EKS picks the AMI from amiType + releaseVersion


def test_root_volume_size_from_spec() -> None:
    lt = build_pool(pool(rootVolumeGib=500)).find(LT, "p-on-demand-lt")
    assert lt.get("blockDeviceMappings.0.ebs.volumeSize") == 500.0


def test_spot_and_on_demand_groups() -> None:
    plan = build_pool(pool(maxSize=10, desiredSize=3, capacity={"onDemandBase": 2, "onDemandPercentageAboveBase": 25}))
    assert types_of(plan) == [(LT, "p-on-demand-lt"), (LT, "p-spot-lt"), (NG, "p-on-demand"), (NG, "p-spot")]
    spot = plan.find(NG, "p-spot")
    assert spot.get("capacityType") == "SPOT"
    assert spot.get("scalingConfig") == {"minSize": 0.0, "desiredSize": 0.0, "maxSize": 6.0}
    assert spot.get("labels.gpucloud.io/capacity-type") is None  # dotted key: read the map instead
    assert spot.get("labels")["gpucloud.io/capacity-type"] == "spot"
    od = plan.find(NG, "p-on-demand")
    assert od.get("scalingConfig") == {"minSize": 2.0, "desiredSize": 3.0, "maxSize": 4.0}
    # EKS refuses instanceMarketOptions on a SPOT group's launch template; the group's capacityType does it.
    assert plan.find(LT, "p-spot-lt").get("instanceMarketOptions") is None


def test_efa_placement_group_on() -> None:
    plan = build_pool(pool(**P5, efa={"enabled": True}))
    assert types_of(plan) == sorted(
        [(PG, "p-placement"), (LT, "p-on-demand-lt"), (NG, "p-on-demand"), (TAG, "p-on-demand-ca-0")]
    )
    assert plan.find(PG, "p-placement").get("strategy") == "cluster"
    lt = plan.find(LT, "p-on-demand-lt")
    nis = lt.get("networkInterfaces")
    assert len(nis) == 32
    assert nis[0] == {
        "networkCardIndex": 0.0,
        "deviceIndex": 0.0,
        "interfaceType": "efa",
        "securityGroups": [NODE_SG, EFA_SG],
        "deleteOnTermination": "true",
    }
    assert {n["interfaceType"] for n in nis[1:]} == {"efa-only"}
    assert all(n.get("associatePublicIpAddress") is None for n in nis)
    assert lt.get("vpcSecurityGroupIds") is None
    assert set(lt.get("placement")) == {"groupName"}
    ng = plan.find(NG, "p-on-demand")
    assert ng.get("subnetIds") == [SUBNETS["us-east-1a"]]


def test_efa_placement_group_off() -> None:
    plan = build_pool(pool(**P5, efa={"enabled": True, "placementGroup": False}))
    assert types_of(plan) == sorted([(LT, "p-on-demand-lt"), (NG, "p-on-demand"), (TAG, "p-on-demand-ca-0")])
    lt = plan.find(LT, "p-on-demand-lt")
    assert lt.get("placement") is None
    assert len(lt.get("networkInterfaces")) == 32


def test_efa_only_interfaces_off() -> None:
    plan = build_pool(pool(**P5, efa={"enabled": True}), use_efa_only_interfaces=False)
    nis = plan.find(LT, "p-on-demand-lt").get("networkInterfaces")
    assert {n["interfaceType"] for n in nis} == {"efa"}


def test_odcr_by_id_targets_reservation_on_on_demand_group() -> None:
    plan = build_pool(
        pool(
            **P5,
            maxSize=4,
            capacity={
                "onDemandBase": 1,
                "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR], "preference": "open"},
            },
        )
    )
    assert types_of(plan) == [(LT, "p-on-demand-lt"), (NG, "p-on-demand")]
    lt = plan.find(LT, "p-on-demand-lt")
    assert lt.get("capacityReservationSpecification") == {"capacityReservationTarget": {"capacityReservationId": CR}}
    assert plan.find(NG, "p-on-demand").get("scalingConfig.maxSize") == 4.0


def test_odcr_reservations_only_preference_and_own_group() -> None:
    plan = build_pool(
        pool(
            **P5,
            maxSize=4,
            capacity={"onDemandBase": 1, "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR]}},
        )
    )
    assert types_of(plan) == [(LT, "p-on-demand-lt"), (LT, "p-reserved-lt"), (NG, "p-on-demand"), (NG, "p-reserved")]
    assert plan.find(LT, "p-reserved-lt").get("capacityReservationSpecification") == {
        "capacityReservationPreference": "capacity-reservations-only",
        "capacityReservationTarget": {"capacityReservationId": CR},
    }
    assert plan.find(LT, "p-on-demand-lt").get("capacityReservationSpecification") is None
    assert plan.find(NG, "p-reserved").get("labels")["gpucloud.io/capacity-type"] == "reserved"


def test_odcr_resource_group() -> None:
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gpu-odcrs"
    plan = build_pool(
        pool(**P5, capacity={"reserved": {"kind": "odcr", "count": 2, "resourceGroupArn": arn, "preference": "open"}})
    )
    lt = plan.find(LT, "p-on-demand-lt")
    assert lt.get("capacityReservationSpecification.capacityReservationTarget") == {
        "capacityReservationResourceGroupArn": arn
    }


def test_odcr_create() -> None:
    plan = build_pool(
        pool(
            **P5,
            maxSize=2,
            desiredSize=2,
            efa={"enabled": True},
            capacity={"reserved": {"kind": "odcr", "count": 2, "create": True}},
        ),
        preview=True,
    )
    assert types_of(plan) == sorted(
        [
            (CR_TYPE, "p-reservation"),
            (PG, "p-placement"),
            (LT, "p-reserved-lt"),
            (NG, "p-reserved"),
            (TAG, "p-reserved-ca-0"),
        ]
    )
    cr = plan.find(CR_TYPE, "p-reservation")
    assert cr.get("instanceType") == "p5.48xlarge"
    assert cr.get("availabilityZone") == "us-east-1a"
    assert cr.get("instanceCount") == 2.0
    assert cr.get("instanceMatchCriteria") == "targeted"
    assert cr.get("instancePlatform") == "Linux/UNIX"
    # Reserved inside the pool's placement group (its ARN is computed, so check the dependency).
    assert cr.property_dependencies["placementGroupArn"] == [plan.find(PG, "p-placement").urn]
    assert plan.find(NG, "p-reserved").get("scalingConfig.maxSize") == 2.0


def test_capacity_block_group() -> None:
    plan = build_pool(
        pool(
            **P5,
            maxSize=4,
            desiredSize=4,
            efa={"enabled": True, "placementGroup": False},
            capacity={"reserved": {"kind": "capacity-block", "count": 4, "capacityReservationIds": [CR]}},
        )
    )
    assert types_of(plan) == sorted(
        [(LT, "p-capacity-block-lt"), (NG, "p-capacity-block"), (TAG, "p-capacity-block-ca-0")]
    )
    lt = plan.find(LT, "p-capacity-block-lt")
    assert lt.get("instanceMarketOptions") == {"marketType": "capacity-block"}
    assert lt.get("instanceType") == "p5.48xlarge"
    assert lt.get("capacityReservationSpecification") == {"capacityReservationTarget": {"capacityReservationId": CR}}
    ng = plan.find(NG, "p-capacity-block")
    assert ng.get("capacityType") == "CAPACITY_BLOCK"
    assert ng.get("instanceTypes") is None
    assert ng.get("subnetIds") == [SUBNETS["us-east-1a"]]
    assert ng.get("labels")["gpucloud.io/capacity-type"] == "capacity-block"


def test_bottlerocket_ami() -> None:
    plan = build_pool(pool(ami={"family": "bottlerocket"}))
    ng = plan.find(NG, "p-on-demand")
    assert ng.get("amiType") == "BOTTLEROCKET_x86_64_NVIDIA"
    assert ng.get("releaseVersion") == "1.52.0-4b1e2d7a"
    lt = plan.find(LT, "p-on-demand-lt")
    assert [b["deviceName"] for b in lt.get("blockDeviceMappings")] == ["/dev/xvda", "/dev/xvdb"]
    assert lt.get("blockDeviceMappings.1.ebs.volumeSize") == 200.0
    text = user_data(lt.inputs)
    assert "[settings.bootstrap-commands.k8s-ephemeral-storage]" in text
    assert "settings.kubernetes]" not in text  # EKS supplies the join settings on its own AMI type


def test_neuron_ami_and_taint() -> None:
    plan = build_pool(pool(instanceTypes=["trn1.32xlarge"], workload="training"))
    ng = plan.find(NG, "p-on-demand")
    assert ng.get("amiType") == "AL2023_x86_64_NEURON"
    assert ng.get("taints") == [{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NO_SCHEDULE"}]


def test_explicit_ami_needs_full_nodeadm() -> None:
    plan = build_pool(pool(ami={"id": "ami-0123456789abcdef0"}))
    ng = plan.find(NG, "p-on-demand")
    assert ng.get("amiType") == "CUSTOM"
    assert ng.get("releaseVersion") is None
    assert ng.get("labels") is None and ng.get("taints") is None  # carried by nodeadm instead
    lt = plan.find(LT, "p-on-demand-lt")
    assert lt.get("imageId") == "ami-0123456789abcdef0"
    text = user_data(lt.inputs)
    assert "apiServerEndpoint: https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com" in text
    assert "cidr: 172.20.0.0/16" in text
    assert "--node-labels=gpucloud.io/accelerator=l40s,gpucloud.io/capacity-type=on-demand" in text
    assert "key: nvidia.com/gpu" in text


def test_raid0_on_with_instance_store() -> None:
    lt = build_pool(pool()).find(LT, "p-on-demand-lt")
    text = user_data(lt.inputs)
    assert "Content-Type: application/node.eks.aws" in text
    assert "strategy: RAID0" in text


def test_raid0_off_without_instance_store() -> None:
    # p3.2xlarge has no instance store: nothing to add to EKS's own bootstrap.
    lt = build_pool(pool(instanceTypes=["p3.2xlarge"], capacity={})).find(LT, "p-on-demand-lt")
    assert lt.get("userData") is None


def test_node_repair_off() -> None:
    ng = build_pool(pool(), enable_node_repair=False).find(NG, "p-on-demand")
    assert ng.get("nodeRepairConfig") == {"enabled": False}


def test_nth_tag_only_with_interruption_queue() -> None:
    spot = pool(capacity={"onDemandPercentageAboveBase": 0})
    with_q = build_pool(spot, interruption=True).find(LT, "p-spot-lt")
    inst = {s["resourceType"]: s["tags"] for s in with_q.get("tagSpecifications")}["instance"]
    assert inst["aws-node-termination-handler/managed"] == "true"
    without = build_pool(spot).find(LT, "p-spot-lt")
    inst = {s["resourceType"]: s["tags"] for s in without.get("tagSpecifications")}["instance"]
    assert "aws-node-termination-handler/managed" not in inst


def test_efa_resource_reaches_the_group_asg_for_cluster_autoscaler() -> None:
    # EKS tags a managed group's ASG for CA discovery and CA reads its labels/taints from eks:DescribeNodegroup,
    # but an extended resource CA cannot infer from the instance type (EFA) must be an ASG tag, or pods asking
    # for vpc.amazonaws.com/efa never scale an empty group up.
    plan = build_pool(pool(**P5, efa={"enabled": True}))
    tag = plan.find(TAG, "p-on-demand-ca-0").get("tag")
    assert tag == {
        "key": "k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa",
        "value": "32",
        "propagateAtLaunch": False,
    }


def test_custom_ami_group_carries_its_labels_and_taint_as_asg_tags() -> None:
    plan = build_pool(pool(ami={"id": "ami-0123456789abcdef0"}))
    tags = {r.get("tag")["key"]: r.get("tag")["value"] for r in plan.of_type(TAG)}
    assert tags == {
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool": "pool",
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/workload": "inference",
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/accelerator": "l40s",
        "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/capacity-type": "on-demand",
        "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "true:NoSchedule",
    }


def test_reserved_groups_roll_with_the_minimal_strategy() -> None:
    """Capacity Blocks and targeted ODCRs have no spare instance to surge into: MINIMAL replaces in place; the
    on-demand and spot groups keep the default (surge) strategy."""
    odcr = build_pool(
        pool(
            **P5,
            maxSize=4,
            capacity={"onDemandBase": 1, "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR]}},
        )
    )
    assert odcr.find(NG, "p-reserved").get("updateConfig") == {"maxUnavailable": 1.0, "updateStrategy": "MINIMAL"}
    assert odcr.find(NG, "p-on-demand").get("updateConfig") == {"maxUnavailable": 1.0}
    block = build_pool(
        pool(
            instanceTypes=["p5en.48xlarge"],
            workload="training",
            availabilityZones=["us-east-1a"],
            minSize=0,
            desiredSize=2,
            maxSize=2,
            efa={"enabled": True, "placementGroup": False},
            capacity={"reserved": {"kind": "capacity-block", "count": 2, "capacityReservationIds": [CR]}},
        )
    )
    [group] = block.of_type(NG)
    assert (group.name, group.get("updateConfig")) == (
        "p-capacity-block",
        {"maxUnavailable": 1.0, "updateStrategy": "MINIMAL"},
    )
