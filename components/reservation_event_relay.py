"""ReservationEventRelay: a Lambda that turns EC2 reservation events into the per-instance notices
aws-node-termination-handler drains on (the function's source is components/reservation_relay.py)."""

from __future__ import annotations

import json
from typing import Any, Literal

import pulumi
import pulumi_aws as aws

from gpucloud.components import reservation_relay
from gpucloud.components.base import child
from gpucloud.components.reservation_relay import QUEUE_URL_ENV

Consumer = Literal["karpenter", "node-termination-handler"]

# Tag NTH checks before it drains (checkTagBeforeDraining): only instances of managed / self-managed pools
# carry it, so NTH never acts on a Karpenter node even if a message reaches it.


RELAY_RUNTIME = "python3.13"


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
