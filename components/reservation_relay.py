"""Reservation-event relay: turns EC2 reservation events into the per-instance notices aws-node-termination-handler
drains on. This file is also the Lambda function's whole source (standard library + the runtime's boto3).

Why it exists: NTH 1.25 in queue mode acts on four aws.ec2 / aws.health / aws.autoscaling event kinds only
(aws-node-termination-handler v1.25.0, pkg/monitor/sqsevent/sqs-monitor.go `processEventBridgeEvent`:
"EC2 Instance State-change Notification", "EC2 Spot Instance Interruption Warning", "EC2 Instance Rebalance
Recommendation", "AWS Health Event", plus ASG lifecycle actions). Any other aws.ec2 detail-type yields no
interruption event and the message is deleted as "non-actionable", so:

- "EC2 Capacity Reservation Instance Interruption Warning" (detail `instance-id`, `instance-action`,
  `instance-termination-time`; EC2 User Guide, "Monitor interruptible Capacity Reservations") reached NTH and
  was dropped, and the node died undrained;
- "Capacity Block Expiration Warning" (40 minutes before a Capacity Block ends, instances terminate 10 minutes
  later; detail `capacity-reservation-id`, `end-date`, no instance; EC2 User Guide, "Monitor Capacity Blocks
  using EventBridge") was not routed at all.

The relay answers both with one message per affected running instance, shaped as the "EC2 Spot Instance
Interruption Warning" NTH parses (pkg/monitor/sqsevent/spot-itn-event.go: `detail.instance-id`,
`detail.instance-action`), on NTH's own queue. NTH then does what it does for a spot notice: checks the managed
tag, cordons, taints and drains the node through the Eviction API, which runs the training pods' preStop
checkpoint. The node's taint and NTH's log say "spot interruption"; the relay's log line and the message `id`
(`gpucloud-relay-<source event id>-<instance>`) say which reservation event it stood for.
Karpenter pools do not need it: Karpenter parses the reservation interruption warning itself
(karpenter-provider-aws pkg/controllers/interruption/messages/capacityreservationinterruption) and its queue
keeps receiving the original event.
"""

from __future__ import annotations

import json
import os
from typing import Any

RESERVATION_INTERRUPTION = "EC2 Capacity Reservation Instance Interruption Warning"
# The EventBridge event reference (events-ref-ec2) lists "Capacity Block Expiration Warning"; one localised copy
# of the Capacity Blocks monitoring page shows "Capacity Block Reservation Expiration Warning". Both are matched.
CAPACITY_BLOCK_EXPIRY = ("Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning")
SPOT_ITN = "EC2 Spot Instance Interruption Warning"
QUEUE_URL_ENV = "NTH_QUEUE_URL"


def affected_instances(event: dict[str, Any], describe_instances: Any) -> list[str]:
    """Instance ids an event is about. `describe_instances` is EC2's DescribeInstances (boto3 client method)."""
    detail = event.get("detail") or {}
    kind = event.get("detail-type") or event.get("detail_type")
    if kind == RESERVATION_INTERRUPTION:
        instance = detail.get("instance-id")
        return [instance] if instance else []
    if kind in CAPACITY_BLOCK_EXPIRY:
        reservation = detail.get("capacity-reservation-id")
        if not reservation:
            return []
        found: list[str] = []
        kwargs: dict[str, Any] = {
            "Filters": [
                {"Name": "capacity-reservation-id", "Values": [reservation]},
                {"Name": "instance-state-name", "Values": ["pending", "running"]},
            ]
        }
        while True:
            page = describe_instances(**kwargs)
            for r in page.get("Reservations", []):
                found += [i["InstanceId"] for i in r.get("Instances", [])]
            token = page.get("NextToken")
            if not token:
                return found
            kwargs["NextToken"] = token
    return []


def nth_message(event: dict[str, Any], instance_id: str) -> dict[str, Any]:
    """A spot-interruption-shaped event for one instance, in the form NTH's SQS monitor acts on."""
    region = event.get("region", "")
    return {
        "version": "0",
        "id": f"gpucloud-relay-{event.get('id', 'event')}-{instance_id}",
        "detail-type": SPOT_ITN,
        "source": "aws.ec2",
        "account": event.get("account", ""),
        "time": event.get("time", ""),
        "region": region,
        "resources": [f"arn:aws:ec2:{region}:{event.get('account', '')}:instance/{instance_id}"],
        "detail": {"instance-id": instance_id, "instance-action": "terminate"},
    }


def relay(event: dict[str, Any], describe_instances: Any, send_message: Any, queue_url: str) -> list[str]:
    """Send one NTH message per affected instance; returns the instance ids relayed."""
    instances = affected_instances(event, describe_instances)
    for instance in instances:
        send_message(QueueUrl=queue_url, MessageBody=json.dumps(nth_message(event, instance)))
    kind = event.get("detail-type") or event.get("detail_type")
    print(json.dumps({"relayed": instances, "detailType": kind, "eventId": event.get("id")}))
    return instances


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    import boto3  # in the Lambda runtime; imported here so the module stays importable without it

    ec2 = boto3.client("ec2")
    sqs = boto3.client("sqs")
    relayed = relay(event, ec2.describe_instances, sqs.send_message, os.environ[QUEUE_URL_ENV])
    return {"relayed": relayed}
