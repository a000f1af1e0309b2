"""pulumi-eks `Cluster` (nodejs/eks/cluster/cluster.ts createCore + createCluster at v4.3.0), with its add-ons
(nodejs/eks/addons/cni-addon.ts) and access entries (nodejs/eks/cluster/authenticationMode.ts)."""

from __future__ import annotations

import json
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Unmodelled, merged_tags, only_inputs_of
from gpucloud.plan.remote.eks.common import VPC_CNI_ADDON, node_security_group, service_role
from gpucloud.plan.remote.eks.nodegroups import self_managed_v2


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
        self_managed_v2(ctx, name, options, facts, have_sg=node_sg is not None)


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
