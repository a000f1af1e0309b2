"""Each field a launch path reads (gpucloud.fleet.paths), one assertion per field and per fallback: instance
types, counts, weights, markets, zones and subnets, metadata options, block devices and keys, public IP, user
data, AMI, labels and taints, update strategy, tags. The values are worked out from the inputs by hand."""

from __future__ import annotations

import base64
from typing import Any

from gpucloud import fleet
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.fleet.model import BlockDevice, Counts, MarketSplit, Taint
from gpucloud.fleet.values import UNKNOWN


def res(type_: str, name: str, inputs: dict[str, Any], provider: str | None = None, **deps: Any) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:dev::p::{type_}::{name}",
        "type": type_,
        "name": name,
        "inputs": inputs,
        "propertyDependencies": {k: [d["urn"] for d in (v if isinstance(v, list) else [v])] for k, v in deps.items()},
        "provider": provider,
    }


def one(*resources: dict[str, Any]) -> fleet.Pool:
    """The pool of the last resource."""
    found = {p.name: p for p in fleet.pools(resources)}
    return found[resources[-1]["name"]]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


KEY = res(T.KMS_KEY, "key", {})
SUBNET_A = res(T.SUBNET, "a", {"availabilityZone": "us-east-1a"})
SUBNET_U = res(T.SUBNET, "u", {"availabilityZone": UNKNOWN})
BOTTLEROCKET = '[settings.kubernetes]\ncluster-name = "c"\n[settings.kubernetes.node-labels]\n"role" = "br"\n'
PLAIN_LT = res(
    T.LAUNCH_TEMPLATE,
    "plain-lt",
    {
        "instanceType": "g6.xlarge",
        "imageId": "ami-lt",
        "metadataOptions": {"httpTokens": "required"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 80.0, "encrypted": "true"}}],
        "networkInterfaces": [{"deviceIndex": 0.0}, {"associatePublicIpAddress": "true"}],
        "userData": b64(BOTTLEROCKET),
    },
)


# ---- node groups ----------------------------------------------------------------------------------------------


def test_node_group_reads_its_own_types_market_subnets_labels_and_taints() -> None:
    ng = res(
        T.NODE_GROUP,
        "ng",
        {
            "nodeGroupName": UNKNOWN,
            "instanceTypes": ["g6.xlarge", UNKNOWN],
            "capacityType": "SPOT",
            "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 3.0},
            "subnetIds": [UNKNOWN, UNKNOWN, UNKNOWN],
            "labels": {"team": "ml", "later": UNKNOWN, "n": 1},
            "taints": [
                {"key": "a", "effect": "NO_EXECUTE"},
                {"key": "b", "value": "x", "effect": "PREFER_NO_SCHEDULE"},
                {"key": "c", "value": None, "effect": "Odd"},
            ],
        },
        subnetIds=[SUBNET_A],
    )
    pool = one(SUBNET_A, ng)
    assert (pool.instance_types, pool.types_from) == (("g6.xlarge",), "instanceTypes")
    assert pool.unknown == {"instance_types": "instanceTypes"}
    assert pool.counts == Counts(0, 1, 3) and pool.markets == ("spot",)
    assert (pool.zones, pool.subnets, pool.subnet_ids) == (frozenset({"us-east-1a"}), (SUBNET_A["urn"],), 3)
    # An unknown label value and an unknown node group name are left out; other values are read as text.
    assert pool.labels == {"team": "ml", "n": "1"}
    assert pool.taints == (Taint("a", "", "NoExecute"), Taint("b", "x", "PreferNoSchedule"), Taint("c", "", "Odd"))
    assert (pool.launch_template, pool.user_data, pool.metadata_options, pool.public_ip) == (None, None, {}, None)
    assert (pool.ami_family, pool.ami_release, pool.update_strategy, pool.tags) == ("", "", {}, {})


