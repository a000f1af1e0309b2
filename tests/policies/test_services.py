"""Capacity other AWS services start (services.py), judged by the GPU family allowlist and the GPU count cap:
passing and failing fixtures with the exact resources flagged."""

from __future__ import annotations

import json

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import services
from gpucloud.policies.gpucloud_policies.base import UndecidedError

DEV = {"allowedFamilies": ["g5", "g6"]}
CAP = {"maxGpusPerPool": 16, "maxGpusPerStack": 32}

BATCH = services.BATCH
NOTEBOOK = services.NOTEBOOK
ENDPOINT = services.ENDPOINT_CONFIG
TRAINING = services.TRAINING_JOB
TUNING = services.TUNING_JOB
EMR = services.EMR_CLUSTER
EMR_FLEET = services.EMR_FLEET
IMAGE = services.IMAGE_BUILDER
CFN = services.CFN_STACK
CC = services.CLOUD_CONTROL

CFN_YAML = """
Resources:
  Template:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        InstanceType: p5.48xlarge
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MaxSize: "4"
      LaunchTemplate:
        LaunchTemplateId: !Ref Template
        Version: !GetAtt Template.LatestVersionNumber
"""


def batch(name: str, types: list[str], vcpus: float) -> Res:
    return Res(BATCH, name, {"computeResources": {"instanceTypes": types, "maxVcpus": vcpus, "type": "EC2"}})


ALLOWLIST = [
    batch("batch-ok", ["g5.12xlarge", "optimal"], 96.0),
    batch("batch-family", ["p4d"], 96.0),
    batch("batch-type", ["p5.48xlarge"], 192.0),
    Res(NOTEBOOK, "nb-ok", {"instanceType": "ml.g5.xlarge"}),
    Res(NOTEBOOK, "nb-cpu", {"instanceType": "ml.t3.medium"}),
    Res(NOTEBOOK, "nb-p3", {"instanceType": "ml.p3.2xlarge"}),
    Res(
        ENDPOINT, "ep", {"productionVariants": [{"instanceType": "ml.g5.2xlarge"}, {"instanceType": "ml.p4d.24xlarge"}]}
    ),
    Res(
        TRAINING,
        "train",
        {"resourceConfig": {"instanceGroups": [{"instanceType": "ml.p5.48xlarge", "instanceCount": 2}]}},
    ),
    Res(
        EMR,
        "emr",
        {"masterInstanceGroup": {"instanceType": "m5.xlarge"}, "coreInstanceGroup": {"instanceType": "g4dn.xlarge"}},
    ),
    Res(IMAGE, "image", {"instanceTypes": ["g6.xlarge", "p3.2xlarge"]}),
    Res(CFN, "cfn", {"templateBody": CFN_YAML}),
    Res(CC, "cc", {"typeName": "AWS::EC2::Instance", "desiredState": json.dumps({"InstanceType": "p4de.24xlarge"})}),
    Res(CC, "cc-ok", {"typeName": "AWS::EC2::Instance", "desiredState": json.dumps({"InstanceType": "g6.xlarge"})}),
]


def test_family_allowlist_reads_other_services() -> None:
    assert flagged("gpu-family-allowlist", ALLOWLIST, DEV) == {
        "batch-family",
        "batch-type",
        "nb-p3",
        "ep",
        "train",
        "emr",
        "image",
        "cfn",
        "cc",
    }
    assert resource_messages("gpu-family-allowlist", ALLOWLIST[1], DEV) == [
        "batch-family: computeResources.instanceTypes[0] admits family 'p4d', which is not allowed here (allowed: "
        "g5, g6). Fix: name types of an allowed family, or allow the family in allowedFamilies."
    ]
    assert resource_messages("gpu-family-allowlist", ALLOWLIST[6], DEV) == [
        "ep: productionVariants[1].instanceType 'p4d.24xlarge': family 'p4d' is not allowed in this environment "
        "(allowed: g5, g6). Fix: pick a type from an allowed family, or allow the family in this environment's "
        "policy config."
    ]
    [cfn] = resource_messages("gpu-family-allowlist", ALLOWLIST[10], DEV)
    assert cfn.startswith(
        "cfn: templateBody.Resources.Template.Properties.LaunchTemplateData.InstanceType 'p5.48xlarge'"
    )
    denied = Res(NOTEBOOK, "nb", {"instanceType": "ml.g5.xlarge"})
    assert flagged("gpu-family-allowlist", [denied], {**DEV, "deniedInstanceTypes": ["g5.xlarge"]}) == {"nb"}
    assert flagged("gpu-family-allowlist", [ALLOWLIST[5]], {**DEV, "allowedInstanceTypes": ["p3.2xlarge"]}) == set()


