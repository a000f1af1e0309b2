"""GpuNodeTerminationHandler: aws-node-termination-handler in queue mode with its Pod Identity role, for managed and
self-managed pools."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pulumi
import pulumi_aws as aws
from pydantic import Field, InstanceOf

from gpucloud.charts import lock as charts_lock
from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.interruption import NTH_MANAGED_TAG
from gpucloud.components.pod_identity import pod_identity_association, pod_identity_role
from gpucloud.components.releases import helm_release
from gpucloud.spec.chart_pins import pinned_chart

Consumer = Literal["karpenter", "node-termination-handler"]

# Tag NTH checks before it drains (checkTagBeforeDraining): only instances of managed / self-managed pools
# carry it, so NTH never acts on a Karpenter node even if a message reaches it.


NTH_CHART_VERSION = charts_lock.pinned_version("aws-node-termination-handler")
# The chart's nodeTerminationGracePeriod (values.yaml, 0.27.0): NTH schedules a node's drain this long before the
# event. Kept where no pool declares a longer drain.
NTH_NODE_GRACE_DEFAULT = 120
NTH_SERVICE_ACCOUNT = "aws-node-termination-handler"


class GpuNodeTerminationHandlerConfig(ComponentConfig):
    """Inputs of GpuNodeTerminationHandler."""

    cluster: InstanceOf[ClusterHandle] = Field(description="The cluster NTH runs in.")
    queue_url: Any = Field(description="URL of NTH's own interruption queue (pulumi Input[str]).")
    queue_arn: Any = Field(description="ARN of that queue (pulumi Input[str]); scopes NTH's IAM policy.")
    chart_version: Annotated[str, pinned_chart("aws-node-termination-handler")] = Field(
        default=NTH_CHART_VERSION, description="aws-node-termination-handler chart version."
    )
    namespace: str = Field(default="kube-system", description="Namespace NTH runs in.")
    node_termination_grace_period: int = Field(
        default=NTH_NODE_GRACE_DEFAULT,
        ge=30,
        le=7200,
        description="Seconds before a scheduled event NTH starts draining a node: at least the longest drain of "
        "the pools it serves (nodepools.rollout.nth_node_grace_seconds sizes it from their checkpoint models).",
    )


class GpuNodeTerminationHandler(pulumi.ComponentResource):
    """aws-node-termination-handler in queue mode with its Pod Identity role, for managed/self-managed pools."""

    def __init__(
        self, name: str, config: GpuNodeTerminationHandlerConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpucloud:interruption:GpuNodeTerminationHandler", name, None, opts)
        cluster = config.cluster
        account, partition = account_and_partition(self)
        self.role = pod_identity_role(
            f"{name}-role",
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
        self.pod_identity = pod_identity_association(
            f"{name}-pod-identity",
            cluster_name=cluster.name,
            namespace=config.namespace,
            service_account=NTH_SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=config.tags,
            opts=child(self),
        )
        # 0.27.0 is published only at its OCI URL (the eks-charts index stops at 0.21.0); the lock has that URL.
        self.release = helm_release(
            f"{name}-release",
            "aws-node-termination-handler",
            config.chart_version,
            namespace=config.namespace,
            values=nth_values(config.queue_url, config.region, config.node_termination_grace_period),
            opts=child(self, provider=cluster.k8s_provider, depends_on=[self.pod_identity]),
        )
        self.role_arn = self.role.arn
        self.register_outputs({"role_arn": self.role_arn, "release_name": self.release.name})


NTH_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "50m", "memory": "64Mi"},
    "limits": {"cpu": "500m", "memory": "256Mi"},
}


def nth_values(queue_url: Any, region: str, node_grace: int = NTH_NODE_GRACE_DEFAULT) -> dict[str, Any]:
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
        # Pods keep their own terminationGracePeriodSeconds (podTerminationGracePeriod -1, the chart's default);
        # the node's drain starts early enough for the longest of them (the pools' checkpoint models).
        **({"nodeTerminationGracePeriod": node_grace} if node_grace != NTH_NODE_GRACE_DEFAULT else {}),
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