def test_node_group_on_a_template_takes_its_settings_ami_and_bootstrap() -> None:
    ng = res(
        T.NODE_GROUP,
        "ng",
        {"launchTemplate": {"id": UNKNOWN}, "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}},
        launchTemplate=PLAIN_LT,
    )
    pool = one(PLAIN_LT, ng)
    assert (pool.instance_types, pool.types_from, pool.template_type) == (
        ("g6.xlarge",),
        "launchTemplate.instanceType",
        "g6.xlarge",
    )
    assert pool.markets == ("on-demand",) and pool.launch_template == PLAIN_LT["urn"]
    assert pool.metadata_options == {"httpTokens": "required"}
    assert pool.block_devices == (BlockDevice("/dev/xvda", 80, None, encrypted=True),)
    # The first interface that says anything about a public IP decides.
    assert pool.public_ip is True and pool.user_data == BOTTLEROCKET and pool.user_data_known
    # No amiType: Bottlerocket from the template's user data; no releaseVersion: the template's image.
    assert (pool.ami_family, pool.ami_release, pool.labels) == ("bottlerocket", "ami-lt", {"role": "br"})


def test_node_group_with_an_unknown_template_type_or_subnet_zone() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": UNKNOWN, "userData": UNKNOWN})
    ng = res(
        T.NODE_GROUP,
        "ng",
        {"launchTemplate": {"id": UNKNOWN}, "scalingConfig": {"desiredSize": 1.0, "maxSize": 2.0}, "subnetIds": "x"},
        launchTemplate=lt,
        subnetIds=[SUBNET_A, SUBNET_U],
    )
    pool = one(SUBNET_A, SUBNET_U, lt, ng)
    assert pool.instance_types == () and pool.unknown == {"instance_types": "instanceTypes"}
    assert (pool.zones, pool.subnets, pool.subnet_ids) == (None, (SUBNET_A["urn"], SUBNET_U["urn"]), 0)
    assert (pool.user_data, pool.user_data_known) == (None, False)


def test_node_group_named_capacity_types() -> None:
    def market(value: Any) -> tuple[str, ...]:
        return one(res(T.NODE_GROUP, "ng", {"capacityType": value, "scalingConfig": {"maxSize": 1.0}})).markets

    assert [market(v) for v in ("ON_DEMAND", "SPOT", "CAPACITY_BLOCK", UNKNOWN)] == [
        ("on-demand",),
        ("spot",),
        ("capacity-block",),
        (),
    ]
    assert one(res(T.NODE_GROUP, "ng", {"scalingConfig": {}})).markets == ("on-demand",)


# ---- Auto Scaling groups --------------------------------------------------------------------------------------


def test_group_counts_default_desired_to_min_and_flag_unknowns() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge"})

    def group(**inputs: Any) -> fleet.Pool:
        asg = res(T.AUTOSCALING_GROUP, "g", {"launchTemplate": {"id": UNKNOWN}, **inputs}, launchTemplate=lt)
        return one(lt, asg)

    assert group(minSize=2.0, maxSize=5.0).counts == Counts(2, 2, 5)
    assert group(minSize=2.0, maxSize=5.0, desiredCapacity=3.0).counts == Counts(2, 3, 5)
    assert group(minSize=2.0, maxSize=5.0).unknown == {}
    assert group(minSize=1.0, maxSize=UNKNOWN).unknown == {"counts": "desiredCapacity/minSize/maxSize"}
    assert group(minSize=1.0, maxSize=2.0, desiredCapacity=UNKNOWN).unknown == {
        "counts": "desiredCapacity/minSize/maxSize"
    }


def test_group_instances_distribution_markets() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge"})

    def split(dist: Any) -> fleet.Pool:
        mip = {"launchTemplate": {"launchTemplateSpecification": {"launchTemplateId": UNKNOWN}}}
        if dist is not None:
            mip["instancesDistribution"] = dist
        asg = res(
            T.AUTOSCALING_GROUP,
            "g",
            {"minSize": 0.0, "maxSize": 4.0, "mixedInstancesPolicy": mip},
            mixedInstancesPolicy=lt,
        )
        return one(lt, asg)

    # No distribution: all On-Demand (AWS's defaults, base 0 and 100 % above it).
    plain = split(None)
    assert plain.markets == ("on-demand",) and plain.split == MarketSplit()
    assert (
        plain.instance_types == ("g6.xlarge",) and plain.types_from == "mixedInstancesPolicy.launchTemplate.overrides"
    )
    assert split({"onDemandPercentageAboveBaseCapacity": 0.0}).markets == ("spot",)
    assert split({"onDemandBaseCapacity": 1.0, "onDemandPercentageAboveBaseCapacity": 0.0}).markets == (
        "on-demand",
        "spot",
    )
    assert split({"onDemandPercentageAboveBaseCapacity": 99.0}).markets == ("on-demand", "spot")
    assert split({"onDemandPercentageAboveBaseCapacity": 100.0}).markets == ("on-demand",)
    assert split({"onDemandAllocationStrategy": "prioritized"}).split == MarketSplit(on_demand_allocation="prioritized")
    for odd in ({"onDemandPercentageAboveBaseCapacity": 101.0}, {"onDemandBaseCapacity": UNKNOWN}):
        pool = split(odd)
        assert (pool.markets, pool.split) == ((), None)
        assert pool.unknown == {"markets": "mixedInstancesPolicy.instancesDistribution"}


def test_group_overrides_unknown_type_and_weights() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge"})
    mip = {
        "launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateId": UNKNOWN},
            "overrides": [
                {"instanceType": "g6.2xlarge", "weightedCapacity": 2.0},
                {"instanceType": "g6.2xlarge", "weightedCapacity": "x"},
                {"instanceType": UNKNOWN},
                {},
            ],
        }
    }
    pool = one(
        lt,
        res(
            T.AUTOSCALING_GROUP,
            "g",
            {"minSize": 0.0, "maxSize": 4.0, "mixedInstancesPolicy": mip},
            mixedInstancesPolicy=lt,
        ),
    )
    # The empty override launches the template's type; the duplicate is named once; "x" is no weight.
    assert pool.instance_types == ("g6.2xlarge", "g6.xlarge") and pool.named_types == ("g6.2xlarge", "g6.xlarge")
    assert pool.counts.weights == {"g6.2xlarge": 2.0}
    assert pool.unknown == {"instance_types": "mixedInstancesPolicy.launchTemplate.overrides"}


