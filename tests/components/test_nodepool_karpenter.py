"""Karpenter backend: NodePool + EC2NodeClass per pool, Karpenter installed once with its queue and IAM."""

from __future__ import annotations

import json

from nodepool_fixtures import EFA_SG, KMS_ARN, NODE_ROLE_ARN, NODE_SG, SUBNETS, TAGS, build_pool, pool, types_of

from gpucloud.plan import UNKNOWN

NC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NP = "kubernetes:karpenter.sh/v1:NodePool"
PG = "aws:ec2/placementGroup:PlacementGroup"
REL = "kubernetes:helm.sh/v3:Release"
CR = "cr-0123456789abcdef0"
TRAIN = {"backend": "karpenter", "workload": "training"}


def test_pool_children() -> None:
    plan = build_pool(pool(**TRAIN))
    assert types_of(plan) == [(NC, "p-nodeclass"), (NP, "p-nodepool")]
    release = plan.find(REL, "karpenter-release")
    np_ = plan.find(NP, "p-nodepool")
    assert release.urn in np_.dependencies
    assert plan.find(NC, "p-nodeclass").urn in np_.dependencies


def test_node_pool_spec_training() -> None:
    np_ = build_pool(pool(**TRAIN, capacity={"onDemandBase": 1, "onDemandPercentageAboveBase": 0})).find(
        NP, "p-nodepool"
    )
    assert np_.get("metadata.name") == "pool"
    spec = np_.get("spec")
    reqs = {r["key"]: r["values"] for r in spec["template"]["spec"]["requirements"]}
    assert reqs == {
        "karpenter.sh/capacity-type": ["spot", "on-demand"],
        "node.kubernetes.io/instance-type": ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"],
        "topology.kubernetes.io/zone": list(SUBNETS),
    }
    assert spec["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert spec["template"]["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "pool",
    }
    assert spec["template"]["spec"]["expireAfter"] == "720h"
    assert spec["template"]["spec"]["terminationGracePeriod"] == "2h"
    assert spec["limits"] == {"nvidia.com/gpu": "4"}
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "10m",
        # Drift (an AMI release in the spec) rolls one node at a time; do-not-disrupt keeps busy nodes.
        "budgets": [{"nodes": "1"}, {"nodes": "1", "reasons": ["Drifted"]}],
    }
    assert spec["template"]["metadata"]["labels"]["gpucloud.io/workload"] == "training"


def test_node_pool_spec_inference() -> None:
    np_ = build_pool(pool(backend="karpenter", karpenter={"disruptionBudgetNodes": "20%"})).find(NP, "p-nodepool")
    assert np_.get("spec.disruption") == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "10m",
        # The explicit all-reasons budget stays; drift follows the pool's pace (a quarter of 4 nodes: 1).
        "budgets": [{"nodes": "20%"}, {"nodes": "1", "reasons": ["Drifted"]}],
    }


def test_node_class_hardening() -> None:
    nc = build_pool(pool(**TRAIN)).find(NC, "p-nodeclass")
    spec = nc.get("spec")
    assert spec["role"] == "gpucloud-test-node"
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert spec["subnetSelectorTerms"] == [{"id": s} for s in SUBNETS.values()]
    assert spec["securityGroupSelectorTerms"] == [{"id": NODE_SG}]
    assert spec["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1.0,
        "httpTokens": "required",
    }
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "200Gi",
                "volumeType": "gp3",
                "iops": 3000.0,
                "throughput": 250.0,
                "encrypted": True,
                "kmsKeyID": KMS_ARN,
                "deleteOnTermination": True,
            },
        }
    ]
    assert spec["instanceStorePolicy"] == "RAID0"
    assert spec["associatePublicIPAddress"] is False
    assert spec["tags"] == {**TAGS, "Name": "p-node"}
    for absent in ("capacityReservationSelectorTerms", "placementGroupSelector", "networkInterfaces", "amiFamily"):
        assert absent not in spec


def test_raid0_off_without_instance_store() -> None:
    nc = build_pool(pool(backend="karpenter", instanceTypes=["p3.2xlarge"], capacity={})).find(NC, "p-nodeclass")
    assert "instanceStorePolicy" not in nc.get("spec")


def test_bottlerocket_and_explicit_ami() -> None:
    nc = build_pool(pool(backend="karpenter", ami={"family": "bottlerocket"})).find(NC, "p-nodeclass")
    assert nc.get("spec.amiSelectorTerms") == [{"alias": "bottlerocket@v1.52.0"}]
    assert nc.get("spec.blockDeviceMappings.0.deviceName") == "/dev/xvdb"
    nc = build_pool(pool(backend="karpenter", ami={"id": "ami-0123456789abcdef0"})).find(NC, "p-nodeclass")
    assert nc.get("spec.amiSelectorTerms") == [{"id": "ami-0123456789abcdef0"}]
    assert nc.get("spec.amiFamily") == "AL2023"


def test_efa_placement_and_interfaces() -> None:
    spec = pool(**TRAIN, instanceTypes=["p5en.48xlarge"], availabilityZones=["us-east-1a"], efa={"enabled": True})
    plan = build_pool(spec)
    assert types_of(plan) == sorted([(PG, "p-placement"), (NC, "p-nodeclass"), (NP, "p-nodepool")])
    nc = plan.find(NC, "p-nodeclass").get("spec")
    assert nc["securityGroupSelectorTerms"] == [{"id": NODE_SG}, {"id": EFA_SG}]
    assert nc["subnetSelectorTerms"] == [{"id": SUBNETS["us-east-1a"]}]
    assert set(nc["placementGroupSelector"]) == {"name"}
    nis = nc["networkInterfaces"]
    assert len(nis) == 17  # ENA primary + 16 efa-only
    assert nis[0] == {"networkCardIndex": 0.0, "deviceIndex": 0.0, "interfaceType": "interface"}
    assert nis[1] == {"networkCardIndex": 0.0, "deviceIndex": 1.0, "interfaceType": "efa-only"}
    assert nis[2] == {"networkCardIndex": 1.0, "deviceIndex": 0.0, "interfaceType": "efa-only"}


