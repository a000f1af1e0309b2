"""pulumi-eks node groups (nodejs/eks/nodes/nodegroup.ts at v4.3.0: createNodeGroup, createNodeGroupV2,
createManagedNodeGroup, createMNGCustomLaunchTemplate), the standalone NodeGroupSecurityGroup and Addon
components."""

from __future__ import annotations

import json
import re
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Unmodelled, merged_tags, only_inputs_of
from gpucloud.plan.remote.eks.common import DEFAULT_INSTANCE_TYPE, RANDOM_SUFFIX, cluster_facts, node_security_group


def _worker_subnets(options: dict[str, Any], facts: dict[str, Any]) -> Any:
    if options.get("nodeSubnetIds") is not None:
        return options["nodeSubnetIds"]
    for key in ("privateSubnetIds", "publicSubnetIds"):
        if facts.get(key) is not None:
            return facts[key]
    # computeWorkerSubnets: the provider reads each subnet's route table to pick private ones; unknown offline.
    return UNKNOWN


def self_managed_v2(ctx: Context, name: str, o: dict[str, Any], facts: dict[str, Any], have_sg: bool) -> None:
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
    facts = cluster_facts(ctx)
    self_managed_v2(ctx, ctx.name, ctx.inputs, facts, have_sg=False)


def node_group(ctx: Context) -> None:
    """nodegroup.ts createNodeGroup (v1): a launch configuration and a CloudFormation stack holding the ASG."""
    name, o = ctx.name, ctx.inputs
    facts = cluster_facts(ctx)
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
    facts = cluster_facts(ctx)
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
    facts = cluster_facts(ctx)
    values = a.get("configurationValues")
    inputs = only_inputs_of("aws:eks/addon:Addon", {k: v for k, v in a.items() if k != "cluster"})
    inputs.update(
        {
            "clusterName": facts.get("clusterName", UNKNOWN),
            "configurationValues": json.dumps(values) if isinstance(values, dict) else values,
        }
    )
    ctx.add("aws:eks/addon:Addon", ctx.name, inputs)
