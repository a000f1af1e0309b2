"""The fleet layer on every launch path, with the values each pool must carry (worked out from the inputs)."""

from __future__ import annotations

import base64
from typing import Any

from gpucloud import fleet
from gpucloud.catalog import get_catalog
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.fleet.model import BlockDevice, Counts, MarketSplit, Taint
from gpucloud.fleet.values import UNKNOWN

PROVIDER = "urn:pulumi:dev::p::pulumi:providers:aws::west"


def res(type_: str, name: str, inputs: dict[str, Any], provider: str | None = None, **deps: Any) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:dev::p::{type_}::{name}",
        "type": type_,
        "name": name,
        "inputs": inputs,
        "propertyDependencies": {k: [d["urn"] for d in (v if isinstance(v, list) else [v])] for k, v in deps.items()},
        "provider": provider,
    }


def by_name(*resources: dict[str, Any], objects: tuple[dict[str, Any], ...] = ()) -> dict[str, fleet.Pool]:
    return {p.name: p for p in fleet.pools(resources, objects)}


SUBNET_A = res(T.SUBNET, "a", {"availabilityZone": "us-west-2a"})
SUBNET_B = res(T.SUBNET, "b", {"availabilityZone": "us-west-2b"})
WEST = {**res(T.AWS_PROVIDER, "west", {"region": "us-west-2"}), "urn": PROVIDER}
DEFAULT = res(T.AWS_PROVIDER, "default_6_0_0", {"region": "us-east-1"})
KEY = res(T.KMS_KEY, "key", {})
NODEADM = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="B"

--B
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster: {name: c}
  kubelet:
    flags: ["--node-labels=gpucloud.io/pool=train,beta.kubernetes.io/arch=amd64"]
    config:
      registerWithTaints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
