"""AWS Load Balancer Controller: NLBs (and ALBs) for the cluster's Services, with its IAM policy on Pod Identity.

Installed from the pinned chart (aws-load-balancer-controller in the charts lock). Its IAM permissions follow the
controller's documented policy (kubernetes-sigs/aws-load-balancer-controller docs/install/iam_policy.json):
read-only discovery everywhere, and every mutating call on load balancers, target groups and security groups
only on resources that carry the controller's own elbv2.k8s.aws/cluster tag, so the controller cannot touch
load balancers and security groups it did not create.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pydantic import Field

from components.addons.base import AddonsBase
from components.base import ComponentConfig
from components.interfaces import ClusterHandle
from gpucloud.spec import AddonsSpec

SERVICE_ACCOUNT = "aws-load-balancer-controller"
# Annotations a Service needs to get an NLB from this controller (its "Network Load Balancer" guide): the
# `external` type hands the Service to this controller instead of the in-tree cloud provider; `ip` targets
# register pod IPs directly (no NodePort hop, works with the VPC CNI).
LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
LB_TARGET_TYPE = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"
LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"

_DESCRIBE = [
    "ec2:DescribeAccountAttributes",
    "ec2:DescribeAddresses",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInternetGateways",
    "ec2:DescribeVpcs",
    "ec2:DescribeVpcPeeringConnections",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeInstances",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeTags",
    "ec2:DescribeCoipPools",
    "ec2:GetCoipPoolUsage",
    "ec2:GetSecurityGroupsForVpc",
    "ec2:DescribeIpamPools",
    "ec2:DescribeRouteTables",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeListenerCertificates",
    "elasticloadbalancing:DescribeSSLPolicies",
    "elasticloadbalancing:DescribeRules",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:DescribeTargetHealth",
    "elasticloadbalancing:DescribeTags",
    "elasticloadbalancing:DescribeTrustStores",
    "elasticloadbalancing:DescribeListenerAttributes",
    "elasticloadbalancing:DescribeCapacityReservation",
]
_CERTS_AND_WAF = [
    "cognito-idp:DescribeUserPoolClient",
    "acm:ListCertificates",
    "acm:DescribeCertificate",
    "iam:ListServerCertificates",
    "iam:GetServerCertificate",
    "waf-regional:GetWebACL",
    "waf-regional:GetWebACLForResource",
    "waf-regional:AssociateWebACL",
    "waf-regional:DisassociateWebACL",
    "wafv2:GetWebACL",
    "wafv2:GetWebACLForResource",
    "wafv2:AssociateWebACL",
    "wafv2:DisassociateWebACL",
    "shield:GetSubscriptionState",
    "shield:DescribeProtection",
    "shield:CreateProtection",
    "shield:DeleteProtection",
]
_LB_MUTATE = [
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:SetIpAddressType",
    "elasticloadbalancing:SetSecurityGroups",
    "elasticloadbalancing:SetSubnets",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:RegisterTargets",
    "elasticloadbalancing:DeregisterTargets",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:ModifyListenerAttributes",
    "elasticloadbalancing:ModifyCapacityReservation",
    "elasticloadbalancing:ModifyIpPools",
]


def controller_policy(partition: str) -> dict[str, Any]:
    """The controller's IAM policy (see the module docstring for where each statement comes from)."""
    elb = f"arn:{partition}:elasticloadbalancing:*:*"
    owned = {"Null": {f"aws:ResourceTag/{tag}": "false" for tag in ("elbv2.k8s.aws/cluster",)}}
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ElbServiceLinkedRole",
            "Effect": "Allow",
            "Action": "iam:CreateServiceLinkedRole",
            "Resource": "*",
            "Condition": {"StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}},
        },
        {"Sid": "Describe", "Effect": "Allow", "Action": _DESCRIBE, "Resource": "*"},
        {"Sid": "CertificatesAndWaf", "Effect": "Allow", "Action": _CERTS_AND_WAF, "Resource": "*"},
        {
            "Sid": "SecurityGroupRules",
            "Effect": "Allow",
            "Action": ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress"],
            "Resource": "*",
        },
        {"Sid": "CreateSecurityGroup", "Effect": "Allow", "Action": "ec2:CreateSecurityGroup", "Resource": "*"},
        {
            "Sid": "TagNewSecurityGroup",
            "Effect": "Allow",
            "Action": "ec2:CreateTags",
            "Resource": f"arn:{partition}:ec2:*:*:security-group/*",
            "Condition": {
                "StringEquals": {"ec2:CreateAction": "CreateSecurityGroup"},
                "Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"},
            },
        },
        {
            "Sid": "TagOwnedSecurityGroup",
            "Effect": "Allow",
            "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
            "Resource": f"arn:{partition}:ec2:*:*:security-group/*",
            "Condition": {
                "Null": {
                    "aws:RequestTag/elbv2.k8s.aws/cluster": "true",
                    "aws:ResourceTag/elbv2.k8s.aws/cluster": "false",
                }
            },
        },
        {
            "Sid": "OwnedSecurityGroups",
            "Effect": "Allow",
            "Action": [
                "ec2:AuthorizeSecurityGroupIngress",
                "ec2:RevokeSecurityGroupIngress",
                "ec2:DeleteSecurityGroup",
            ],
            "Resource": "*",
            "Condition": owned,
        },
        {
            "Sid": "CreateTaggedLoadBalancers",
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup"],
            "Resource": "*",
            "Condition": {"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}},
        },
        {
            "Sid": "ListenersAndRules",
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:CreateListener",
                "elasticloadbalancing:DeleteListener",
                "elasticloadbalancing:CreateRule",
                "elasticloadbalancing:DeleteRule",
            ],
            "Resource": "*",
        },
        {
            "Sid": "TagOwnedLoadBalancers",
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"],
            "Resource": [
                f"{elb}:targetgroup/*/*",
                f"{elb}:loadbalancer/net/*/*",
                f"{elb}:loadbalancer/app/*/*",
            ],
            "Condition": {
                "Null": {
                    "aws:RequestTag/elbv2.k8s.aws/cluster": "true",
                    "aws:ResourceTag/elbv2.k8s.aws/cluster": "false",
                }
            },
        },
        {
            "Sid": "TagListenersAndRules",
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"],
            "Resource": [
                f"{elb}:listener/net/*/*/*",
                f"{elb}:listener/app/*/*/*",
                f"{elb}:listener-rule/net/*/*/*",
                f"{elb}:listener-rule/app/*/*/*",
            ],
        },
        {"Sid": "MutateOwned", "Effect": "Allow", "Action": _LB_MUTATE, "Resource": "*", "Condition": owned},
        {
            "Sid": "TagOnCreate",
            "Effect": "Allow",
            "Action": "elasticloadbalancing:AddTags",
            "Resource": [f"{elb}:targetgroup/*/*", f"{elb}:loadbalancer/net/*/*", f"{elb}:loadbalancer/app/*/*"],
            "Condition": {
                "StringEquals": {"elasticloadbalancing:CreateAction": ["CreateTargetGroup", "CreateLoadBalancer"]},
                "Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"},
            },
        },
        {
            "Sid": "TargetsAndListeners",
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:RegisterTargets",
                "elasticloadbalancing:DeregisterTargets",
            ],
            "Resource": f"{elb}:targetgroup/*/*",
        },
        {
            "Sid": "ModifyListenersAndRules",
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:SetWebAcl",
                "elasticloadbalancing:ModifyListener",
                "elasticloadbalancing:AddListenerCertificates",
                "elasticloadbalancing:RemoveListenerCertificates",
                "elasticloadbalancing:ModifyRule",
                "elasticloadbalancing:SetRulePriorities",
            ],
            "Resource": "*",
        },
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def controller_values(cluster_name: Any, region: str, vpc_id: Any) -> dict[str, Any]:
    return {
        "clusterName": cluster_name,
        "region": region,
        # Explicit: with IMDS hop limit 1 (the node pools' launch templates) the controller cannot discover them.
        "vpcId": vpc_id,
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        # Services without an explicit class stay with the in-tree provider; ours set the `external` type.
        "enableServiceMutatorWebhook": False,
        "createIngressClassResource": False,
    }


