"""Interruption queue, its EventBridge rules, and exactly one consumer per pool (Karpenter or NTH)."""

from __future__ import annotations

import json

import pytest
from nodepool_fixtures import REGION, TAGS, cluster_handle, run

from gpucloud.components.interruption import NTH_MANAGED_TAG, GpuInterruptionQueue, GpuInterruptionQueueConfig
from gpucloud.components.termination_handler import (
    GpuNodeTerminationHandler,
    GpuNodeTerminationHandlerConfig,
    nth_policy,
    nth_values,
)

Q = "aws:sqs/queue:Queue"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
POLICY = "aws:sqs/queuePolicy:QueuePolicy"

EXPECTED_PATTERNS = {
    "q-health": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "q-spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "q-rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "q-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "q-reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}


def queue_plan(consumers: list, asg: bool = False, preview: bool = False, relay: bool = False):  # type: ignore[no-untyped-def]
    return run(
        lambda: GpuInterruptionQueue(
            "q",
            GpuInterruptionQueueConfig(
                region=REGION,
                tags=TAGS,
                consumers=consumers,
                enable_asg_lifecycle_events=asg,
                enable_reservation_relay=relay,
            ),
        ),
        preview=preview,
    )


def test_queue_and_five_rules() -> None:
    plan = queue_plan(["karpenter"])
    queues = plan.of_type(Q)
    assert [q.name for q in queues] == ["q-karpenter"]
    assert queues[0].get("messageRetentionSeconds") == 300.0
    assert queues[0].get("sqsManagedSseEnabled") is True
    assert queues[0].get("tags") == TAGS
    rules = {r.name: json.loads(r.get("eventPattern")) for r in plan.of_type(RULE)}
    assert rules == EXPECTED_PATTERNS
    assert sorted(t.name for t in plan.of_type(TARGET)) == sorted(f"{n}-karpenter" for n in EXPECTED_PATTERNS)


def test_queue_policy_allows_events_and_sqs() -> None:
    plan = queue_plan(["node-termination-handler"], preview=False)
    from gpucloud.components.interruption import _queue_policy

    doc = json.loads(_queue_policy("arn:aws:sqs:us-east-1:123456789012:q"))
    allow = doc["Statement"][0]
    assert allow["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    assert allow["Action"] == "sqs:SendMessage"
    assert [p.name for p in plan.of_type(POLICY)] == ["q-node-termination-handler-policy"]


def test_one_queue_per_consumer_every_rule_to_each() -> None:
    plan = queue_plan(["karpenter", "node-termination-handler"], asg=True)
    assert sorted(q.name for q in plan.of_type(Q)) == ["q-karpenter", "q-node-termination-handler"]
    targets = sorted(t.name for t in plan.of_type(TARGET))
    expected = [f"{n}-{c}" for n in EXPECTED_PATTERNS for c in ("karpenter", "node-termination-handler")]
    # NTH 1.25 drops the reservation interruption warning (not one of the detail-types its SQS monitor
    # processes), so only Karpenter, which parses it, gets it as is.
    expected.remove("q-reservation-interruption-node-termination-handler")
    # The ASG termination hook concerns self-managed nodes only, so it feeds NTH's queue alone.
    expected.append("q-asg-terminate-node-termination-handler")
    assert targets == sorted(expected)
    rule = plan.find(RULE, "q-asg-terminate")
    assert json.loads(rule.get("eventPattern")) == {
        "source": ["aws.autoscaling"],
        "detail-type": ["EC2 Instance-terminate Lifecycle Action"],
    }


def test_asg_rule_off_by_default() -> None:
    plan = queue_plan(["node-termination-handler"])
    assert "q-asg-terminate" not in {r.name for r in plan.of_type(RULE)}


def test_nth_never_on_karpenter_nodes() -> None:
    values = nth_values("https://sqs.us-east-1.amazonaws.com/123456789012/q", REGION)
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}]
    # and it only drains instances carrying the managed tag, which Karpenter nodes never get
    assert values["checkTagBeforeDraining"] is True
    assert values["managedTag"] == NTH_MANAGED_TAG
    assert values["enableSqsTerminationDraining"] is True
    assert values["queueURL"] == "https://sqs.us-east-1.amazonaws.com/123456789012/q"


def test_nth_install() -> None:
    def program() -> None:
        GpuNodeTerminationHandler(
            "nth",
            GpuNodeTerminationHandlerConfig(
                region=REGION,
                tags=TAGS,
                cluster=cluster_handle(),
                queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/q",
                queue_arn="arn:aws:sqs:us-east-1:123456789012:q",
            ),
        )

    plan = run(program)
    release = plan.find("kubernetes:helm.sh/v3:Release", "nth-release")
    # 0.27.0 is published only at its OCI URL (the eks-charts index stops at 0.21.0): no repository_opts.
    assert release.get("chart") == "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
    assert release.get("version") == "0.27.0"
    assert release.get("repositoryOpts") is None
    assert release.get("values.enableSqsTerminationDraining") is True
    assert release.get("values.queueURL") == "https://sqs.us-east-1.amazonaws.com/123456789012/q"
    assoc = plan.find("aws:eks/podIdentityAssociation:PodIdentityAssociation", "nth-pod-identity")
    assert assoc.get("serviceAccount") == "aws-node-termination-handler"
    assert assoc.get("namespace") == "kube-system"


