"""What the pulumi-eks components share (pulumi/pulumi-eks v4.3.0): the component type tokens, the ServiceRole
(nodejs/eks/servicerole.ts), the node security group and its rules (nodejs/eks/nodes/securitygroup.ts), and the
facts a cluster model leaves for the node groups attached to it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Provenance, known

PROVENANCE = Provenance(
    "pulumi/pulumi-eks",
    "v4.3.0",
    (
        "nodejs/eks/cluster/cluster.ts",
        "nodejs/eks/nodes/nodegroup.ts",
        "nodejs/eks/nodes/securitygroup.ts",
        "nodejs/eks/servicerole.ts",
        "nodejs/eks/addons/cni-addon.ts",
        "nodejs/eks/addons/addon.ts",
        "nodejs/eks/cluster/authenticationMode.ts",
    ),
)

CLUSTER = "eks:index:Cluster"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
NODE_GROUP_V2 = "eks:index:NodeGroupV2"
NODE_GROUP = "eks:index:NodeGroup"
NODE_GROUP_SECURITY_GROUP = "eks:index:NodeGroupSecurityGroup"
SERVICE_ROLE = "eks:index:ServiceRole"
VPC_CNI_ADDON = "eks:index:VpcCniAddon"
RANDOM_SUFFIX = "eks:index:RandomSuffix"

# nodejs/eks/nodes/instances.ts DEFAULT_INSTANCE_TYPE
DEFAULT_INSTANCE_TYPE = "t3.medium"
PARTITION_ARN = "arn:aws:iam::aws:policy/"


def _sha1(text: str) -> str:
    # servicerole.ts sha1hash: the first 8 hex digits of the policy id's SHA-1 name each attachment.
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def _arn_prefix(ctx: Context) -> str:
    partition = (
        "aws-cn" if ctx.region.startswith("cn-") else "aws-us-gov" if ctx.region.startswith("us-gov-") else "aws"
    )
    return f"arn:{partition}:iam::aws:policy/"


def service_role(
    ctx: Context,
    name: str,
    service: str,
    policies: list[str],
    tags: Any,
    description: str | None = None,
    actions: list[str] | None = None,
    parent: Handle | None = None,
) -> Handle:
    """servicerole.ts ServiceRole: a component holding the role and one attachment per managed policy."""
    component = ctx.add(
        SERVICE_ROLE,
        name,
        {"service": service, "description": description, "tags": tags},
        parent=parent,
        custom=False,
    )
    policy = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": actions or ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": [service]}}
            ],
        },
        separators=(",", ":"),
    )
    role = ctx.add(
        "aws:iam/role:Role",
        f"{name}-role",
        {"description": description, "assumeRolePolicy": policy, "tags": tags},
        parent=component,
    )
    for policy_name in policies:
        ctx.add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            f"{name}-{_sha1(PARTITION_ARN + policy_name)}",
            {"policyArn": _arn_prefix(ctx) + policy_name, "role": UNKNOWN},
            parent=component,
        )
    return role


def node_security_group(
    ctx: Context, name: str, vpc_id: Any, cluster_sg_id: Any, cluster_name: Any, tags: Any, parent: Handle | None = None
) -> tuple[Handle, Handle]:
    """securitygroup.ts createNodeGroupSecurityGroup."""
    name_tags: Any = UNKNOWN
    if known(cluster_name) and isinstance(tags, dict):
        name_tags = {"Name": f"{name}-nodeSecurityGroup", f"kubernetes.io/cluster/{cluster_name}": "owned", **tags}
    sg = ctx.add(
        "aws:ec2/securityGroup:SecurityGroup",
        f"{name}-nodeSecurityGroup",
        {"vpcId": vpc_id, "revokeRulesOnDelete": True, "tags": name_tags},
        parent=parent,
    )
    rule = "aws:ec2/securityGroupRule:SecurityGroupRule"
    ctx.add(
        rule,
        f"{name}-eksNodeIngressRule",
        {
            "description": "Allow nodes to communicate with each other",
            "type": "ingress",
            "fromPort": 0,
            "toPort": 0,
            "protocol": "-1",
            "securityGroupId": UNKNOWN,
            "self": True,
        },
        parent=parent,
    )
    ctx.add(
        rule,
        f"{name}-eksNodeClusterIngressRule",
        {
            "description": "Allow worker Kubelets and pods to receive communication from the cluster control plane",
            "type": "ingress",
            "fromPort": 1025,
            "toPort": 65535,
            "protocol": "tcp",
            "securityGroupId": UNKNOWN,
            "sourceSecurityGroupId": cluster_sg_id,
        },
        parent=parent,
    )
    ctx.add(
        rule,
        f"{name}-eksExtApiServerClusterIngressRule",
        {
            "description": "Allow pods running extension API servers on port 443 to receive communication from "
            "cluster control plane",
            "type": "ingress",
            "fromPort": 443,
            "toPort": 443,
            "protocol": "tcp",
            "securityGroupId": UNKNOWN,
            "sourceSecurityGroupId": cluster_sg_id,
        },
        parent=parent,
    )
    ctx.add(
        rule,
        f"{name}-eksNodeInternetEgressRule",
        {
            "description": "Allow internet access.",
            "type": "egress",
            "fromPort": 0,
            "toPort": 0,
            "protocol": "-1",
            "cidrBlocks": ["0.0.0.0/0"],
            "securityGroupId": UNKNOWN,
        },
        parent=parent,
    )
    ingress = ctx.add(
        rule,
        f"{name}-eksClusterIngressRule",
        {
            "description": "Allow pods to communicate with the cluster API Server",
            "type": "ingress",
            "fromPort": 443,
            "toPort": 443,
            "protocol": "tcp",
            "securityGroupId": cluster_sg_id,
            "sourceSecurityGroupId": UNKNOWN,
        },
        parent=parent,
    )
    return sg, ingress


def cluster_facts(ctx: Context) -> dict[str, Any]:
    ref = ctx.inputs.get("cluster")
    if isinstance(ref, str) and ref in ctx.facts:
        return ctx.facts[ref]
    if isinstance(ref, dict):
        # CoreData passed as a plain object (cluster.core): read what the node group needs from it.
        eks_cluster = ref.get("cluster") if isinstance(ref.get("cluster"), str) else None
        for facts in ctx.facts.values():
            if eks_cluster is not None and facts.get("eksClusterUrn") == eks_cluster:
                return facts
    return {}
