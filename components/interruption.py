"""Interruption handling: an encrypted SQS queue fed by EventBridge rules, and its consumers.

GpuInterruptionQueue creates one queue per *consumer* (Karpenter, aws-node-termination-handler), every rule
targeting every queue. Two consumers must not share a queue: each message is delivered to one receiver and
both delete what they receive, so Karpenter would swallow the spot warning meant for a managed node (and NTH
the one meant for a Karpenter node). GpuNodeTerminationHandler installs NTH in queue mode for managed and
self-managed pools; Karpenter consumes its own queue (components/karpenter.py).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field, InstanceOf

from gpucloud.charts import lock as charts_lock
from gpucloud.components import reservation_relay
from gpucloud.components.base import ComponentConfig, account_and_partition, child, pod_identity_trust
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.reservation_relay import CAPACITY_BLOCK_EXPIRY, QUEUE_URL_ENV, RESERVATION_INTERRUPTION
from gpucloud.spec.addons import pinned_chart

Consumer = Literal["karpenter", "node-termination-handler"]

# Tag NTH checks before it drains (checkTagBeforeDraining): only instances of managed / self-managed pools
# carry it, so NTH never acts on a Karpenter node even if a message reaches it.
NTH_MANAGED_TAG = "aws-node-termination-handler/managed"
NTH_CHART_VERSION = charts_lock.pinned_version("aws-node-termination-handler")
NTH_SERVICE_ACCOUNT = "aws-node-termination-handler"

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
RELAY_RUNTIME = "python3.13"


class GpuInterruptionQueueConfig(ComponentConfig):
    """Inputs of GpuInterruptionQueue."""

    consumers: list[Consumer] = Field(
        min_length=1, description="Who reads interruption events; one queue each, in this order."
    )
    enable_asg_lifecycle_events: bool = Field(
        default=False,
        description="Also route ASG termination lifecycle actions (self-managed pools) to the NTH queue.",
    )
    relay_reservation_events: bool = Field(
        default=False,
        description="NTH pools run on reserved capacity: relay reservation interruption warnings and Capacity "
        "Block expiry warnings to NTH's queue as per-instance notices NTH drains on "
        "(components/reservation_relay.py).",
    )


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
        if config.relay_reservation_events and nth_queue is not None:
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


class ReservationEventRelay(pulumi.ComponentResource):
    """A Lambda function (components/reservation_relay.py) that turns reservation events into per-instance
    notices on NTH's queue; EventBridge rules subscribe to it through `subscribe`."""

    def __init__(
        self,
        name: str,
        tags: dict[str, str],
        *,
        nth_queue_url: Any,
        nth_queue_arn: Any,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:interruption:ReservationEventRelay", name, None, opts)
        self._name = name
        self.role = aws.iam.Role(
            f"{name}-role",
            description="gpucloud reservation-event relay (Lambda) -> aws-node-termination-handler queue",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            tags=tags,
            opts=child(self),
        )
        # Pre-created with a retention; Lambda would otherwise create the group on first run and keep logs forever.
        self.log_group = aws.cloudwatch.LogGroup(f"{name}-logs", retention_in_days=30, tags=tags, opts=child(self))
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.name,
            policy=pulumi.Output.all(nth_queue_arn, self.log_group.arn).apply(lambda a: relay_policy(a[0], a[1])),
            opts=child(self),
        )
        self.function = aws.lambda_.Function(
            f"{name}-function",
            description="Relays EC2 reservation interruption and Capacity Block expiry events to NTH",
            runtime=RELAY_RUNTIME,
            handler="reservation_relay.handler",
            role=self.role.arn,
            code=pulumi.AssetArchive({"reservation_relay.py": pulumi.FileAsset(reservation_relay.__file__)}),
            timeout=60,
            memory_size=128,
            environment=aws.lambda_.FunctionEnvironmentArgs(variables={QUEUE_URL_ENV: nth_queue_url}),
            logging_config=aws.lambda_.FunctionLoggingConfigArgs(log_format="Text", log_group=self.log_group.name),
            tags=tags,
            opts=child(self, depends_on=[self.role_policy]),
        )
        self.register_outputs({"function_name": self.function.name})

    def subscribe(self, name: str, rule: aws.cloudwatch.EventRule) -> aws.cloudwatch.EventTarget:
        permission = aws.lambda_.Permission(
            f"{name}-invoke",
            action="lambda:InvokeFunction",
            function=self.function.name,
            principal="events.amazonaws.com",
            source_arn=rule.arn,
            opts=child(self),
        )
        return aws.cloudwatch.EventTarget(
            name,
            rule=rule.name,
            target_id="reservation-relay",
            arn=self.function.arn,
            opts=child(self, depends_on=[permission]),
        )