def test_group_on_a_template_reads_zones_tags_warm_pool_and_refresh() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge", "instanceMarketOptions": {"marketType": "odd"}})
    asg = res(
        T.AUTOSCALING_GROUP,
        "g",
        {
            "launchTemplate": {"id": UNKNOWN},
            "maxSize": 2.0,
            "minSize": 1.0,
            "vpcZoneIdentifiers": [UNKNOWN, UNKNOWN],
            "availabilityZones": ["us-east-1f"],
            "warmPool": "yes",
            "tags": {"team": "ml"},
        },
        launchTemplate=lt,
        vpcZoneIdentifiers=SUBNET_A,
    )
    pool = one(SUBNET_A, lt, asg)
    # A market type EC2 does not name buys On-Demand; subnets win over availabilityZones.
    assert pool.markets == ("on-demand",) and pool.types_from == "launchTemplate.instanceType"
    assert (pool.zones, pool.subnet_ids) == (frozenset({"us-east-1a"}), 2)
    assert (pool.warm_pool, pool.update_strategy, pool.tags) == (None, {}, {"team": "ml"})
    assert pool.user_data_known and pool.user_data is None


def test_group_on_a_launch_configuration_reads_its_settings() -> None:
    lc = res(
        T.LAUNCH_CONFIGURATION,
        "lc",
        {
            "instanceType": "g5.xlarge",
            "spotPrice": "",
            "imageId": "ami-lc",
            "associatePublicIpAddress": "false",
            "userDataBase64": b64("#!/bin/bash\n/etc/eks/bootstrap.sh c --kubelet-extra-args '--node-labels=a=b'"),
            "ebsBlockDevices": [
                {
                    "deviceName": "/dev/sdf",
                    "volumeSize": 10.0,
                    "kmsKeyId": "arn:aws:kms:us-east-1:1:key/k",
                    "snapshotId": "snap-1",
                    "deleteOnTermination": True,
                    "throughput": 125.0,
                }
            ],
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1.0},
        },
    )
    asg = res(T.AUTOSCALING_GROUP, "g", {"minSize": 1.0, "maxSize": 1.0}, launchConfiguration=lc, ebsBlockDevices=KEY)
    pool = one(KEY, lc, asg)
    assert (pool.instance_types, pool.types_from, pool.markets) == (
        ("g5.xlarge",),
        "launchConfiguration.instanceType",
        ("on-demand",),
    )
    assert pool.metadata_options == {"httpTokens": "required", "httpPutResponseHopLimit": 1.0}
    assert pool.block_devices == (
        BlockDevice(
            "/dev/sdf",
            10,
            None,
            throughput=125.0,
            kms_key_id="arn:aws:kms:us-east-1:1:key/k",
            delete_on_termination=True,
            snapshot_id="snap-1",
        ),
    )
    assert (pool.public_ip, pool.ami_release, pool.labels) == (False, "ami-lc", {"a": "b"})
    assert pool.user_data is not None and pool.user_data.startswith("#!/bin/bash") and pool.user_data_known