def test_nth_policy_scoped() -> None:
    doc = json.loads(nth_policy("arn:aws:sqs:us-east-1:123456789012:q", "123456789012", "aws", REGION))
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert by_sid["Queue"]["Resource"] == "arn:aws:sqs:us-east-1:123456789012:q"
    assert by_sid["CompleteLifecycleOnManagedGroups"]["Action"] == "autoscaling:CompleteLifecycleAction"
    assert by_sid["CompleteLifecycleOnManagedGroups"]["Condition"] == {
        "StringEquals": {f"aws:ResourceTag/{NTH_MANAGED_TAG}": "true"}
    }
    assert "ec2:DescribeInstances" in by_sid["Describe"]["Action"]


def test_nth_only_queue_gets_no_reservation_rule_without_reserved_pools() -> None:
    plan = queue_plan(["node-termination-handler"])
    assert "q-reservation-interruption" not in {r.name for r in plan.of_type(RULE)}
    assert "q-capacity-block-expiry" not in {r.name for r in plan.of_type(RULE)}


def test_reservation_events_reach_nth_through_the_relay() -> None:
    plan = queue_plan(["karpenter", "node-termination-handler"], relay=True)
    # Detail-types from the EC2 User Guide ("Monitor Capacity Blocks using EventBridge", "Monitor interruptible
    # Capacity Reservations") and the EventBridge EC2 event reference.
    assert json.loads(plan.find(RULE, "q-capacity-block-expiry").get("eventPattern")) == {
        "source": ["aws.ec2"],
        "detail-type": ["Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning"],
    }
    targets = {t.name: t for t in plan.of_type(TARGET)}
    assert {n for n in targets if "reservation" in n or "capacity-block" in n} == {
        "q-reservation-interruption-karpenter",
        "q-reservation-interruption-relay",
        "q-capacity-block-expiry-relay",
    }
    fn = plan.find("aws:lambda/function:Function", "q-reservation-relay-function")
    assert (fn.get("runtime"), fn.get("handler")) == ("python3.13", "reservation_relay.handler")
    assert set(fn.get("environment.variables")) == {"NTH_QUEUE_URL"}
    perms = plan.of_type("aws:lambda/permission:Permission")
    assert sorted((p.name, p.get("principal"), p.get("action")) for p in perms) == [
        ("q-capacity-block-expiry-relay-invoke", "events.amazonaws.com", "lambda:InvokeFunction"),
        ("q-reservation-interruption-relay-invoke", "events.amazonaws.com", "lambda:InvokeFunction"),
    ]


def test_relay_policy_is_scoped_to_nth_queue() -> None:
    from gpucloud.components.reservation_event_relay import relay_policy

    doc = json.loads(relay_policy("arn:aws:sqs:us-east-1:123456789012:nth", "arn:aws:logs:us-east-1:1:log-group:r"))
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert by_sid["SendToNthQueue"] == {
        "Sid": "SendToNthQueue",
        "Effect": "Allow",
        "Action": "sqs:SendMessage",
        "Resource": "arn:aws:sqs:us-east-1:123456789012:nth",
    }
    assert by_sid["FindReservationInstances"]["Action"] == "ec2:DescribeInstances"
    assert by_sid["Logs"]["Resource"] == "arn:aws:logs:us-east-1:1:log-group:r:*"


def test_target_ids_fit_eventbridge() -> None:
    # EventBridge PutTargets: Target.Id is 1-64 characters of [.-_A-Za-z0-9] (botocore events model, TargetId).
    plan = queue_plan(["karpenter", "node-termination-handler"], asg=True, relay=True)
    ids = {t.name: t.get("targetId") for t in plan.of_type(TARGET)}
    assert ids["q-spot-interruption-node-termination-handler"] == "node-termination-handler"
    assert ids["q-spot-interruption-karpenter"] == "karpenter"
    assert ids["q-capacity-block-expiry-relay"] == "reservation-relay"
    assert all(len(i) <= 64 for i in ids.values())


def test_nth_chart_version_outside_the_lock_is_refused() -> None:
    import pydantic

    with pytest.raises(pydantic.ValidationError) as info:
        GpuNodeTerminationHandlerConfig(
            region=REGION,
            tags=TAGS,
            cluster=cluster_handle(),
            queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/q",
            queue_arn="arn:aws:sqs:us-east-1:123456789012:q",
            chart_version="0.21.0",
        )
    assert "chart aws-node-termination-handler version '0.21.0' is not pinned; the lock pins 0.27.0" in str(info.value)
