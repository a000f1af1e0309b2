"""pulumi-eks components (`eks:index:*`) as the provider constructs them, from pulumi/pulumi-eks v4.3.0 (the
version `pulumi-eks==4.3.0` in constraints.txt ships): nodejs/eks/cluster/cluster.ts (createCore, createCluster),
nodejs/eks/nodes/nodegroup.ts (createNodeGroup, createNodeGroupV2, createManagedNodeGroup,
createMNGCustomLaunchTemplate), nodejs/eks/nodes/securitygroup.ts (createNodeGroupSecurityGroup),
nodejs/eks/servicerole.ts (ServiceRole) and nodejs/eks/addons/cni-addon.ts (VpcCniAddon).

Names, types, parents and the literal inputs (descriptions, ports, policy ARNs, defaults such as t3.medium and
2/1/2 nodes) are the TypeScript's; values the provider reads from other resources or from data sources it calls
(the recommended AMI, the worker subnets it computes from route tables) are unknown, as they are in a preview
before those resources exist.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Provenance, Unmodelled, known, merged_tags, only_inputs_of

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


def _invoke_value(ctx: Context, token: str, args: dict[str, Any], key: str) -> Any:
    try:
        value = ctx.invoke(token, args).get(key)
    except Exception:  # an offline answer that fails is the same as none: the value stays unknown
        return UNKNOWN
    return value if value not in (None, "", []) else UNKNOWN


def cluster(ctx: Context) -> None:
    """cluster.ts createCore + createCluster."""
    name = ctx.name
    a = ctx.inputs
    tags = a.get("tags")
    if a.get("autoMode") and (a.get("autoMode") or {}).get("enabled"):
        raise Unmodelled("EKS Auto Mode (autoMode.enabled) is not modelled")
    vpc_id = a.get("vpcId")
    subnet_ids: Any = a.get("subnetIds")
    if vpc_id is None:
        # createCore: without a VPC the provider looks up the default VPC and its subnets.
        vpc_id = _invoke_value(ctx, "aws:ec2/getVpc:getVpc", {"default": True}, "id")
        if subnet_ids is None:
            subnet_ids = _invoke_value(
                ctx, "aws:ec2/getSubnets:getSubnets", {"filters": [{"name": "vpc-id", "values": [vpc_id]}]}, "ids"
            )
    if subnet_ids is None and (a.get("publicSubnetIds") is not None or a.get("privateSubnetIds") is not None):
        subnet_ids = [*(a.get("publicSubnetIds") or []), *(a.get("privateSubnetIds") or [])]
    if subnet_ids is None:
        subnet_ids = []

    role_arn: Any = UNKNOWN
    if a.get("serviceRole") is None:
        service_role(
            ctx,
            f"{name}-eksRole",
            "eks.amazonaws.com",
            ["AmazonEKSClusterPolicy"],
            tags,
            description="Allows EKS to manage clusters on your behalf.",
            actions=["sts:AssumeRole", "sts:TagSession"],
        )

    cluster_sg_id: Any = UNKNOWN
    skip_sgs = bool(a.get("skipDefaultSecurityGroups"))
    created_cluster_sg = False
    if a.get("clusterSecurityGroup") is None and not skip_sgs:
        ctx.add(
            "aws:ec2/securityGroup:SecurityGroup",
            f"{name}-eksClusterSecurityGroup",
            {
                "vpcId": vpc_id,
                "revokeRulesOnDelete": True,
                "tags": merged_tags(
                    {"Name": f"{name}-eksClusterSecurityGroup"}, a.get("clusterSecurityGroupTags"), tags
                ),
            },
        )
        created_cluster_sg = True
        ctx.add(
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            f"{name}-eksClusterInternetEgressRule",
            {
                "description": "Allow internet access.",
                "type": "egress",
                "fromPort": 0,
                "toPort": 0,
                "protocol": "-1",
                "cidrBlocks": ["0.0.0.0/0"],
                "securityGroupId": UNKNOWN,
            },
        )

    encryption = None
    if a.get("encryptionConfigKeyArn") is not None:
        encryption = {"provider": {"keyArn": a["encryptionConfigKeyArn"]}, "resources": ["secrets"]}
    network = None
    if a.get("kubernetesServiceIpAddressRange") is not None or a.get("ipFamily") is not None:
        family = a.get("ipFamily") or "ipv4"
        network = {
            "serviceIpv4Cidr": a.get("kubernetesServiceIpAddressRange") if family == "ipv4" else None,
            "ipFamily": family,
        }
        network = {k: v for k, v in network.items() if v is not None}
    auth_mode = a.get("authenticationMode")
    vpc_config = {
        "securityGroupIds": [UNKNOWN] if created_cluster_sg else None,
        "subnetIds": subnet_ids,
        "endpointPrivateAccess": a.get("endpointPrivateAccess"),
        "endpointPublicAccess": a.get("endpointPublicAccess"),
        "publicAccessCidrs": a.get("publicAccessCidrs"),
    }
    eks_cluster = ctx.add(
        "aws:eks/cluster:Cluster",
        f"{name}-eksCluster",
        {
            "name": a.get("name"),
            "roleArn": role_arn,
            "kubernetesNetworkConfig": network,
            "bootstrapSelfManagedAddons": a.get("bootstrapSelfManagedAddons", True),
            "vpcConfig": {k: v for k, v in vpc_config.items() if v is not None},
            "version": a.get("version"),
            "enabledClusterLogTypes": a.get("enabledClusterLogTypes"),
            "tags": merged_tags({"Name": f"{name}-eksCluster"}, a.get("clusterTags"), tags),
            "encryptionConfig": encryption,
            "accessConfig": {"authenticationMode": auth_mode, "bootstrapClusterCreatorAdminPermissions": True}
            if auth_mode
            else None,
            "upgradePolicy": a.get("upgradePolicy"),
            "deletionProtection": a.get("deletionProtection"),
        },
    )
    cluster_name = eks_cluster.get("name")
    cluster_version = a.get("version", UNKNOWN)

    kube_proxy = a.get("kubeProxyAddonOptions") or {}
    if kube_proxy.get("enabled", True):
        _addon(ctx, f"{name}-kube-proxy", "kube-proxy", cluster_name, kube_proxy, tags)

    # The provider's own Kubernetes provider for the cluster; its kubeconfig needs the endpoint, unknown here.
    k8s = ctx.add(
        "pulumi:providers:kubernetes",
        f"{name}-eks-k8s",
        {"kubeconfig": UNKNOWN, "enableConfigMapMutable": a.get("enableConfigMapMutable")},
    )
    k8s_ref = f"{k8s.urn}::{UNKNOWN}"

    skip_default = bool(a.get("skipDefaultNodeGroup") or a.get("fargate"))
    instance_profile: Handle | None = None
    instance_roles: list[Any] = []
    default_role: Any = None
    if a.get("instanceRoles") is not None:
        instance_roles = list(a.get("instanceRoles") or [])
    elif a.get("instanceRole") is not None:
        instance_roles = [a["instanceRole"]]
        default_role = a["instanceRole"]
        if not skip_default:
            instance_profile = _instance_profile(ctx, name, a.get("instanceProfileName"))
    elif a.get("createInstanceRole") or (not a.get("skipDefaultNodeGroup") and a.get("createInstanceRole") is None):
        role = service_role(
            ctx,
            f"{name}-instanceRole",
            "ec2.amazonaws.com",
            ["AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"],
            tags,
        )
        instance_roles = [role.urn]
        default_role = role.urn
        if a.get("customInstanceRolePolicy") is not None:
            ctx.add(
                "aws:iam/rolePolicy:RolePolicy",
                f"{name}-EKSWorkerCustomPolicy",
                {"role": UNKNOWN, "policy": a["customInstanceRolePolicy"]},
            )
        instance_profile = _instance_profile(ctx, name, a.get("instanceProfileName"))

    node_access: Handle | None = None
    if not auth_mode or auth_mode in ("CONFIG_MAP", "API_AND_CONFIG_MAP"):
        node_access = ctx.add(
            "kubernetes:core/v1:ConfigMap",
            f"{name}-nodeAccess",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "immutable": False,
                "metadata": {
                    "name": "aws-auth",
                    "namespace": "kube-system",
                    "annotations": {"pulumi.com/patchForce": "true"},
                },
                "data": {"mapRoles": UNKNOWN},
            },
            provider=k8s_ref,
        )
    if auth_mode in ("API", "API_AND_CONFIG_MAP"):
        entries = dict(a.get("accessEntries") or {})
        if default_role is not None:
            _access_entry(
                ctx, name, "defaultNodeGroupInstanceRole", {"principalArn": UNKNOWN, "type": "EC2_LINUX"}, cluster_name
            )
        for key, entry in entries.items():
            _access_entry(ctx, name, key, entry if isinstance(entry, dict) else {}, cluster_name)

    storage = a.get("storageClasses")
    if isinstance(storage, str):
        storage = {storage: {"type": storage, "default": True}}
    for key, sc in (storage or {}).items():
        sc = sc if isinstance(sc, dict) else {}
        ctx.add(
            "kubernetes:storage.k8s.io/v1:StorageClass",
            f"{name.lower()}-{key}",
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "provisioner": "kubernetes.io/aws-ebs",
                "parameters": {"type": sc.get("type", key), **({"encrypted": "true"} if sc.get("encrypted") else {})},
                "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}
                if sc.get("default")
                else {},
            },
            provider=k8s_ref,
        )

    use_default_cni = a.get("useDefaultVpcCni")
    if not use_default_cni:
        cni = ctx.add(
            VPC_CNI_ADDON,
            f"{name}-vpc-cni",
            {
                **(a.get("vpcCniOptions") or {}),
                "clusterName": cluster_name,
                "clusterVersion": cluster_version,
                "tags": tags,
            },
            custom=False,
        )
        options = a.get("vpcCniOptions") or {}
        _addon(ctx, f"{name}-vpc-cni", "vpc-cni", cluster_name, options, tags, parent=cni, preserve=True)

    fargate = a.get("fargate")
    if fargate:
        spec = fargate if isinstance(fargate, dict) else {}
        if spec.get("podExecutionRoleArn") is None:
            service_role(
                ctx,
                f"{name}-podExecutionRole",
                "eks-fargate-pods.amazonaws.com",
                ["AmazonEKSFargatePodExecutionRolePolicy"],
                tags,
            )
        profile = (
            f"{name.replace('-', '_', 1)}fargateProfile"
            if name == "eks" or name.lower().startswith("eks-")
            else f"{name}-fargateProfile"
        )
        ctx.add(
            "aws:eks/fargateProfile:FargateProfile",
            profile,
            {
                "clusterName": cluster_name,
                "podExecutionRoleArn": spec.get("podExecutionRoleArn", UNKNOWN),
                "selectors": spec.get("selectors") or [{"namespace": "default"}, {"namespace": "kube-system"}],
                "subnetIds": UNKNOWN,
            },
        )

    coredns = a.get("corednsAddonOptions") or {}
    explicitly = coredns.get("enabled") is True or coredns.get("configurationValues") is not None
    if explicitly or ((fargate or not a.get("skipDefaultNodeGroup")) and coredns.get("enabled", True)):
        values = coredns.get("configurationValues")
        if fargate:
            values = {"computeType": "Fargate", **(values or {})}
        _addon(ctx, f"{name}-coredns", "coredns", cluster_name, {**coredns, "configurationValues": values}, tags)

    if a.get("createOidcProvider"):
        ctx.add(
            "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
            f"{name}-oidcProvider",
            {"clientIdLists": ["sts.amazonaws.com"], "url": UNKNOWN, "thumbprintLists": [UNKNOWN]},
        )

    node_sg: Handle | None = None
    if not skip_sgs:
        node_sg, _ = node_security_group(
            ctx, name, vpc_id, cluster_sg_id, cluster_name, merged_tags(a.get("nodeSecurityGroupTags"), tags)
        )

    options = a.get("nodeGroupOptions") or {
        "nodeSubnetIds": a.get("nodeSubnetIds"),
        "nodeAssociatePublicIpAddress": a.get("nodeAssociatePublicIpAddress"),
        "instanceType": a.get("instanceType"),
        "nodePublicKey": a.get("nodePublicKey"),
        "nodeRootVolumeEncrypted": a.get("nodeRootVolumeEncrypted"),
        "nodeRootVolumeSize": a.get("nodeRootVolumeSize"),
        "nodeUserData": a.get("nodeUserData"),
        "minSize": a.get("minSize"),
        "maxSize": a.get("maxSize"),
        "desiredCapacity": a.get("desiredCapacity"),
        "amiId": a.get("nodeAmiId"),
        "gpu": a.get("gpu"),
        "version": a.get("version"),
    }
    options = {k: v for k, v in options.items() if v is not None}
    facts = {
        "clusterName": cluster_name,
        "vpcId": vpc_id,
        "subnetIds": a.get("subnetIds"),
        "privateSubnetIds": a.get("privateSubnetIds"),
        "publicSubnetIds": a.get("publicSubnetIds"),
        "allSubnetIds": subnet_ids,
        "instanceRoles": instance_roles,
        "authenticationMode": auth_mode,
        "tags": tags,
        "nodeSecurityGroupTags": a.get("nodeSecurityGroupTags"),
        "hasNodeSecurityGroup": node_sg is not None,
        "hasInstanceProfile": instance_profile is not None,
        "version": cluster_version,
        "eksNodeAccess": node_access.urn if node_access else None,
        "eksClusterUrn": eks_cluster.urn,
    }
    ctx.facts[ctx.urn] = facts
    if not skip_default:
        _self_managed_v2(ctx, name, options, facts, have_sg=node_sg is not None)


def _instance_profile(ctx: Context, name: str, profile_name: Any) -> Handle | None:
    if profile_name is not None:
        return None  # InstanceProfile.get: a read, not a resource this stack creates
    return ctx.add("aws:iam/instanceProfile:InstanceProfile", f"{name}-instanceProfile", {"role": UNKNOWN})


def _addon(
    ctx: Context,
    name: str,
    addon: str,
    cluster_name: Any,
    options: dict[str, Any],
    tags: Any,
    parent: Handle | None = None,
    preserve: bool = True,
) -> Handle:
    values = options.get("configurationValues")
    return ctx.add(
        "aws:eks/addon:Addon",
        name,
        {
            "clusterName": cluster_name,
            "addonName": addon,
            "preserve": preserve,
            "tags": tags,
            "resolveConflictsOnCreate": options.get("resolveConflictsOnCreate", "OVERWRITE"),
            "resolveConflictsOnUpdate": options.get("resolveConflictsOnUpdate", "OVERWRITE"),
            # getAddonVersion(mostRecent) for the cluster's version: a data source answer, unknown offline.
            "addonVersion": options.get("version", options.get("addonVersion", UNKNOWN)),
            "configurationValues": json.dumps(values) if isinstance(values, dict) else values,
            "serviceAccountRoleArn": options.get("serviceAccountRoleArn"),
        },
        parent=parent,
    )


def _access_entry(ctx: Context, component: str, key: str, entry: dict[str, Any], cluster_name: Any) -> None:
    """authenticationMode.ts createAccessEntries."""
    inputs = only_inputs_of(
        "aws:eks/accessEntry:AccessEntry",
        {**entry, "clusterName": cluster_name, "userName": entry.get("username")},
    )
    handle = ctx.add("aws:eks/accessEntry:AccessEntry", f"{component}-{key}", inputs)
    for assoc, policy in (entry.get("accessPolicies") or {}).items():
        policy = policy if isinstance(policy, dict) else {}
        ctx.add(
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
            f"{component}-{key}-{assoc}",
            {
                "accessScope": policy.get("accessScope"),
                "principalArn": entry.get("principalArn"),
                "policyArn": policy.get("policyArn"),
                "clusterName": cluster_name,
            },
            parent=handle,
            depends=[handle],
        )


def _cluster_facts(ctx: Context) -> dict[str, Any]:
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


def _worker_subnets(options: dict[str, Any], facts: dict[str, Any]) -> Any:
    if options.get("nodeSubnetIds") is not None:
        return options["nodeSubnetIds"]
    for key in ("privateSubnetIds", "publicSubnetIds"):
        if facts.get(key) is not None:
            return facts[key]
    # computeWorkerSubnets: the provider reads each subnet's route table to pick private ones; unknown offline.
    return UNKNOWN


def _self_managed_v2(ctx: Context, name: str, o: dict[str, Any], facts: dict[str, Any], have_sg: bool) -> None:
    """nodegroup.ts createNodeGroupV2: a launch template and an autoscaling group (named like the component)."""
    if o.get("nodeSecurityGroup") is None and o.get("nodeSecurityGroupId") is None and not have_sg:
        node_security_group(
            ctx,
            name,
            facts.get("vpcId", UNKNOWN),
            UNKNOWN,
            facts.get("clusterName", UNKNOWN),
            merged_tags(facts.get("nodeSecurityGroupTags"), facts.get("tags")),
        )
    key_name = o.get("keyName")
    if o.get("nodePublicKey") is not None:
        ctx.add("aws:ec2/keyPair:KeyPair", f"{name}-keyPair", {"publicKey": o["nodePublicKey"]})
        key_name = UNKNOWN
    market = None
    if o.get("spotPrice") is not None:
        market = {"marketType": "spot", "spotOptions": {"maxPrice": o["spotPrice"]}}
    public_ip = o.get("nodeAssociatePublicIpAddress", True)
    monitoring = o.get("enableDetailedMonitoring")
    lt = ctx.add(
        "aws:ec2/launchTemplate:LaunchTemplate",
        f"{name}-launchTemplate",
        {
            "imageId": o.get("amiId", UNKNOWN),
            "instanceType": o.get("instanceType") or DEFAULT_INSTANCE_TYPE,
            "iamInstanceProfile": {"name": o.get("instanceProfileName", UNKNOWN)},
            "keyName": key_name,
            "instanceMarketOptions": market,
            "blockDeviceMappings": UNKNOWN,
            "networkInterfaces": [
                {"associatePublicIpAddress": str(bool(public_ip)).lower(), "securityGroups": UNKNOWN}
            ],
            "metadataOptions": o.get("metadataOptions"),
            "userData": UNKNOWN,
            "tagSpecifications": o.get("launchTemplateTagSpecifications"),
            "monitoring": None if monitoring is None else {"enabled": monitoring},
        },
    )
    ctx.add(
        "aws:autoscaling/group:Group",
        name,
        {
            "minSize": o.get("minSize", 1),
            "maxSize": o.get("maxSize", 2),
            "desiredCapacity": o.get("desiredCapacity", 2),
            "launchTemplate": {"name": lt.get("name"), "version": UNKNOWN},
            "vpcZoneIdentifiers": _worker_subnets(o, facts),
            "instanceRefresh": {
                "strategy": "Rolling",
                "preferences": {"minHealthyPercentage": o.get("minRefreshPercentage", 50)},
            },
            "tags": UNKNOWN,
            "defaultInstanceWarmup": o.get("defaultInstanceWarmup"),
        },
    )


def node_group_v2(ctx: Context) -> None:
    facts = _cluster_facts(ctx)
    _self_managed_v2(ctx, ctx.name, ctx.inputs, facts, have_sg=False)


def node_group(ctx: Context) -> None:
    """nodegroup.ts createNodeGroup (v1): a launch configuration and a CloudFormation stack holding the ASG."""
    name, o = ctx.name, ctx.inputs
    facts = _cluster_facts(ctx)
    if o.get("nodeSecurityGroup") is None and o.get("nodeSecurityGroupId") is None:
        node_security_group(
            ctx,
            name,
            facts.get("vpcId", UNKNOWN),
            UNKNOWN,
            facts.get("clusterName", UNKNOWN),
            merged_tags(facts.get("nodeSecurityGroupTags"), facts.get("tags")),
        )
    key_name = o.get("keyName")
    if o.get("nodePublicKey") is not None:
        ctx.add("aws:ec2/keyPair:KeyPair", f"{name}-keyPair", {"publicKey": o["nodePublicKey"]})
        key_name = UNKNOWN
    ctx.add(RANDOM_SUFFIX, f"{name}-cfnStackName", {"input": name})
    ctx.add(
        "aws:ec2/launchConfiguration:LaunchConfiguration",
        f"{name}-nodeLaunchConfiguration",
        {
            "associatePublicIpAddress": o.get("nodeAssociatePublicIpAddress", True),
            "imageId": o.get("amiId", UNKNOWN),
            "instanceType": o.get("instanceType") or DEFAULT_INSTANCE_TYPE,
            "iamInstanceProfile": o.get("instanceProfileName", UNKNOWN),
            "keyName": key_name,
            "securityGroups": UNKNOWN,
            "spotPrice": o.get("spotPrice"),
            "rootBlockDevice": UNKNOWN,
            "userData": o.get("nodeUserDataOverride", UNKNOWN),
            "enableMonitoring": o.get("enableDetailedMonitoring"),
        },
    )
    ctx.add(
        "aws:cloudformation/stack:Stack",
        f"{name}-nodes",
        {
            "name": UNKNOWN,
            "templateBody": UNKNOWN,
            "tags": merged_tags({"Name": f"{name}-nodes"}, o.get("cloudFormationTags"), facts.get("tags")),
        },
    )


def managed_node_group(ctx: Context) -> None:
    """nodegroup.ts createManagedNodeGroup (and createMNGCustomLaunchTemplate when the options need one)."""
    name, o = ctx.name, ctx.inputs
    facts = _cluster_facts(ctx)
    if o.get("nodeRoleArn") is not None:
        role_arn = o["nodeRoleArn"]
    elif o.get("nodeRole") is not None:
        role_arn = UNKNOWN
    else:
        raise Unmodelled("the provider refuses a ManagedNodeGroup without nodeRole or nodeRoleArn")
    subnet_ids = o.get("subnetIds")
    if subnet_ids is None:
        for key in ("subnetIds", "privateSubnetIds", "publicSubnetIds"):
            if facts.get(key) is not None:
                subnet_ids = facts[key]
                break
        else:
            subnet_ids = UNKNOWN if not facts else []
    placement: Handle | None = None
    if o.get("enableEfaSupport") is True:
        placement = ctx.add(
            "aws:ec2/placementGroup:PlacementGroup", name, {"strategy": "cluster", "tags": o.get("tags")}
        )
        subnet_ids = UNKNOWN  # filterEfaSubnets: the provider keeps subnets of the placement AZ (a lookup)
    custom_keys = (
        "bootstrapExtraArgs",
        "kubeletExtraArgs",
        "bottlerocketSettings",
        "nodeadmExtraOptions",
        "enableIMDSv2",
        "userData",
        "amiId",
        "enableEfaSupport",
    )
    user_data_keys = custom_keys[:4]
    launch_template = o.get("launchTemplate")
    args = dict(o)
    args.pop("cluster", None)
    if any(o.get(k) is not None for k in custom_keys):
        needs_user_data = any(o.get(k) is not None for k in (*user_data_keys, "userData", "amiId"))
        imds = o.get("enableIMDSv2")
        lt = ctx.add(
            "aws:ec2/launchTemplate:LaunchTemplate",
            f"{name}-launchTemplate",
            {
                "blockDeviceMappings": [{"deviceName": UNKNOWN, "ebs": {"volumeSize": o["diskSize"]}}]
                if o.get("diskSize") is not None
                else None,
                "userData": UNKNOWN if needs_user_data else None,
                "metadataOptions": {
                    "httpTokens": "required" if imds else "optional",
                    "httpPutResponseHopLimit": 2,
                    "httpEndpoint": "enabled",
                }
                if imds is not None
                else None,
                "imageId": o.get("amiId", UNKNOWN) if needs_user_data else None,
                "placement": {"groupName": placement.get("name")} if placement is not None else None,
                "networkInterfaces": UNKNOWN if o.get("enableEfaSupport") else None,
            },
        )
        launch_template = {"id": UNKNOWN, "version": UNKNOWN}
        del lt
        args.pop("diskSize", None)
    ami_type = o.get("amiType")
    if any(o.get(k) is not None for k in (*user_data_keys, "userData", "amiId")):
        for key in ("version", "releaseVersion", "amiType"):
            args.pop(key, None)
        ami_type = None
    elif ami_type is None and o.get("operatingSystem") is not None:
        ami_type = _ami_type(str(o["operatingSystem"]), bool(o.get("gpu")), o.get("instanceTypes"))
    if args.get("version") is None and launch_template is None and o.get("launchTemplate") is None:
        args["version"] = facts.get("version", UNKNOWN)
    scaling = o.get("scalingConfig") or {}
    inputs = only_inputs_of("aws:eks/nodeGroup:NodeGroup", args)
    inputs.update(
        {
            "amiType": ami_type,
            "clusterName": o.get("clusterName") or facts.get("clusterName", UNKNOWN),
            "nodeRoleArn": role_arn,
            "scalingConfig": {
                "desiredSize": scaling.get("desiredSize", 2),
                "minSize": scaling.get("minSize", 1),
                "maxSize": scaling.get("maxSize", 2),
            },
            "subnetIds": subnet_ids,
            "launchTemplate": launch_template,
        }
    )
    deps = []
    if facts.get("eksNodeAccess"):
        deps = [Handle(facts["eksNodeAccess"], "kubernetes:core/v1:ConfigMap", "", {})]
    ctx.add("aws:eks/nodeGroup:NodeGroup", name, inputs, depends=deps)


_EC2_TYPE = re.compile(r"([a-z]+)([0-9]+)([a-z])?\-?([a-z]+)?\.([a-zA-Z0-9\-]+)")
_AMI_TYPES = {
    "AL2": ("AL2_x86_64_GPU", "AL2_ARM_64", "AL2_x86_64"),
    "AL2023": ("AL2023_x86_64_NVIDIA", "AL2023_ARM_64_STANDARD", "AL2023_x86_64_STANDARD"),
    "Bottlerocket": ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64", "BOTTLEROCKET_x86_64"),
}


def _ami_type(os_name: str, gpu: bool, instance_types: Any) -> Any:
    """nodegroup.ts determineAmiType: the AMI family for an operating system, GPU and CPU architecture."""
    if not isinstance(instance_types, list) or not all(isinstance(t, str) for t in instance_types):
        return (
            UNKNOWN if instance_types is not None else _AMI_TYPES.get(os_name, ("", "", UNKNOWN))[2 if not gpu else 0]
        )
    # isGravitonInstance: the processor letter after the generation digit is "g" (m7g, c6gn).
    arm = any((m := _EC2_TYPE.match(t)) is not None and m.group(3) == "g" for t in instance_types)
    row = _AMI_TYPES.get(os_name)
    if row is None:
        return UNKNOWN
    return row[0] if gpu else row[1] if arm else row[2]


def node_group_security_group(ctx: Context) -> None:
    a = ctx.inputs
    eks_cluster = a.get("eksCluster")
    cluster_name: Any = UNKNOWN
    for facts in ctx.facts.values():
        if eks_cluster is not None and facts.get("eksClusterUrn") == eks_cluster:
            cluster_name = facts.get("clusterName", UNKNOWN)
    node_security_group(
        ctx,
        ctx.name,
        a.get("vpcId", UNKNOWN),
        a.get("clusterSecurityGroupId", UNKNOWN),
        cluster_name,
        a.get("tags") or {},
    )


def addon(ctx: Context) -> None:
    """addons/addon.ts: one aws:eks Addon named like the component, on the cluster it is given."""
    a = dict(ctx.inputs)
    facts = _cluster_facts(ctx)
    values = a.get("configurationValues")
    inputs = only_inputs_of("aws:eks/addon:Addon", {k: v for k, v in a.items() if k != "cluster"})
    inputs.update(
        {
            "clusterName": facts.get("clusterName", UNKNOWN),
            "configurationValues": json.dumps(values) if isinstance(values, dict) else values,
        }
    )
    ctx.add("aws:eks/addon:Addon", ctx.name, inputs)


MODELS = {
    "eks:index:Addon": (addon, PROVENANCE),
    CLUSTER: (cluster, PROVENANCE),
    MANAGED_NODE_GROUP: (managed_node_group, PROVENANCE),
    NODE_GROUP_V2: (node_group_v2, PROVENANCE),
    NODE_GROUP: (node_group, PROVENANCE),
    NODE_GROUP_SECURITY_GROUP: (node_group_security_group, PROVENANCE),
}