def test_group_on_a_launch_configuration_with_unknown_user_data() -> None:
    lc = res(T.LAUNCH_CONFIGURATION, "lc", {"instanceType": "g5.xlarge", "userData": UNKNOWN})
    pool = one(lc, res(T.AUTOSCALING_GROUP, "g", {"maxSize": 1.0}, launchConfiguration=lc))
    assert (pool.user_data, pool.user_data_known, pool.block_devices, pool.public_ip) == (None, False, (), None)


def test_group_launch_template_outside_the_program() -> None:
    asg = res(T.AUTOSCALING_GROUP, "g", {"maxSize": 1.0, "launchTemplate": {"name": "outside"}})
    pool = one(asg)
    assert pool.launch_template_problem == (
        "launch template 'outside' is not in this program, so its instance type is unknown"
    )
    assert pool.launch_configuration is None and pool.user_data_known is False
    assert pool.unknown == {
        "counts": "desiredCapacity/minSize/maxSize",
        "instance_types": "launchTemplate.instanceType",
    }


# ---- instances and spot requests ------------------------------------------------------------------------------


def test_instance_own_settings_win_over_its_template() -> None:
    inst = res(
        T.INSTANCE,
        "i",
        {
            "instanceType": "g6e.xlarge",
            "launchTemplate": {"id": UNKNOWN},
            "instanceMarketOptions": {"marketType": "spot"},
            "metadataOptions": {"httpTokens": "optional"},
            "rootBlockDevice": {"volumeSize": 30.0, "encrypted": False, "kmsKeyID": "k2", "snapshotID": "s2"},
            "associatePublicIpAddress": False,
            "userData": "echo own",
            "subnetId": UNKNOWN,
            "ami": "ami-own",
            "tags": {"Name": "i"},
        },
        launchTemplate=PLAIN_LT,
        subnetId=SUBNET_A,
    )
    pool = one(PLAIN_LT, SUBNET_A, inst)
    assert (pool.instance_types, pool.types_from, pool.markets) == (("g6e.xlarge",), "instanceType", ("spot",))
    assert pool.metadata_options == {"httpTokens": "optional"}
    assert pool.block_devices == (
        BlockDevice(None, 30, None, encrypted=False, kms_key_id="k2", snapshot_id="s2", root=True),
    )
    assert (pool.public_ip, pool.user_data, pool.ami_release) == (False, "echo own", "ami-own")
    assert (pool.zones, pool.subnets, pool.subnet_ids) == (frozenset({"us-east-1a"}), (SUBNET_A["urn"],), 1)
    # The instance's own user data replaces the template's bootstrap (its Bottlerocket labels are gone).
    assert (pool.labels, pool.tags) == ({}, {"Name": "i"})