def test_efa_placement_group_off() -> None:
    spec = pool(
        **TRAIN,
        instanceTypes=["p5en.48xlarge"],
        availabilityZones=["us-east-1a"],
        efa={"enabled": True, "placementGroup": False},
    )
    plan = build_pool(spec)
    assert "placementGroupSelector" not in plan.find(NC, "p-nodeclass").get("spec")


def test_reserved_capacity_block() -> None:
    spec = pool(
        **TRAIN,
        instanceTypes=["p5.48xlarge"],
        availabilityZones=["us-east-1a"],
        maxSize=4,
        capacity={"reserved": {"kind": "capacity-block", "count": 4, "capacityReservationIds": [CR]}},
    )
    plan = build_pool(spec)
    assert plan.find(NC, "p-nodeclass").get("spec.capacityReservationSelectorTerms") == [{"id": CR}]
    reqs = plan.find(NP, "p-nodepool").get("spec.template.spec.requirements")
    assert reqs[0] == {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}


def test_reserved_odcr_create() -> None:
    spec = pool(
        **TRAIN,
        instanceTypes=["p5.48xlarge"],
        availabilityZones=["us-east-1a"],
        capacity={"reserved": {"kind": "odcr", "count": 1, "create": True}},
    )
    plan = build_pool(spec, preview=True)
    nc = plan.find(NC, "p-nodeclass")
    cr = plan.find("aws:ec2/capacityReservation:CapacityReservation", "p-reservation")
    assert nc.property_dependencies["spec"] == [cr.urn]
    assert nc.get("spec.capacityReservationSelectorTerms") == [{"id": UNKNOWN}]  # the new reservation's id


def test_karpenter_install() -> None:
    plan = build_pool(pool(**TRAIN))
    release = plan.find(REL, "karpenter-release")
    assert release.get("chart") == "oci://public.ecr.aws/karpenter/karpenter"
    assert release.get("version") == "1.12.1"
    assert release.get("namespace") == "kube-system"
    settings = release.get("values.settings")
    assert settings["clusterName"] == "gpucloud-test"
    assert "interruptionQueue" in settings and "interruptionQueueName" not in settings
    assert settings["featureGates"] == {"reservedCapacity": True}
    assert (
        plan.find("aws:eks/podIdentityAssociation:PodIdentityAssociation", "karpenter-pod-identity").get(
            "serviceAccount"
        )
        == "karpenter"
    )
    entry = plan.find("aws:eks/accessEntry:AccessEntry", "karpenter-node-access")
    assert entry.get("type") == "EC2_LINUX" and entry.get("principalArn") == NODE_ROLE_ARN
    trust = json.loads(plan.find("aws:iam/role:Role", "karpenter-controller-role").get("assumeRolePolicy"))
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}


def test_karpenter_controller_policy_scopes_pass_role() -> None:
    from gpucloud.components.karpenter import controller_policy

    doc = json.loads(
        controller_policy(
            "123456789012", "aws", "us-east-1", "c1", NODE_ROLE_ARN, "arn:aws:sqs:us-east-1:123456789012:q"
        )
    )
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert by_sid["PassNodeRoleOnly"]["Resource"] == NODE_ROLE_ARN
    assert by_sid["InterruptionQueue"]["Resource"] == "arn:aws:sqs:us-east-1:123456789012:q"
    assert by_sid["Cluster"]["Resource"] == "arn:aws:eks:us-east-1:123456789012:cluster/c1"
    passes = [s for s in doc["Statement"] if "iam:PassRole" in str(s["Action"])]
    assert len(passes) == 1
    assert not any(s["Action"] == "*" or s["Action"] == ["*"] for s in doc["Statement"])


def test_controller_can_launch_with_the_node_class_volume_key() -> None:
    # The EC2NodeClass encrypts root volumes with the cluster's customer managed key and Karpenter calls
    # CreateFleet itself, so its role needs the EBS CMK permissions (Amazon EBS User Guide, "Requirements for
    # Amazon EBS encryption", Permissions for users), scoped to that key.
    plan = build_pool(pool(**TRAIN))
    assert plan.find(NC, "p-nodeclass").get("spec.blockDeviceMappings")[0]["ebs"]["kmsKeyID"] == KMS_ARN
    doc = json.loads(plan.find("aws:iam/rolePolicy:RolePolicy", "karpenter-controller-policy").get("policy"))
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert by_sid["UseVolumeKeyForLaunches"] == {
        "Sid": "UseVolumeKeyForLaunches",
        "Effect": "Allow",
        "Action": ["kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncrypt*"],
        "Resource": KMS_ARN,
    }
    assert by_sid["GrantVolumeKeyToEc2"] == {
        "Sid": "GrantVolumeKeyToEc2",
        "Effect": "Allow",
        "Action": "kms:CreateGrant",
        "Resource": KMS_ARN,
        "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
    }


def test_cluster_key_policy_delegates_use_to_iam() -> None:
    # The controller's identity policy only counts if the key policy lets IAM grant use of the key: the cluster
    # key's policy gives the account root kms:* (the KMS "default key policy" delegation).
    from gpucloud.components.network import key_policy

    doc = json.loads(key_policy("123456789012", "aws", "us-east-1"))
    root = [s for s in doc["Statement"] if s["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}]
    assert root == [
        {
            "Sid": "AccountAdministersThroughIam",
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
            "Action": "kms:*",
            "Resource": "*",
        }
    ]