def relay_policy(queue_arn: str, log_group_arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "SendToNthQueue", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn},
                # DescribeInstances supports no resource-level permissions.
                {
                    "Sid": "FindReservationInstances",
                    "Effect": "Allow",
                    "Action": "ec2:DescribeInstances",
                    "Resource": "*",
                },
                {
                    "Sid": "Logs",
                    "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": f"{log_group_arn}:*",
                },
            ],
        }
    )


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


class GpuNodeTerminationHandlerConfig(ComponentConfig):
    """Inputs of GpuNodeTerminationHandler."""

    cluster: InstanceOf[ClusterHandle] = Field(description="The cluster NTH runs in.")
    queue_url: Any = Field(description="URL of NTH's own interruption queue (pulumi Input[str]).")
    queue_arn: Any = Field(description="ARN of that queue (pulumi Input[str]); scopes NTH's IAM policy.")
    chart_version: Annotated[str, pinned_chart("aws-node-termination-handler")] = Field(
        default=NTH_CHART_VERSION, description="aws-node-termination-handler chart version."
    )
    namespace: str = Field(default="kube-system", description="Namespace NTH runs in.")


class GpuNodeTerminationHandler(pulumi.ComponentResource):
    """aws-node-termination-handler in queue mode with its Pod Identity role, for managed/self-managed pools."""

    def __init__(
        self, name: str, config: GpuNodeTerminationHandlerConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpucloud:interruption:GpuNodeTerminationHandler", name, None, opts)
        cluster = config.cluster
        account, partition = account_and_partition(self)
        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=pod_identity_trust(),
            description="aws-node-termination-handler (queue mode)",
            tags=config.tags,
            opts=child(self),
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.name,
            policy=pulumi.Output.all(config.queue_arn, account, partition).apply(
                lambda a: nth_policy(a[0], a[1], a[2], config.region)
            ),
            opts=child(self),
        )
        self.pod_identity = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster.name,
            namespace=config.namespace,
            service_account=NTH_SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=config.tags,
            opts=child(self),
        )
        chart = charts_lock.pin("aws-node-termination-handler", config.chart_version)
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            # 0.27.0 is published only at its OCI URL (the eks-charts index stops at 0.21.0).
            chart=chart.release_chart,
            version=chart.version,
            namespace=config.namespace,
            repository_opts=chart.repository_opts,
            values=nth_values(config.queue_url, config.region),
            opts=child(self, provider=cluster.k8s_provider, depends_on=[self.pod_identity]),
        )
        self.role_arn = self.role.arn
        self.register_outputs({"role_arn": self.role_arn, "release_name": self.release.name})


NTH_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "50m", "memory": "64Mi"},
    "limits": {"cpu": "500m", "memory": "256Mi"},
}


def nth_values(queue_url: Any, region: str) -> dict[str, Any]:
    """Helm values: queue mode, tag check on, and never scheduled onto Karpenter nodes."""
    return {
        "enableSqsTerminationDraining": True,
        "queueURL": queue_url,
        "awsRegion": region,
        "checkTagBeforeDraining": True,
        "managedTag": NTH_MANAGED_TAG,
        "enableSpotInterruptionDraining": True,
        "enableScheduledEventDraining": True,
        # EKS managed groups and ASG capacity rebalancing already replace a node on a rebalance
        # recommendation; draining a GPU node on the (often early) recommendation too would cost a job.
        "enableRebalanceMonitoring": False,
        "enableRebalanceDraining": False,
        # NTH has its own queue, so messages about nodes it does not know are safe to drop.
        "deleteSqsMsgIfNodeNotFound": True,
        "serviceAccount": {"create": True, "name": NTH_SERVICE_ACCOUNT},
        # The chart's `resources` (values.yaml, 0.27.0) is empty; the queue processor polls one SQS queue and
        # watches nodes, so a small request with headroom in the limit.
        "resources": NTH_RESOURCES,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}
                    ]
                }
            }
        },
        "daemonsetNodeSelector": {},
    }


def nth_policy(queue_arn: str, account: str, partition: str, region: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "Queue",
                    "Effect": "Allow",
                    "Action": ["sqs:DeleteMessage", "sqs:ReceiveMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"],
                    "Resource": queue_arn,
                },
                {
                    "Sid": "CompleteLifecycleOnManagedGroups",
                    "Effect": "Allow",
                    "Action": "autoscaling:CompleteLifecycleAction",
                    "Resource": f"arn:{partition}:autoscaling:{region}:{account}:autoScalingGroup:*",
                    "Condition": {"StringEquals": {f"aws:ResourceTag/{NTH_MANAGED_TAG}": "true"}},
                },
                {
                    "Sid": "Describe",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeTags",
                        "ec2:DescribeInstances",
                        "ec2:DescribeTags",
                    ],
                    "Resource": "*",
                },
            ],
        }
    )