class LoadBalancerControllerConfig(ComponentConfig):
    """Inputs of LoadBalancerController."""

    addons: AddonsSpec = Field(description="The add-ons section of the stack spec (version, namespace prefix).")


class LoadBalancerController(AddonsBase):
    """The controller release and its Pod Identity role."""

    def __init__(
        self,
        name: str,
        config: LoadBalancerControllerConfig,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:addons:LoadBalancerController", name, None, opts)
        self._name = name
        self._config = config
        self._cluster = cluster
        self.releases = {}
        self.namespaces = {}
        spec = config.addons.load_balancer_controller
        namespace = "kube-system"
        partition = self._arn_prefix("elasticloadbalancing").apply(lambda arn: arn.split(":")[1])
        policy = partition.apply(lambda p: json.dumps(controller_policy(p)))
        self.role = self._pod_identity_role("lb-controller", namespace, SERVICE_ACCOUNT, policy, [])
        self.release = self._release(
            "aws-load-balancer-controller",
            "aws-load-balancer-controller",
            spec.version,
            namespace,
            controller_values(cluster.name, config.region, cluster.vpc_id),
            depends_on=[self.role],
        )
        self.allow_internet_facing = spec.allow_internet_facing
        self.register_outputs({"role_arn": self.role.arn, "allow_internet_facing": self.allow_internet_facing})