def test_instance_inherits_what_it_leaves_unset_from_its_template() -> None:
    inst = res(T.INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}}, launchTemplate=PLAIN_LT)
    pool = one(PLAIN_LT, inst)
    assert (pool.instance_types, pool.types_from, pool.markets) == (
        ("g6.xlarge",),
        "launchTemplate.instanceType",
        ("on-demand",),
    )
    assert pool.metadata_options == {"httpTokens": "required"} and pool.public_ip is True
    assert pool.block_devices == (BlockDevice("/dev/xvda", 80, None, encrypted=True),)
    assert (pool.user_data, pool.ami_release, pool.labels) == (BOTTLEROCKET, "ami-lt", {"role": "br"})
    assert (pool.zones, pool.subnet_ids, pool.counts) == (None, 0, Counts(1, 1, 1))


def test_instance_unknown_type_market_and_user_data() -> None:
    pool = one(
        res(
            T.INSTANCE,
            "i",
            {"instanceType": UNKNOWN, "instanceMarketOptions": {"marketType": UNKNOWN}, "userDataBase64": UNKNOWN},
        )
    )
    assert pool.instance_types == () and pool.markets == ()
    assert pool.unknown == {"instance_types": "instanceType", "markets": "instanceMarketOptions.marketType"}
    assert (pool.user_data, pool.user_data_known) == (None, False)
    lt_spot = res(
        T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge", "instanceMarketOptions": {"marketType": "spot"}}
    )
    inst = res(T.INSTANCE, "j", {"launchTemplate": {"id": UNKNOWN}}, launchTemplate=lt_spot)
    assert one(lt_spot, inst).markets == ("spot",)


def test_spot_request_is_a_spot_instance() -> None:
    req = res(
        T.SPOT_INSTANCE_REQUEST,
        "s",
        {
            "instanceType": "g5.xlarge",
            "instanceMarketOptions": {"marketType": UNKNOWN},
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2.0},
            "ebsBlockDevices": [{"deviceName": "/dev/sdg", "volumeSize": 5.0, "encrypted": True}],
            "userData": "plain text",
        },
    )
    pool = one(req)
    assert (pool.path, pool.markets, pool.counts, pool.unknown) == ("spot request", ("spot",), Counts(1, 1, 1), {})
    assert pool.metadata_options == {"httpTokens": "required", "httpPutResponseHopLimit": 2.0}
    assert pool.block_devices == (BlockDevice("/dev/sdg", 5, None, encrypted=True),)
    assert pool.user_data == "plain text"


# ---- fleets ---------------------------------------------------------------------------------------------------


def test_ec2_fleet_targets_and_markets() -> None:
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge", "metadataOptions": {"httpTokens": "required"}})

    def ec2(tcs: dict[str, Any]) -> fleet.Pool:
        f = res(
            T.EC2_FLEET,
            "f",
            {
                "targetCapacitySpecification": tcs,
                "launchTemplateConfigs": [{"launchTemplateSpecification": {"launchTemplateId": UNKNOWN}}],
                "tags": {"team": "ml"},
            },
            launchTemplateConfigs=lt,
        )
        return one(lt, f)

    od = ec2({"totalTargetCapacity": 4.0, "onDemandTargetCapacity": 4.0, "defaultTargetCapacityType": "on-demand"})
    assert (od.instance_types, od.counts, od.markets) == (("g6.xlarge",), Counts(None, 4, 4), ("on-demand",))
    assert od.split == MarketSplit(on_demand_target=4, spot_target=0, default_market="on-demand")
    assert (od.tags, od.metadata_options, od.launch_template) == ({"team": "ml"}, {"httpTokens": "required"}, lt["urn"])
    both = ec2({"totalTargetCapacity": 4.0, "onDemandTargetCapacity": 1.0, "spotTargetCapacity": 3.0})
    assert both.markets == ("on-demand", "spot") and both.unknown == {}
    block = ec2({"totalTargetCapacity": 2.0, "defaultTargetCapacityType": "capacity-block"})
    assert block.markets == ("capacity-block",)
    assert ec2({"totalTargetCapacity": UNKNOWN}).unknown == {"counts": "targetCapacitySpecification"}
    assert ec2({"totalTargetCapacity": 1.0, "spotTargetCapacity": UNKNOWN}).unknown == {
        "counts": "targetCapacitySpecification"
    }