--B--
"""
TEMPLATE = res(
    T.LAUNCH_TEMPLATE,
    "lt",
    {
        "instanceType": "p5.48xlarge",
        "imageId": "ami-123",
        "userData": base64.b64encode(NODEADM.encode()).decode(),
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1.0},
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": 200.0,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "kmsKeyId": UNKNOWN,
                    "iops": 4000.0,
                },
            },
        ],
        "networkInterfaces": [{"interfaceType": "efa", "associatePublicIpAddress": "false"}],
        "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": UNKNOWN}},
    },
    blockDeviceMappings=KEY,
)
RESERVATION = res(
    T.CAPACITY_RESERVATION,
    "odcr",
    {"instanceType": "p5.48xlarge", "instanceCount": 2.0, "availabilityZone": "us-east-1a"},
)
TEMPLATE["propertyDependencies"]["capacityReservationSpecification"] = [RESERVATION["urn"]]


def test_node_group_joined_to_its_template_subnets_and_reservation() -> None:
    ng = res(
        T.NODE_GROUP,
        "train",
        {
            "nodeGroupName": "train-ng",
            "launchTemplate": {"id": UNKNOWN, "version": UNKNOWN},
            "scalingConfig": {"minSize": 1.0, "desiredSize": 2.0, "maxSize": 4.0},
            "capacityType": "CAPACITY_BLOCK",
            "subnetIds": [UNKNOWN, UNKNOWN],
            "labels": {"gpucloud.io/workload": "training"},
            "taints": [{"key": "dedicated", "value": "train", "effect": "NO_SCHEDULE"}],
            "amiType": "AL2023_x86_64_NVIDIA",
            "releaseVersion": "1.33.0-20250101",
            "updateConfig": {"maxUnavailable": 1.0},
            "tags": {"team": "ml"},
        },
        WEST["urn"],
        launchTemplate=TEMPLATE,
        subnetIds=[SUBNET_A, SUBNET_B],
    )
    pool = by_name(WEST, KEY, RESERVATION, TEMPLATE, SUBNET_A, SUBNET_B, ng)["train"]
    assert (pool.path, pool.instance_types, pool.types_from) == (
        "managed node group",
        ("p5.48xlarge",),
        "launchTemplate.instanceType",
    )
    assert pool.counts == Counts(1, 2, 4)
    assert (pool.markets, pool.region, pool.zones) == (
        ("capacity-block",),
        "us-west-2",
        frozenset({"us-west-2a", "us-west-2b"}),
    )
    assert pool.subnets == (SUBNET_A["urn"], SUBNET_B["urn"]) and pool.subnet_ids == 2
    assert pool.metadata_options == {"httpTokens": "required", "httpPutResponseHopLimit": 1.0}
    assert pool.block_devices == (
        BlockDevice("/dev/xvda", 200, "gp3", iops=4000.0, encrypted=True, kms_key_urns=(KEY["urn"],)),
    )
    assert pool.public_ip is False and len(pool.efa_interfaces) == 1
    assert pool.user_data == NODEADM and pool.user_data_known
    assert (pool.ami_family, pool.ami_release) == ("AL2023_x86_64_NVIDIA", "1.33.0-20250101")
    # The node group's labels win over the user data's; the beta arch alias is normalised as Karpenter does.
    assert pool.labels == {
        "gpucloud.io/pool": "train",
        "kubernetes.io/arch": "amd64",
        "gpucloud.io/workload": "training",
        L.EKS_NODEGROUP: "train-ng",
    }
    assert pool.taints == (Taint("dedicated", "train", "NoSchedule"), Taint("nvidia.com/gpu", "true", "NoSchedule"))
    assert pool.update_strategy == {"maxUnavailable": 1.0} and pool.tags == {"team": "ml"}
    assert pool.capacity_reservations == (RESERVATION["urn"],) and pool.launch_template == TEMPLATE["urn"]
    assert [(a.name, a.label, a.count, a.resource) for a in pool.accelerators] == [
        ("H100", "h100", 8, "nvidia.com/gpu")
    ]


def test_node_group_without_types_or_template_launches_the_eks_default() -> None:
    pool = by_name(res(T.NODE_GROUP, "sys", {"scalingConfig": {"desiredSize": 1.0, "maxSize": UNKNOWN}}))["sys"]
    assert (pool.instance_types, pool.types_from, pool.markets) == (("t3.medium",), "EKS default", ("on-demand",))
    assert pool.counts == Counts(None, 1, None) and pool.unknown == {"counts": "scalingConfig.maxSize"}
    assert pool.accelerators == () and pool.region is None


def test_node_group_with_unknown_types_and_odd_capacity() -> None:
    pools = by_name(
        res(T.NODE_GROUP, "u", {"instanceTypes": UNKNOWN, "capacityType": "RESERVED"}),
        res(T.NODE_GROUP, "ext", {"launchTemplate": {"name": "outside"}}),
    )
    assert pools["u"].unknown == {
        "instance_types": "instanceTypes",
        "counts": "scalingConfig.desiredSize",
        "markets": "capacityType",
    }
    assert pools["ext"].unknown == {"instance_types": "launchTemplate", "counts": "scalingConfig.desiredSize"}
    assert pools["ext"].launch_template_problem == (
        "launch template 'outside' is not in this program, so its instance type is unknown"
    )


def test_mixed_instances_group_with_weights_requirements_and_warm_pool() -> None:
    asg = res(
        T.AUTOSCALING_GROUP,
        "asg",
        {
            "minSize": 0.0,
            "maxSize": 6.0,
            "mixedInstancesPolicy": {
                "instancesDistribution": {
                    "onDemandBaseCapacity": 1.0,
                    "onDemandPercentageAboveBaseCapacity": 25.0,
                    "spotAllocationStrategy": "price-capacity-optimized",
                },
                "launchTemplate": {
                    "launchTemplateSpecification": {"launchTemplateId": UNKNOWN},
                    "overrides": [
                        {"instanceType": "g6.12xlarge", "weightedCapacity": "4"},
                        {"instanceRequirements": {"acceleratorNames": ["a100"], "vcpuCount": {"min": 96.0}}},
                    ],
                },
            },
            "vpcZoneIdentifiers": [UNKNOWN],
            "warmPool": {"minSize": 1.0, "poolState": "Stopped"},
            "instanceRefresh": {"strategy": "Rolling"},
            "tags": [
                {"key": "team", "value": "cv", "propagateAtLaunch": True},
                {"key": "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool", "value": "cv"},
            ],
        },
        mixedInstancesPolicy=TEMPLATE,
        vpcZoneIdentifiers=SUBNET_A,
    )
    pool = by_name(DEFAULT, KEY, RESERVATION, TEMPLATE, SUBNET_A, asg)["asg"]
    # The named override first, then what the requirements admit (A100 with at least 96 vCPU: p4d and p4de).
    assert pool.instance_types == ("g6.12xlarge", "p4d.24xlarge", "p4de.24xlarge")
    assert pool.named_types == ("g6.12xlarge",) and len(pool.requirements) == 1
    assert pool.counts == Counts(0, 0, 6, {"g6.12xlarge": 4.0})
    assert pool.split == MarketSplit(
        on_demand_base=1, on_demand_percentage=25, spot_allocation="price-capacity-optimized"
    )
    assert (pool.markets, pool.region, pool.zones) == (("on-demand", "spot"), "us-east-1", frozenset({"us-west-2a"}))
    assert pool.warm_pool == {"minSize": 1.0, "poolState": "Stopped"} and pool.update_strategy == {
        "strategy": "Rolling"
    }
    assert pool.tags == {"team": "cv", "k8s.io/cluster-autoscaler/node-template/label/gpucloud.io/pool": "cv"}
    assert pool.marks == ({"team": "cv", "gpucloud.io/pool": "cv"},)
    # Labels and taints come from the template's user data only.
    assert pool.labels == {"gpucloud.io/pool": "train", "kubernetes.io/arch": "amd64"}
    assert [a.label for a in pool.accelerators] == ["l4", "a100", "a100"]


def test_group_on_a_launch_configuration() -> None:
    lc = res(
        T.LAUNCH_CONFIGURATION,
        "lc",
        {
            "instanceType": "g5.xlarge",
            "spotPrice": "0.5",
            "imageId": "ami-9",
            "associatePublicIpAddress": True,
            "userData": "#!/bin/bash\n/etc/eks/bootstrap.sh c --kubelet-extra-args '--node-labels=role=gpu'",
            "rootBlockDevice": {"volumeSize": 50.0, "volumeType": "gp3", "encrypted": False},
            "metadataOptions": {"httpTokens": "optional"},
        },
    )
    asg = res(
        T.AUTOSCALING_GROUP,
        "g",
        {"minSize": 1.0, "maxSize": 2.0, "desiredCapacity": 1.0},
        launchConfiguration=lc,
        availabilityZones=[],
    )
    asg["inputs"]["availabilityZones"] = ["us-east-1b"]
    pool = by_name(lc, asg)["g"]
    assert (pool.instance_types, pool.markets, pool.launch_configuration) == (("g5.xlarge",), ("spot",), lc["urn"])
    assert pool.counts == Counts(1, 1, 2) and pool.zones == frozenset({"us-east-1b"})
    assert pool.block_devices == (BlockDevice(None, 50, "gp3", encrypted=False, root=True),)
    assert (pool.public_ip, pool.ami_release, pool.labels) == (True, "ami-9", {"role": "gpu"})
    assert pool.metadata_options == {"httpTokens": "optional"}


def test_instance_and_spot_request() -> None:
    inst = res(
        T.INSTANCE,
        "i",
        {
            "launchTemplate": {"id": UNKNOWN},
            "instanceMarketOptions": {"marketType": "capacity-block"},
            "availabilityZone": "us-east-1c",
            "ami": "ami-7",
            "tags": {"Name": "i"},
            "rootBlockDevice": {"volumeSize": 100.0},
            "ebsBlockDevices": [{"deviceName": "/dev/sdf", "volumeSize": 10.0}],
            "userDataBase64": base64.b64encode(b"echo hi").decode(),
        },
        launchTemplate=TEMPLATE,
        capacityReservationSpecification=RESERVATION,
    )
    spot = res(T.SPOT_INSTANCE_REQUEST, "s", {"instanceType": "g6e.xlarge", "associatePublicIpAddress": True})
    pools = by_name(KEY, RESERVATION, TEMPLATE, inst, spot)
    i = pools["i"]
    assert (i.path, i.instance_types, i.types_from) == ("instance", ("p5.48xlarge",), "launchTemplate.instanceType")
    assert (i.markets, i.counts, i.zones) == (("capacity-block",), Counts(1, 1, 1), frozenset({"us-east-1c"}))
    assert i.capacity_reservations == (RESERVATION["urn"], RESERVATION["urn"])
    assert [(d.device_name, d.size_gib, d.root) for d in i.block_devices] == [
        (None, 100, True),
        ("/dev/sdf", 10, False),
    ]
    assert (i.user_data, i.ami_release, i.tags) == ("echo hi", "ami-7", {"Name": "i"})
    s = pools["s"]
    assert (s.path, s.instance_types, s.markets, s.public_ip) == ("spot request", ("g6e.xlarge",), ("spot",), True)


def test_ec2_fleet_and_spot_fleet() -> None:
    ec2 = res(
        T.EC2_FLEET,
        "f",
        {
            "targetCapacitySpecification": {
                "totalTargetCapacity": 8.0,
                "spotTargetCapacity": 2.0,
                "defaultTargetCapacityType": "spot",
            },
            "launchTemplateConfigs": [
                {"overrides": [{"instanceType": "g6e.12xlarge", "weightedCapacity": 4.0}, {"subnetId": "subnet-9"}]}
            ],
        },
        launchTemplateConfigs=TEMPLATE,
    )
    sf = res(
        T.SPOT_FLEET_REQUEST,
        "sf",
        {
            "targetCapacity": 4.0,
            "onDemandTargetCapacity": 1.0,
            "allocationStrategy": "capacityOptimized",
            "launchSpecifications": [
                {
                    "instanceType": "g5.2xlarge",
                    "weightedCapacity": 2.0,
                    "userData": "plain",
                    "associatePublicIpAddress": False,
                }
            ],
        },
    )
    pools = by_name(KEY, RESERVATION, TEMPLATE, ec2, sf)
    f = pools["f"]
    # An override without a type launches the template's.
    assert (f.instance_types, f.counts) == (("g6e.12xlarge", "p5.48xlarge"), Counts(None, 8, 8, {"g6e.12xlarge": 4.0}))
    assert f.split == MarketSplit(on_demand_target=0, spot_target=2, default_market="spot")
    assert f.markets == ("spot",) and f.template_type == "p5.48xlarge"
    s = pools["sf"]
    assert (s.instance_types, s.counts.weights, s.markets) == (
        ("g5.2xlarge",),
        {"g5.2xlarge": 2.0},
        ("on-demand", "spot"),
    )
    assert s.split == MarketSplit(on_demand_target=1, spot_allocation="capacityOptimized")
    assert (s.user_data, s.public_ip) == ("plain", False)


def test_capacity_reservation() -> None:
    pool = by_name(RESERVATION)["odcr"]
    assert (pool.path, pool.instance_types, pool.counts) == ("capacity reservation", ("p5.48xlarge",), Counts(2, 2, 2))
    assert (pool.markets, pool.zones) == (("on-demand",), frozenset({"us-east-1a"}))


def _nodepool(api: str, requirements: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "NodePool",
        "metadata": {"name": "np", "labels": {"gpucloud.io/pool": "np"}, "annotations": {L.EXPECTED_NODES: "3"}},
        "spec": {
            "template": {
                "metadata": {"labels": {"gpucloud.io/workload": "inference"}},
                "spec": {
                    "requirements": requirements,
                    "nodeClassRef": {"name": "gpu"},
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                    "startupTaints": [
                        {"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}
                    ],
                },
            },
            **spec,
        },
    }


def test_karpenter_nodepool_v1_with_its_ec2nodeclass() -> None:
    cls = res(
        T.EC2_NODE_CLASS,
        "gpu-class",
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "amiSelectorTerms": [{"alias": "bottlerocket@v1.30.0"}],
                "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2},
                "blockDeviceMappings": [
                    {
                        "deviceName": "/dev/xvdb",
                        "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True, "kmsKeyID": "arn:k"},
                    }
                ],
                "associatePublicIPAddress": False,
                "userData": '[settings.kubernetes.node-labels]\n"team" = "ml"\n',
                "tags": {"team": "ml"},
            },
        },
    )
    np = res(
        T.KARPENTER_NODEPOOL,
        "np-res",
        _nodepool(
            "karpenter.sh/v1",
            [
                {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "reserved"]},
                {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]},
            ],
            limits={"nvidia.com/gpu": "16"},
            disruption={"consolidationPolicy": "WhenEmpty"},
        ),
    )
    pool = by_name(DEFAULT, cls, np)["np"]
    # Karpenter's gpu-name is EC2's name: "a100" is both A100 sizes (p4d 40 GB, p4de 80 GB).
    assert (pool.path, pool.instance_types, pool.types_open) == (
        "Karpenter NodePool",
        ("p4d.24xlarge", "p4de.24xlarge"),
        False,
    )
    assert pool.markets == ("spot", "reserved") and pool.zones == frozenset({"us-east-1a"})
    assert pool.counts == Counts(0, 3, None) and pool.limits == {"nvidia.com/gpu": "16"}
    assert (pool.node_class, pool.ami_family, pool.ami_release) == ("gpu", "bottlerocket", "v1.30.0")
    assert pool.metadata_options == {"httpTokens": "required", "httpPutResponseHopLimit": 2}
    assert pool.block_devices == (BlockDevice("/dev/xvdb", 100, "gp3", encrypted=True, kms_key_id="arn:k"),)
    assert (pool.public_ip, pool.tags, pool.region) == (False, {"team": "ml"}, "us-east-1")
    assert pool.labels == {"team": "ml", "gpucloud.io/workload": "inference", L.NODEPOOL: "np"}
    assert pool.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),)
    assert pool.startup_taints == (Taint("node.cilium.io/agent-not-ready", "true", "NoExecute"),)
    assert pool.update_strategy == {"consolidationPolicy": "WhenEmpty"}
    assert pool.marks == ({"gpucloud.io/workload": "inference"}, {"gpucloud.io/pool": "np"})


def test_karpenter_v1beta1_rendered_objects_and_open_pools() -> None:
    rendered = _nodepool(
        "karpenter.sh/v1beta1",
        [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i", "g6e"]},
            {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["xlarge"]},
        ],
    )
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1beta1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-5"}]},
    }
    pool = by_name(objects=(rendered, node_class))["np"]
    # g6e.xlarge from the catalog; m7i types are outside it, so the pool stays open to them.
    assert (pool.type, pool.instance_types, pool.types_open) == ("object:NodePool", ("g6e.xlarge",), True)
    assert (pool.markets, pool.ami_family, pool.ami_release) == (("on-demand",), "AL2023", "ami-5")
    listed = _nodepool(
        "karpenter.sh/v1",
        [
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["m7i.large", "g5.xlarge", "m7i.large"],
            }
        ],
    )
    pool = by_name(objects=(listed,))["np"]
    assert (pool.instance_types, pool.named_types, pool.types_open) == (
        ("m7i.large", "g5.xlarge"),
        ("m7i.large", "g5.xlarge", "m7i.large"),
        False,
    )


def test_catalog_labels_for_the_known_disagreements() -> None:
    from gpucloud.catalog import get_catalog

    cat = get_catalog()
    # karpenter-provider-aws v1.12.1 instance-types reference: p4d's GPU is "a100", trn2's accelerator "trainium2".
    assert L.instance_labels(cat.get("p4d.24xlarge"))[L.INSTANCE_GPU_NAME] == "a100"
    assert L.instance_labels(cat.get("trn2.48xlarge"))[L.INSTANCE_ACCELERATOR_NAME] == "trainium2"
    assert L.instance_labels(cat.get("inf2.xlarge"))[L.INSTANCE_ACCELERATOR_NAME] == "inferentia2"
    assert L.instance_labels(cat.get("p5en.48xlarge"))[L.INSTANCE_CPU_MANUFACTURER] == "intel"
    assert L.instance_labels(cat.get("g4dn.metal"))[L.INSTANCE_HYPERVISOR] == ""
    assert L.normalize_labels({"beta.kubernetes.io/os": "linux", "kubernetes.io/os": "windows"}) == {
        "kubernetes.io/os": "windows"
    }


def test_group_on_a_plain_template_buys_the_templates_market() -> None:
    spot = res(
        T.LAUNCH_TEMPLATE, "spot-lt", {"instanceType": "g6.xlarge", "instanceMarketOptions": {"marketType": "spot"}}
    )
    plain = res(T.LAUNCH_TEMPLATE, "plain-lt", {"instanceType": "g6.2xlarge"})
    odd = res(T.LAUNCH_TEMPLATE, "odd-lt", {"instanceType": UNKNOWN, "instanceMarketOptions": {"marketType": UNKNOWN}})
    groups = [
        res(
            T.AUTOSCALING_GROUP,
            name,
            {"minSize": 1.0, "maxSize": 2.0, "launchTemplate": {"id": UNKNOWN}},
            launchTemplate=lt,
        )
        for name, lt in (("on-spot", spot), ("on-plain", plain), ("on-odd", odd))
    ]
    pools = by_name(spot, plain, odd, *groups)
    assert [(n, p.instance_types, p.markets, p.types_from) for n, p in pools.items()] == [
        ("on-spot", ("g6.xlarge",), ("spot",), "launchTemplate.instanceType"),
        ("on-plain", ("g6.2xlarge",), ("on-demand",), "launchTemplate.instanceType"),
        ("on-odd", (), ("on-demand",), "launchTemplate.instanceType"),
    ]
    assert pools["on-odd"].unknown == {"instance_types": "launchTemplate.instanceType"}
    assert pools["on-spot"].template_type == "g6.xlarge" and pools["on-spot"].user_data_known


def test_group_without_template_or_configuration_has_unknown_bootstrap() -> None:
    pool = by_name(res(T.AUTOSCALING_GROUP, "bare", {"maxSize": 1.0}))["bare"]
    assert (pool.instance_types, pool.markets, pool.user_data_known) == ((), (), False)
    assert pool.unknown == {
        "counts": "desiredCapacity/minSize/maxSize",
        "instance_types": "launchTemplate.instanceType",
    }


def test_rendered_nodepool_records_are_named_by_their_object() -> None:
    rendered = _nodepool("karpenter.sh/v1", [])
    pool = fleet.pools([], [rendered])[0]
    assert (pool.urn, pool.type, pool.name) == ("object:NodePool/np#0", "object:NodePool", "np")
    assert (pool.types_open, len(pool.instance_types)) == (True, len(list(get_catalog())))