def test_an_unknown_instance_type_is_not_decided() -> None:
    from pulumi_policy.proxy import UnknownValueError

    with pytest.raises(UnknownValueError):
        resource_messages("gpu-family-allowlist", Res(NOTEBOOK, "nb", {"instanceType": UNKNOWN}), DEV)


@pytest.mark.parametrize(
    ("resource", "gpus"),
    [
        # 192 vCPUs buy two p4d.24xlarge (96 vCPUs, 8 GPUs each); g5.12xlarge (48 vCPUs, 4 GPUs) buys 16.
        (batch("b", ["p4d.24xlarge"], 192.0), 16),
        (batch("b", ["g5.12xlarge", "c5.large"], 192.0), 16),
        # A family: its best GPUs-per-vCPU size (g5.xlarge: 1 GPU on 4 vCPUs, so 48; g5.48xlarge would give 8).
        (batch("b", ["g5"], 192.0), 48),
        (Res(NOTEBOOK, "b", {"instanceType": "ml.p3.16xlarge"}), 8),
        (
            Res(
                ENDPOINT,
                "b",
                {
                    "productionVariants": [
                        {
                            "instanceType": "ml.g5.12xlarge",
                            "initialInstanceCount": 2,
                            "managedInstanceScaling": {"maxInstanceCount": 5},
                        }
                    ]
                },
            ),
            20,
        ),
        (Res(TRAINING, "b", {"resourceConfig": {"instanceType": "ml.p5.48xlarge", "instanceCount": 3}}), 24),
        (
            Res(
                TUNING,
                "b",
                {
                    "hyperParameterTuningJobConfig": {"resourceLimits": {"maxParallelTrainingJobs": 4}},
                    "trainingJobDefinition": {"resourceConfig": {"instanceType": "ml.g5.xlarge", "instanceCount": 2}},
                },
            ),
            8,
        ),
        (Res(EMR, "b", {"coreInstanceGroup": {"instanceType": "g5.12xlarge", "instanceCount": 5}}), 20),
        # Fleet targets are units: weight 4 fills 10 units with 3 instances.
        (
            Res(
                EMR_FLEET,
                "b",
                {
                    "targetOnDemandCapacity": 6,
                    "targetSpotCapacity": 4,
                    "instanceTypeConfigs": [{"instanceType": "p4d.24xlarge", "weightedCapacity": 4}],
                },
            ),
            24,
        ),
        (Res(IMAGE, "b", {"instanceTypes": ["p5.48xlarge"]}), 8),
        (Res(CFN, "b", {"templateBody": CFN_YAML}), 32),
        (
            Res(
                CC,
                "b",
                {
                    "typeName": "AWS::EKS::Nodegroup",
                    "desiredState": json.dumps({"InstanceTypes": ["g6e.12xlarge"], "ScalingConfig": {"MaxSize": 6}}),
                },
            ),
            24,
        ),
    ],
)
def test_gpu_ceilings(resource: Res, gpus: int) -> None:
    assert sum(c.max_gpus() or 0 for c in services.capacity(resource.type, resource.props)) == gpus


SIMPLE = [
    (Res("aws:gamelift/fleet:Fleet", "gl", {"ec2InstanceType": "g5.2xlarge"}), None),
    (
        Res(
            "aws:gamelift/gameServerGroup:GameServerGroup",
            "gsg",
            {"maxSize": 3, "instanceDefinitions": [{"instanceType": "g4dn.xlarge"}, {"instanceType": "c5.large"}]},
        ),
        3,
    ),
    (
        Res(
            "aws:appstream/fleet:Fleet",
            "as",
            {"instanceType": "stream.graphics.g5.2xlarge", "computeCapacity": {"desiredInstances": 5}},
        ),
        5,
    ),
    (Res("aws:cloud9/environmentEC2:EnvironmentEC2", "c9", {"instanceType": "g4dn.xlarge"}), 1),
    (Res("aws:ec2/dedicatedHost:DedicatedHost", "host", {"instanceFamily": "p4d"}), 1),
    (
        Res(
            "aws:codebuild/fleet:Fleet",
            "cb",
            {
                "baseCapacity": 2,
                "computeConfiguration": {"instanceType": "g5.xlarge"},
                "scalingConfiguration": {"maxCapacity": 6},
            },
        ),
        6,
    ),
    (
        Res(
            "aws:sagemaker/space:Space",
            "space",
            {"spaceSettings": {"jupyterLabAppSettings": {"defaultResourceSpec": {"instanceType": "ml.g6.xlarge"}}}},
        ),
        1,
    ),
    (
        Res(
            "aws:sagemaker/userProfile:UserProfile",
            "user",
            {"userSettings": {"jupyterLabAppSettings": {"defaultResourceSpec": {"instanceType": "ml.p4d.24xlarge"}}}},
        ),
        None,
    ),
]