def test_ec2_fleet_override_with_unknown_type() -> None:
    f = res(T.EC2_FLEET, "f", {"launchTemplateConfigs": [{"overrides": [{"instanceType": UNKNOWN}]}]})
    pool = one(f)
    assert pool.unknown == {"instance_types": "launchTemplateConfigs", "counts": "targetCapacitySpecification"}


def test_spot_fleet_launch_specification_settings() -> None:
    sf = res(
        T.SPOT_FLEET_REQUEST,
        "sf",
        {
            "targetCapacity": 3.0,
            "launchSpecifications": [
                {
                    "instanceType": "g5.xlarge",
                    "associatePublicIpAddress": True,
                    "userData": b64("echo spec"),
                    "rootBlockDevices": [{"volumeSize": 40.0, "encrypted": True}],
                    "ebsBlockDevices": [{"deviceName": "/dev/sdh", "volumeSize": 8.0, "kmsKeyId": "k"}],
                },
                {"instanceType": "g5.2xlarge", "associatePublicIpAddress": False},
            ],
            "tags": {"team": "ml"},
        },
        launchSpecifications=KEY,
    )
    pool = one(KEY, sf)
    assert (pool.path, pool.instance_types, pool.markets) == ("Spot Fleet", ("g5.xlarge", "g5.2xlarge"), ("spot",))
    assert pool.counts == Counts(None, 3, 3) and pool.split == MarketSplit(on_demand_target=0)
    assert (pool.public_ip, pool.user_data, pool.tags) == (True, "echo spec", {"team": "ml"})
    assert pool.block_devices == (
        BlockDevice(None, 40, None, encrypted=True, kms_key_urns=(KEY["urn"],)),
        BlockDevice("/dev/sdh", 8, None, kms_key_id="k", kms_key_urns=(KEY["urn"],)),
    )


def test_spot_fleet_unknowns_and_template_configs() -> None:
    sf = res(
        T.SPOT_FLEET_REQUEST,
        "sf",
        {"targetCapacity": UNKNOWN, "launchSpecifications": [{"instanceType": UNKNOWN, "userData": UNKNOWN}]},
    )
    pool = one(sf)
    assert pool.unknown == {"instance_types": "launchTemplateConfigs", "counts": "targetCapacity"}
    assert (pool.user_data, pool.user_data_known) == (None, False)
    lt = res(T.LAUNCH_TEMPLATE, "lt", {"instanceType": "g6.xlarge", "userData": b64("echo lt")})
    sf2 = res(
        T.SPOT_FLEET_REQUEST,
        "sf2",
        {
            "targetCapacity": 2.0,
            "onDemandTargetCapacity": UNKNOWN,
            "launchTemplateConfigs": [{"launchTemplateSpecification": {"id": UNKNOWN}}],
        },
        launchTemplateConfigs=lt,
    )
    pool = one(lt, sf2)
    assert (pool.instance_types, pool.user_data, pool.launch_template) == (("g6.xlarge",), "echo lt", lt["urn"])
    assert pool.unknown == {"counts": "targetCapacity"} and pool.markets == ("spot",)


# ---- capacity reservations ------------------------------------------------------------------------------------


def test_capacity_reservation_unknowns_and_tags() -> None:
    pool = one(
        res(T.CAPACITY_RESERVATION, "r", {"instanceType": UNKNOWN, "instanceCount": UNKNOWN, "tags": {"a": "b"}})
    )
    assert pool.unknown == {"instance_types": "instanceType", "counts": "instanceCount"}
    assert (pool.counts, pool.zones, pool.tags, pool.types_from) == (Counts(), None, {"a": "b"}, "instanceType")


# ---- labels normalised on every path --------------------------------------------------------------------------


def test_node_group_label_aliases_are_normalised() -> None:
    ng = res(
        T.NODE_GROUP,
        "ng",
        {"nodeGroupName": "g", "labels": {"beta.kubernetes.io/instance-type": "g6.xlarge"}, "scalingConfig": {}},
    )
    assert one(ng).labels == {L.INSTANCE_TYPE: "g6.xlarge", L.EKS_NODEGROUP: "g"}
