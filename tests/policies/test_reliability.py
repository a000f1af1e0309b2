"""Reliability guardrails."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages

NG = "aws:eks/nodeGroup:NodeGroup"
BUCKET = "aws:s3/bucket:Bucket"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
SUBNET = "aws:ec2/subnet:Subnet"
RELEASE = "kubernetes:helm.sh/v3:Release"


def test_checkpoint_bucket_versioning():
    versioning = "aws:s3/bucketVersioning:BucketVersioning"
    resources = [
        Res(BUCKET, "checkpoints", {}),
        Res(
            versioning,
            "checkpoints-v",
            {"bucket": UNKNOWN, "versioningConfiguration": {"status": "Enabled"}},
            deps={"bucket": ["checkpoints"]},
        ),
        Res(BUCKET, "train-ckpt", {}),
        Res(
            versioning,
            "train-ckpt-v",
            {"bucket": UNKNOWN, "versioningConfiguration": {"status": "Suspended"}},
            deps={"bucket": ["train-ckpt"]},
        ),
        Res(BUCKET, "tagged", {"tags": {"Purpose": "checkpoints"}}),
        Res(BUCKET, "datasets", {}),
    ]
    assert stack_flagged("checkpoint-bucket-versioning", resources) == {"train-ckpt", "tagged"}
    with pytest.raises(UnknownValueError):
        stack_flagged("checkpoint-bucket-versioning", [Res(BUCKET, "x", {"tags": UNKNOWN})])


def test_spot_interruption_handling():
    spot_pool = Res(NG, "spot", {"capacityType": "SPOT", "instanceTypes": ["g6e.xlarge"]})
    queue = Res("aws:sqs/queue:Queue", "queue", {})
    rule = Res(
        "aws:cloudwatch/eventRule:EventRule",
        "rule",
        {"eventPattern": '{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}'},
    )
    karpenter = Res(
        RELEASE,
        "karpenter",
        {"chart": "oci://public.ecr.aws/karpenter/karpenter", "values": {"settings": {"interruptionQueue": "q"}}},
    )
    old_key = Res(
        RELEASE, "karpenter-old", {"chart": "karpenter", "values": {"settings": {"interruptionQueueName": "q"}}}
    )
    nth = Res(RELEASE, "nth", {"chart": "aws-node-termination-handler"})
    assert stack_flagged("spot-interruption-handling", [spot_pool, queue, rule, karpenter]) == set()
    assert stack_flagged("spot-interruption-handling", [spot_pool, nth]) == set()
    assert stack_flagged("spot-interruption-handling", [spot_pool]) == {"spot"}
    assert stack_flagged("spot-interruption-handling", [spot_pool, karpenter]) == {"spot"}  # no queue / rule
    assert stack_flagged("spot-interruption-handling", [spot_pool, queue, rule, old_key]) == {"karpenter-old", "spot"}
    assert stack_flagged("spot-interruption-handling", [Res(NG, "od", {"instanceTypes": ["g6e.xlarge"]})]) == set()
    with pytest.raises(UnknownValueError):
        stack_flagged("spot-interruption-handling", [Res(NG, "u", {"capacityType": UNKNOWN})])


def test_data_retain_on_delete():
    resources = [
        Res(BUCKET, "retained", {}, retain_on_delete=True),
        Res(BUCKET, "protected", {}, protect=True),
        Res(BUCKET, "deletable", {}),
        Res(FSX, "scratch", {"deploymentType": "SCRATCH_2"}),
        Res(FSX, "persistent", {"deploymentType": "PERSISTENT_2"}),
        Res("aws:ebs/volume:Volume", "volume", {}),
    ]
    assert flagged("data-retain-on-delete", resources) == {"deletable", "persistent", "volume"}
    assert flagged("data-retain-on-delete", resources, {"exemptResources": ["volume"], "exemptScratch": False}) == {
        "deletable",
        "persistent",
        "scratch",
    }
    # In the Pulumi CLI retainOnDelete is invisible to policies: undecidable, never passed silently.
    with pytest.raises(UnknownValueError):
        resource_messages("data-retain-on-delete", Res(BUCKET, "cli", {}, retain_on_delete=None))


def test_fsx_same_az_as_the_gpu_pools():
    subnets = [
        Res(SUBNET, "a", {"availabilityZone": "us-east-1a"}),
        Res(SUBNET, "b", {"availabilityZone": "us-east-1b"}),
    ]
    pool = Res(NG, "pool", {"instanceTypes": ["p5.48xlarge"], "subnetIds": [UNKNOWN]}, deps={"subnetIds": ["a"]})
    resources = [
        *subnets,
        pool,
        Res(FSX, "same-az", {"subnetIds": [UNKNOWN]}, deps={"subnetIds": ["a"]}),
        Res(FSX, "other-az", {"subnetIds": [UNKNOWN]}, deps={"subnetIds": ["b"]}),
        Res(FSX, "two-subnets", {"subnetIds": [UNKNOWN, UNKNOWN]}, deps={"subnetIds": ["a", "b"]}),
    ]
    assert stack_flagged("fsx-same-az", resources) == {"other-az", "two-subnets"}
    [(_, message)] = stack_messages("fsx-same-az", [*subnets, pool, resources[4]])
    assert "GPU pool pool runs in ['us-east-1a']" in message
    with pytest.raises(UnknownValueError):
        stack_flagged(
            "fsx-same-az",
            [
                Res(SUBNET, "a", {"availabilityZone": UNKNOWN}),
                pool,
                Res(FSX, "f", {"subnetIds": [UNKNOWN]}, deps={"subnetIds": ["a"]}),
            ],
        )