def test_simple_services() -> None:
    got = {r.name: [(c.path, c.instance_type) for c in services.capacity(r.type, r.props)] for r, _ in SIMPLE}
    assert got["gsg"] == [
        ("instanceDefinitions[0].instanceType", "g4dn.xlarge"),
        ("instanceDefinitions[1].instanceType", "c5.large"),
    ]
    assert got["as"] == [("instanceType", "g5.2xlarge")]
    assert got["space"] == [("spaceSettings.jupyterLabAppSettings.defaultResourceSpec.instanceType", "g6.xlarge")]
    gpus = {r.name: sum(c.max_gpus() or 0 for c in services.capacity(r.type, r.props)) for r, _ in SIMPLE}
    nodes = {r.name: next(c.nodes for c in services.capacity(r.type, r.props)) for r, _ in SIMPLE}
    assert nodes == {r.name: n for r, n in SIMPLE}
    assert gpus == {"gl": 0, "gsg": 3, "as": 5, "c9": 1, "host": 8, "cb": 6, "space": 1, "user": 0}
    assert flagged("gpu-family-allowlist", [r for r, _ in SIMPLE], DEV) == {"gsg", "c9", "host", "user"}


def test_a_gpu_type_whose_count_is_decided_elsewhere_is_undecided() -> None:
    gamelift = SIMPLE[0][0]
    with pytest.raises(UndecidedError) as exc:
        stack_messages("gpu-count-cap", [gamelift], CAP)
    assert [(u.field, u.urn.rsplit("::", 1)[-1]) for u in exc.value.undecided] == [("ec2InstanceType", "gl")]
    cpu = Res("aws:gamelift/fleet:Fleet", "cpu", {"ec2InstanceType": "c5.large"})
    assert stack_messages("gpu-count-cap", [cpu], CAP) == []


def test_count_cap_counts_other_services() -> None:
    small = Res(NOTEBOOK, "nb", {"instanceType": "ml.g5.12xlarge"})
    big = Res(TRAINING, "train", {"resourceConfig": {"instanceType": "ml.p5.48xlarge", "instanceCount": 3}})
    assert stack_flagged("gpu-count-cap", [small], CAP) == set()
    messages = stack_messages("gpu-count-cap", [small, big], CAP)
    assert [n for n, _ in messages] == ["train"]
    assert messages[0][1].startswith("train: can start 24 GPUs (aws:sagemaker/trainingJob:TrainingJob")
    # 4 + 24 + 8: the stack cap counts service capacity with the pools.
    third = Res(IMAGE, "image", {"instanceTypes": ["p5.48xlarge"]})
    total = stack_messages("gpu-count-cap", [small, big, third], {"maxGpusPerPool": 64, "maxGpusPerStack": 32})
    assert total == [("train", total[0][1])] and "the stack can grow to 36 GPUs in all" in total[0][1]


def test_an_unmodelled_template_count_is_undecided() -> None:
    body = json.dumps(
        {
            "Resources": {
                "F": {
                    "Type": "AWS::EC2::EC2Fleet",
                    "Properties": {"LaunchTemplateConfigs": [{"Overrides": [{"InstanceType": "p5.48xlarge"}]}]},
                }
            }
        }
    )
    fleet = Res(CFN, "cfn", {"templateBody": body})
    with pytest.raises(UndecidedError) as exc:
        stack_messages("gpu-count-cap", [fleet], CAP)
    [u] = exc.value.undecided
    assert u.field == "templateBody.Resources.F.Properties.LaunchTemplateConfigs[0].Overrides[0].InstanceType"
    assert "how many instances this aws:cloudformation/stack:Stack resource starts is not modelled" in u.reason
    # The family allowlist still judges the type it names.
    assert flagged("gpu-family-allowlist", [fleet], DEV) == {"cfn"}


