"""Karpenter, installed once per cluster: controller IAM role (Pod Identity), node access entry, Helm release.

Pools on the karpenter backend add their own NodePool + EC2NodeClass (components/nodepools/karpenter.py) and
depend on this component's release, which also installs the CRDs.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

import pulumi
import pulumi_aws as aws
from pydantic import Field, InstanceOf

from gpucloud.charts import lock as charts_lock
from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.pod_identity import pod_identity_association, pod_identity_role
from gpucloud.components.releases import helm_release
from gpucloud.spec.chart_pins import pinned_chart

# v1.11+ is needed for EC2NodeClass networkInterfaces and placementGroupSelector; reserved capacity
# (ODCR, Capacity Blocks) since v1.6. Bump deliberately: CRD changes ride on chart upgrades.
KARPENTER_CHART_VERSION = charts_lock.pinned_version("karpenter")
KARPENTER_SERVICE_ACCOUNT = "karpenter"


class GpuKarpenterConfig(ComponentConfig):
    """Inputs of GpuKarpenter."""

    cluster: InstanceOf[ClusterHandle] = Field(description="The cluster Karpenter provisions nodes for.")
    interruption_queue_name: Any = Field(description="Name of Karpenter's own interruption queue (Input[str]).")
    interruption_queue_arn: Any = Field(description="ARN of that queue (Input[str]); scopes the SQS permissions.")
    chart_version: Annotated[str, pinned_chart("karpenter")] = Field(
        default=KARPENTER_CHART_VERSION, description="Karpenter chart version (the charts lock's pin)."
    )
    namespace: str = Field(default="kube-system", description="Namespace the controller runs in.")
    enable_node_repair: bool = Field(
        default=False, description="Turn on Karpenter's NodeRepair feature gate (replaces unhealthy nodes)."
    )
    RENAMED: ClassVar[dict[str, str]] = {"node_repair": "enable_node_repair"}

    create_access_entry: bool = Field(
        default=True,
        description="Create the EC2_LINUX access entry for the node role. Off when something else already "
        "owns it (a managed node group on the same role makes EKS create one; a second one fails).",
    )


class GpuKarpenter(pulumi.ComponentResource):
    """The Karpenter controller for one cluster."""

    def __init__(self, name: str, config: GpuKarpenterConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpucloud:karpenter:GpuKarpenter", name, None, opts)
        cluster = config.cluster
        account, partition = account_and_partition(self)
        self.role = pod_identity_role(
            f"{name}-controller-role",
            description="Karpenter controller",
            tags=config.tags,
            opts=child(self),
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{name}-controller-policy",
            role=self.role.name,
            policy=pulumi.Output.all(
                account,
                partition,
                cluster.name,
                cluster.node_role_arn,
                config.interruption_queue_arn,
                cluster.kms_key_arn,
            ).apply(lambda a: controller_policy(a[0], a[1], config.region, a[2], a[3], a[4], a[5])),
            opts=child(self),
        )
        self.pod_identity = pod_identity_association(
            f"{name}-pod-identity",
            cluster_name=cluster.name,
            namespace=config.namespace,
            service_account=KARPENTER_SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=config.tags,
            opts=child(self),
        )
        self.access_entry: aws.eks.AccessEntry | None = None
        if config.create_access_entry:
            self.access_entry = aws.eks.AccessEntry(
                f"{name}-node-access",
                cluster_name=cluster.name,
                principal_arn=cluster.node_role_arn,
                type="EC2_LINUX",
                tags=config.tags,
                opts=child(self),
            )
        self.release = helm_release(
            f"{name}-release",
            "karpenter",
            config.chart_version,
            namespace=config.namespace,
            values=karpenter_values(
                cluster.name, cluster.endpoint, config.interruption_queue_name, node_repair=config.enable_node_repair
            ),
            opts=child(self, provider=cluster.k8s_provider, depends_on=[self.pod_identity]),
        )
        self.role_arn = self.role.arn
        self.register_outputs(
            {
                "role_arn": self.role_arn,
                "release_name": self.release.name,
                "access_entry_arn": self.access_entry.access_entry_arn if self.access_entry else None,
            }
        )


KARPENTER_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "1", "memory": "1Gi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}


def karpenter_values(cluster_name: Any, endpoint: Any, queue_name: Any, node_repair: bool = False) -> dict[str, Any]:
    return {
        "settings": {
            "clusterName": cluster_name,
            "clusterEndpoint": endpoint,
            # `interruptionQueue` (not the pre-v0.32 `interruptionQueueName`, which is silently ignored).
            "interruptionQueue": queue_name,
            # nodeRepair (alpha, off in the chart): Karpenter replaces nodes whose AcceleratedHardwareReady (and
            # other monitored) conditions stay unhealthy; the node health gate sets that condition on failure.
            "featureGates": {"reservedCapacity": True, **({"nodeRepair": True} if node_repair else {})},
        },
        "serviceAccount": {"create": True, "name": KARPENTER_SERVICE_ACCOUNT},
        "replicas": 2,
        # The chart leaves `controller.resources` empty (values.yaml, 1.12.1); these are the values Karpenter's
        # getting-started guide installs with (1 CPU and 1 GiB, requests equal to limits, so the controller that
        # launches every node is never the one throttled or evicted).
        "controller": {"resources": KARPENTER_RESOURCES},
        # The controller must not run on nodes it manages (it could consolidate itself away).
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}
                    ]
                }
            }
        },
    }


# What a principal needs to launch instances whose EBS volumes are encrypted with a customer managed key
# (Amazon EBS User Guide, "Requirements for Amazon EBS encryption" > "Permissions for users"): CreateGrant
# (limited to grants EC2 creates on its behalf with kms:GrantIsForAWSResource), Decrypt, DescribeKey,
# GenerateDataKeyWithoutPlaintext and ReEncrypt (ReEncryptFrom/ReEncryptTo). Karpenter calls CreateFleet
# itself, so EC2 checks these on the controller's role; without them the instance starts and is terminated at
# once (Client.InvalidKMSKey.InvalidState / Client.InternalError) and Karpenter retries forever.
EBS_CMK_ACTIONS = ("kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncrypt*")


def controller_policy(
    account: str,
    partition: str,
    region: str,
    cluster_name: str,
    node_role_arn: str,
    queue_arn: str,
    volume_kms_key_arn: str | None = None,
) -> str:
    """Karpenter's controller permissions, scoped to this cluster's tag, region, queue, node role and the key its
    EC2NodeClasses encrypt volumes with.

    The key policy of the cluster key (components/network.py `key_policy`) gives the account root `kms:*`, which
    delegates use of the key to IAM, so this identity policy is all Karpenter needs; a key brought in through
    cluster.kmsKeyArn needs the same delegation (the default key policy has it).
    """
    tag = f"kubernetes.io/cluster/{cluster_name}"
    ec2 = f"arn:{partition}:ec2:{region}"
    in_region = {"StringEquals": {"aws:RequestedRegion": region}}
    statements: list[dict[str, Any]] = [
        {
            "Sid": "LaunchFromSharedResources",
            "Effect": "Allow",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Resource": [
                f"{ec2}::image/*",
                f"{ec2}::snapshot/*",
                f"{ec2}:*:security-group/*",
                f"{ec2}:*:subnet/*",
                f"{ec2}:*:capacity-reservation/*",
                f"{ec2}:*:placement-group/*",
            ],
        },
        {
            "Sid": "LaunchTemplateForCluster",
            "Effect": "Allow",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Resource": f"{ec2}:*:launch-template/*",
            "Condition": {"StringEquals": {f"aws:ResourceTag/{tag}": "owned"}},
        },
        {
            "Sid": "CreateTaggedForCluster",
            "Effect": "Allow",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            "Resource": [
                f"{ec2}:*:fleet/*",
                f"{ec2}:*:instance/*",
                f"{ec2}:*:volume/*",
                f"{ec2}:*:network-interface/*",
                f"{ec2}:*:launch-template/*",
                f"{ec2}:*:spot-instances-request/*",
            ],
            "Condition": {"StringEquals": {f"aws:RequestTag/{tag}": "owned"}},
        },
        {
            "Sid": "TagOnCreate",
            "Effect": "Allow",
            "Action": "ec2:CreateTags",
            "Resource": [
                f"{ec2}:*:fleet/*",
                f"{ec2}:*:instance/*",
                f"{ec2}:*:volume/*",
                f"{ec2}:*:network-interface/*",
                f"{ec2}:*:launch-template/*",
                f"{ec2}:*:spot-instances-request/*",
            ],
            "Condition": {
                "StringEquals": {
                    f"aws:RequestTag/{tag}": "owned",
                    "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                }
            },
        },
        {
            "Sid": "TagAndDeleteOwned",
            "Effect": "Allow",
            "Action": ["ec2:CreateTags", "ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
            "Condition": {"StringEquals": {f"aws:ResourceTag/{tag}": "owned"}},
        },
        {
            "Sid": "Describe",
            "Effect": "Allow",
            "Action": [
                "ec2:DescribeAvailabilityZones",
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstances",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            ],
            "Resource": "*",
            "Condition": in_region,
        },
        {
            "Sid": "AmiParameters",
            "Effect": "Allow",
            "Action": "ssm:GetParameter",
            "Resource": f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
        },
        {"Sid": "Pricing", "Effect": "Allow", "Action": "pricing:GetProducts", "Resource": "*"},
        {
            "Sid": "InterruptionQueue",
            "Effect": "Allow",
            "Action": ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
            "Resource": queue_arn,
        },
        {
            "Sid": "PassNodeRoleOnly",
            "Effect": "Allow",
            "Action": "iam:PassRole",
            "Resource": node_role_arn,
            "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
        },
        {
            "Sid": "CreateInstanceProfilesForCluster",
            "Effect": "Allow",
            "Action": ["iam:CreateInstanceProfile", "iam:TagInstanceProfile"],
            "Resource": f"arn:{partition}:iam::{account}:instance-profile/*",
            "Condition": {"StringEquals": {f"aws:RequestTag/{tag}": "owned"}},
        },
        {
            "Sid": "ManageInstanceProfilesOfCluster",
            "Effect": "Allow",
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:DeleteInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:TagInstanceProfile",
            ],
            "Resource": f"arn:{partition}:iam::{account}:instance-profile/*",
            "Condition": {"StringEquals": {f"aws:ResourceTag/{tag}": "owned"}},
        },
        {
            "Sid": "ReadInstanceProfiles",
            "Effect": "Allow",
            "Action": "iam:GetInstanceProfile",
            "Resource": f"arn:{partition}:iam::{account}:instance-profile/*",
        },
        {
            # IAM list actions take no resource-level scope (Service Authorization Reference): scoped to
            # instance-profile/* the grant is void and Karpenter's instance-profile cleanup gets AccessDenied.
            # Karpenter's own CloudFormation policy grants it on "*" too.
            "Sid": "ListInstanceProfiles",
            "Effect": "Allow",
            "Action": "iam:ListInstanceProfiles",
            "Resource": "*",
        },
        {
            "Sid": "Cluster",
            "Effect": "Allow",
            "Action": "eks:DescribeCluster",
            "Resource": f"arn:{partition}:eks:{region}:{account}:cluster/{cluster_name}",
        },
    ]
    if volume_kms_key_arn:
        statements += [
            {
                "Sid": "UseVolumeKeyForLaunches",
                "Effect": "Allow",
                "Action": list(EBS_CMK_ACTIONS),
                "Resource": volume_kms_key_arn,
            },
            {
                "Sid": "GrantVolumeKeyToEc2",
                "Effect": "Allow",
                "Action": "kms:CreateGrant",
                "Resource": volume_kms_key_arn,
                "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
            },
        ]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})
