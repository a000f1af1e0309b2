"""Interruption handling: an encrypted SQS queue fed by EventBridge rules, and its consumers.

GpuInterruptionQueue creates one queue per *consumer* (Karpenter, aws-node-termination-handler), every rule
targeting every queue. Two consumers must not share a queue: each message is delivered to one receiver and
both delete what they receive, so Karpenter would swallow the spot warning meant for a managed node (and NTH
the one meant for a Karpenter node). GpuNodeTerminationHandler (termination_handler.py) installs NTH in queue mode
for managed and self-managed pools; Karpenter consumes its own queue (components/karpenter.py); the queue relays
reservation events through ReservationEventRelay (reservation_event_relay.py).
"""

from __future__ import annotations

import json
from typing import ClassVar, Literal

import pulumi
import pulumi_aws as aws
from pydantic import Field

from gpucloud.components.base import ComponentConfig, child
from gpucloud.components.reservation_event_relay import ReservationEventRelay
from gpucloud.components.reservation_relay import CAPACITY_BLOCK_EXPIRY, RESERVATION_INTERRUPTION

Consumer = Literal["karpenter", "node-termination-handler"]

# Tag NTH checks before it drains (checkTagBeforeDraining): only instances of managed / self-managed pools
# carry it, so NTH never acts on a Karpenter node even if a message reaches it.
NTH_MANAGED_TAG = "aws-node-termination-handler/managed"

# (rule key, source, detail-types); terraform-aws-eks v21 wires the same five.
EVENT_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("health", "aws.health", ("AWS Health Event",)),
    ("spot-interruption", "aws.ec2", ("EC2 Spot Instance Interruption Warning",)),
    ("rebalance", "aws.ec2", ("EC2 Instance Rebalance Recommendation",)),
    ("state-change", "aws.ec2", ("EC2 Instance State-change Notification",)),
    ("reservation-interruption", "aws.ec2", (RESERVATION_INTERRUPTION,)),
)
# Reservation events NTH 1.25 does not act on (see components/reservation_relay.py): they go to Karpenter's
# queue as they are (it parses the interruption warning) and, for NTH pools, to the relay, never to NTH's queue.
CAPACITY_BLOCK_RULE = ("capacity-block-expiry", "aws.ec2", CAPACITY_BLOCK_EXPIRY)
RESERVATION_RULES = ("reservation-interruption", CAPACITY_BLOCK_RULE[0])
# Self-managed ASGs announce scale-in / rebalance terminations through their termination lifecycle hook.
ASG_LIFECYCLE_RULE = ("asg-terminate", "aws.autoscaling", ("EC2 Instance-terminate Lifecycle Action",))


class GpuInterruptionQueueConfig(ComponentConfig):
    """Inputs of GpuInterruptionQueue."""

    consumers: list[Consumer] = Field(
        min_length=1, description="Who reads interruption events; one queue each, in this order."
    )
    enable_asg_lifecycle_events: bool = Field(
        default=False,
        description="Also route ASG termination lifecycle actions (self-managed pools) to the NTH queue.",
    )
    enable_reservation_relay: bool = Field(
        default=False,
        description="NTH pools run on reserved capacity: relay reservation interruption warnings and Capacity "
        "Block expiry warnings to NTH's queue as per-instance notices NTH drains on "
        "(components/reservation_relay.py).",
    )
    RENAMED: ClassVar[dict[str, str]] = {"relay_reservation_events": "enable_reservation_relay"}


class GpuInterruptionQueue(pulumi.ComponentResource):
    """SQS queue(s) with EventBridge rules for spot, rebalance, state-change, health and reservation events."""

    def __init__(
        self, name: str, config: GpuInterruptionQueueConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpucloud:interruption:GpuInterruptionQueue", name, None, opts)
        if len(set(config.consumers)) != len(config.consumers):
            raise ValueError(f"consumers listed twice: {config.consumers}")
        self.queues: dict[str, aws.sqs.Queue] = {}
        self.queue_policies: dict[str, aws.sqs.QueuePolicy] = {}
        for consumer in config.consumers:
            queue = aws.sqs.Queue(
                f"{name}-{consumer}",
                # Events older than the 2-minute spot notice are useless; 300 s is what Karpenter's template uses.
                message_retention_seconds=300,
                sqs_managed_sse_enabled=True,
                tags=config.tags,
                opts=child(self),
            )
            self.queues[consumer] = queue
            self.queue_policies[consumer] = aws.sqs.QueuePolicy(
                f"{name}-{consumer}-policy",
                queue_url=queue.url,
                policy=queue.arn.apply(_queue_policy),
                opts=child(self),
            )
        self.rules: dict[str, aws.cloudwatch.EventRule] = {}
        self.targets: list[aws.cloudwatch.EventTarget] = []
        self.relay: ReservationEventRelay | None = None
        nth_queue = self.queues.get("node-termination-handler")
        if config.enable_reservation_relay and nth_queue is not None:
            self.relay = ReservationEventRelay(
                f"{name}-reservation-relay",
                config.tags,
                nth_queue_url=nth_queue.url,
                nth_queue_arn=nth_queue.arn,
                opts=child(self),
            )
        rules = list(EVENT_RULES)
        if self.relay is not None:
            rules.append(CAPACITY_BLOCK_RULE)
        if config.enable_asg_lifecycle_events:
            rules.append(ASG_LIFECYCLE_RULE)
        for key, source, detail_types in rules:
            consumers = list(config.consumers)
            if key == ASG_LIFECYCLE_RULE[0]:
                consumers = [c for c in consumers if c == "node-termination-handler"]
            elif key in RESERVATION_RULES:
                # Karpenter acts on the reservation interruption warning itself; NTH would drop both events.
                consumers = [c for c in consumers if c == "karpenter" and key == "reservation-interruption"]
            relayed = self.relay is not None and key in RESERVATION_RULES
            if not consumers and not relayed:
                continue
            rule = aws.cloudwatch.EventRule(
                f"{name}-{key}",
                description=f"{' / '.join(detail_types)} -> GPU node interruption handling",
                event_pattern=json.dumps({"source": [source], "detail-type": list(detail_types)}),
                tags=config.tags,
                opts=child(self),
            )
            self.rules[key] = rule
            for consumer in consumers:
                self.targets.append(
                    aws.cloudwatch.EventTarget(
                        f"{name}-{key}-{consumer}",
                        rule=rule.name,
                        # Unique per rule is enough; the default derives from the (long) resource name and
                        # EventBridge caps target ids at 64 characters.
                        target_id=consumer,
                        arn=self.queues[consumer].arn,
                        opts=child(self),
                    )
                )
            if relayed:
                assert self.relay is not None
                self.targets.append(self.relay.subscribe(f"{name}-{key}-relay", rule))
        first = self.queues[config.consumers[0]]
        self.queue = first
        self.queue_name = first.name
        self.queue_arn = first.arn
        self.queue_url = first.url
        self.register_outputs(
            {
                "queue_name": self.queue_name,
                "queue_arn": self.queue_arn,
                "queue_names": {c: q.name for c, q in self.queues.items()},
                "rule_names": {k: r.name for k, r in self.rules.items()},
            }
        )

    def queue_for(self, consumer: Consumer) -> aws.sqs.Queue | None:
        return self.queues.get(consumer)


def _queue_policy(queue_arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "EventBridgeAndSqsWrite",
                    "Effect": "Allow",
                    "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                    "Action": "sqs:SendMessage",
                    "Resource": queue_arn,
                },
                {
                    "Sid": "DenyHTTP",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "sqs:*",
                    "Resource": queue_arn,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
            ],
        }
    )