def test_templates() -> None:
    assert services.parse_template("") == {}
    assert services.parse_template("[1, 2]") == {}
    assert services.parse_template("a: [b") == {}
    assert services.parse_template(CFN_YAML)["Resources"]["Group"]["Properties"]["LaunchTemplate"] == {
        "LaunchTemplateId": {"Ref": "Template"},
        "Version": {"Fn::GetAtt": "Template.LatestVersionNumber"},
    }
    assert services.ec2_type("ml.p4de.24xlarge") == "p4de.24xlarge"
    assert services.ec2_type("g5.xlarge") == "g5.xlarge"


def test_managed_instances_and_other_launchers_added_for_issue_25():
    """Lambda and ECS managed instances, Mainframe Modernization, DRS, EKS local clusters, Outposts capacity tasks,
    SageMaker algorithm validation and Pipes' Batch overrides start (or pick) EC2 types the allowlist judges."""
    lam = "aws:lambda/capacityProvider:CapacityProvider"
    ecs = "aws:ecs/capacityProvider:CapacityProvider"
    algo = "aws:sagemaker/algorithm:Algorithm"
    pipe = "aws:pipes/pipe:Pipe"
    rs = [
        Res(lam, "lam-p5", {"instanceRequirements": {"allowedInstanceTypes": ["p5.*"]}}),
        Res(lam, "lam-g6", {"instanceRequirements": {"allowedInstanceTypes": ["g6.*", "c7i.large"]}}),
        Res(
            ecs,
            "ecs-p4d",
            {
                "managedInstancesProvider": {
                    "instanceLaunchTemplate": {"instanceRequirements": {"allowedInstanceTypes": ["p4d.24xlarge"]}}
                }
            },
        ),
        Res("aws:m2/environment:Environment", "m2", {"instanceType": "M2.m5.large"}),
        Res(
            "aws:drs/replicationConfigurationTemplate:ReplicationConfigurationTemplate",
            "drs",
            {"replicationServerInstanceType": "g5.xlarge"},
        ),
        Res("aws:eks/cluster:Cluster", "local", {"outpostConfig": {"controlPlaneInstanceType": "p4d.24xlarge"}}),
        Res(
            "aws:outposts/capacityTask:CapacityTask",
            "outpost",
            {"instancePools": [{"instanceType": "p5.48xlarge", "count": 1}]},
        ),
        Res(
            algo,
            "algo",
            {
                "trainingSpecification": {"supportedTrainingInstanceTypes": ["ml.p5.48xlarge"]},
                "validationSpecification": {
                    "validationProfiles": [
                        {
                            "trainingJobDefinition": {
                                "resourceConfig": {"instanceType": "ml.p4d.24xlarge", "instanceCount": 1}
                            }
                        }
                    ]
                },
            },
        ),
        Res(
            algo,
            "algo-declares-only",
            {"trainingSpecification": {"supportedTrainingInstanceTypes": ["ml.p5.48xlarge"]}},
        ),
        Res(
            pipe,
            "pipe",
            {"targetParameters": {"batchJobParameters": {"containerOverrides": {"instanceType": "p5.48xlarge"}}}},
        ),
    ]
    assert flagged("gpu-family-allowlist", rs, DEV) == {"lam-p5", "ecs-p4d", "local", "outpost", "algo", "pipe"}
    assert resource_messages("gpu-family-allowlist", rs[0], DEV) == [
        "lam-p5: instanceRequirements.allowedInstanceTypes[0] admits family 'p5', which is not allowed here (allowed: "
        "g5, g6). Fix: name types of an allowed family, or allow the family in allowedFamilies."
    ]
    # How many instances the managed services start is theirs to decide: a GPU type leaves the count undecided.
    with pytest.raises(UndecidedError):
        stack_flagged("gpu-count-cap", [rs[1]], CAP)
    # A Batch override picks within its compute environment's capacity, counted there: no GPUs of its own.
    assert stack_flagged("gpu-count-cap", [rs[-1]], CAP) == set()
    assert services.ec2_type("M2.m5.large") == "m5.large"
