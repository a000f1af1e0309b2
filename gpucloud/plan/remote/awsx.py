"""awsx components as the provider constructs them, from pulumi/pulumi-awsx v3.8.0 (the version `pulumi-awsx==3.8.0`
in constraints.txt ships): awsx/ec2/vpc.ts (Vpc.initialize, createInnerVpc, shouldCreateNatGateway,
compareSubnetSpecs), awsx/ec2/subnetDistributorLegacy.ts (getSubnetSpecsLegacy, the default layout),
awsx/ec2/subnetDistributorNew.ts (getSubnetSpecs, "Auto") and awsx/ec2/subnetNaming.ts (subnet resource names);
lb/applicationLoadBalancer.ts, ecs/fargateService.ts, ecs/fargateTaskDefinition.ts, role.ts,
cloudwatch/logGroup.ts, ecr/repository.ts and ecr/image.ts.

`awsx:ec2:Vpc` is modelled for `subnetStrategy` "Legacy" (what awsx 3 uses when none is given) and "Auto";
"Exact"/"AutoMerge", explicit subnet cidrBlocks/sizes and IPAM-allocated VPCs are opaque with that reason.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Provenance, Unmodelled, only_inputs_of

PROVENANCE = Provenance(
    "pulumi/pulumi-awsx",
    "v3.8.0",
    (
        "awsx/ec2/vpc.ts",
        "awsx/ec2/subnetDistributorLegacy.ts",
        "awsx/ec2/subnetDistributorNew.ts",
        "awsx/ec2/subnetNaming.ts",
    ),
)
LB_PROVENANCE = Provenance("pulumi/pulumi-awsx", "v3.8.0", ("awsx/lb/applicationLoadBalancer.ts",))
ECS_PROVENANCE = Provenance(
    "pulumi/pulumi-awsx",
    "v3.8.0",
    ("awsx/ecs/fargateService.ts", "awsx/ecs/fargateTaskDefinition.ts", "awsx/role.ts", "awsx/cloudwatch/logGroup.ts"),
)
ECR_PROVENANCE = Provenance("pulumi/pulumi-awsx", "v3.8.0", ("awsx/ecr/repository.ts", "awsx/ecr/image.ts"))

VPC = "awsx:ec2:Vpc"
DEFAULT_CIDR = "10.0.0.0/16"
DEFAULT_AZ_COUNT = 3


def _cidr_subnet(cidr: str, new_bits: int, net_num: int) -> str:
    """subnetDistributorLegacy.ts cidrSubnetV4: block `net_num` of size /mask+new_bits counted from the range's
    own address (not its network address, as the TypeScript does)."""
    iface = ipaddress.IPv4Interface(cidr)
    mask = iface.network.prefixlen + new_bits
    if mask > 32:
        raise Unmodelled(f"subnet of {cidr} with {new_bits} more bits does not fit")
    address = int(iface.ip) + (2 ** (32 - mask)) * net_num
    return f"{ipaddress.IPv4Address(address)}/{mask}"


def _next_pow2(n: int) -> int:
    return 1 if n <= 0 else 2 ** math.ceil(math.log2(n))


def _block(cidr: str) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(cidr, strict=False)


def _overlaps(a: str, b: str) -> bool:
    return _block(a).overlaps(_block(b))


def _next_block(previous: str, mask: int) -> str:
    last = int(_block(previous).broadcast_address)
    widened = ipaddress.IPv4Network(f"{ipaddress.IPv4Address(last)}/{mask}", strict=False)
    return f"{ipaddress.IPv4Address(int(widened.broadcast_address) + 1)}/{mask}"


def _subnet_name(vpc: str, spec: dict[str, Any], az_num: int) -> str:
    return f"{vpc}-{spec.get('name') or str(spec['type']).lower()}-{az_num}"


def legacy_subnet_specs(
    vpc: str, cidr: str, azs: list[str], specs: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """getSubnetSpecsLegacy: per AZ a base block, then private, public and isolated subnets carved from it."""
    new_bits_per_az = int(math.log2(_next_pow2(len(azs))))
    bases = [_cidr_subnet(cidr, new_bits_per_az, i) for i in range(len(azs))]
    out: list[dict[str, Any]] = []
    if specs is None:
        private = []
        for i, az in enumerate(azs):
            block = _cidr_subnet(bases[i], 1, 0)
            private.append(
                {
                    "azName": az,
                    "cidrBlock": block,
                    "type": "Private",
                    "resourceName": _subnet_name(vpc, {"type": "Private"}, i + 1),
                }
            )
        public = []
        for i, az in enumerate(azs):
            split = _cidr_subnet(private[i]["cidrBlock"], 0, 1)
            public.append(
                {
                    "azName": az,
                    "cidrBlock": _cidr_subnet(split, 1, 0),
                    "type": "Public",
                    "resourceName": _subnet_name(vpc, {"type": "Public"}, i + 1),
                }
            )
        return private + public
    base_mask = _block(bases[0]).prefixlen
    new_bits = 0 if len(specs) == 1 else 1
    defaults = {"private": 19, "public": 20, "isolated": 24}
    for i, az in enumerate(azs):
        # The address just below the AZ's block, as a /32: nothing overlaps it yet.
        current = f"{ipaddress.IPv4Address(int(ipaddress.IPv4Interface(bases[i]).ip) - 1)}/32"
        made: dict[str, list[dict[str, Any]]] = {"private": [], "public": [], "isolated": []}
        for kind in ("private", "public", "isolated"):
            earlier = made["private"] if kind == "public" else (made["public"] or made["private"])
            for j, spec in enumerate(s for s in specs if str(s.get("type", "")).lower() == kind):
                if kind == "private" or not earlier:
                    base_cidr, split = bases[i], bases[i]
                else:
                    base_cidr = earlier[-1]["cidrBlock"]
                    split = _cidr_subnet(base_cidr, 0, 1)
                given = spec.get("cidrMask")
                mask = int(given) if given is not None else max(base_mask + new_bits, defaults[kind])
                candidate = _cidr_subnet(split, mask - _block(base_cidr).prefixlen, j)
                if _overlaps(current, candidate):
                    candidate = _next_block(current, mask)
                made[kind].append(
                    {
                        "azName": az,
                        "cidrBlock": candidate,
                        "type": kind.capitalize(),
                        "resourceName": _subnet_name(vpc, spec, i + 1),
                        "tags": spec.get("tags"),
                    }
                )
                current = candidate
        out.extend(made["private"] + made["public"] + made["isolated"])
    return out


def _new_bits(count: int) -> int:
    return 0 if count == 0 else math.ceil(math.log2(count))


def auto_subnet_specs(vpc: str, cidr: str, azs: list[str], specs: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """subnetDistributorNew.ts getSubnetSpecs / allocateSubnetCidrBlocks (subnetStrategy "Auto"): one block per
    AZ, the subnets packed into it in the order given, each at the next free block of its size."""
    network = _block(cidr)
    az_mask = network.prefixlen + _new_bits(len(azs))
    if specs is None:
        if az_mask > 26:
            raise Unmodelled(f"the provider needs at least /26 per AZ for automatic subnets (got /{az_mask})")
        top = max(az_mask, 16)
        specs = [{"type": "Private", "cidrMask": top + 1}, {"type": "Public", "cidrMask": top + 2}]
    if not specs:
        raise Unmodelled("the provider refuses a Vpc with no subnets")
    default_mask = az_mask + _new_bits(len(specs))
    az_block = ipaddress.IPv4Network(f"{network.network_address}/{az_mask}")
    out = []
    for i, az in enumerate(azs):
        current: ipaddress.IPv4Network | None = None
        for spec in specs:
            mask = int(spec.get("cidrMask") or default_mask)
            if current is None:
                current = ipaddress.IPv4Network(f"{az_block.network_address}/{mask}")
            else:
                containing = ipaddress.IPv4Network(f"{current.broadcast_address}/{mask}", strict=False)
                current = ipaddress.IPv4Network(
                    f"{ipaddress.IPv4Address(int(containing.broadcast_address) + 1)}/{mask}"
                )
            out.append(
                {
                    "azName": az,
                    "cidrBlock": str(current),
                    "type": spec["type"],
                    "resourceName": _subnet_name(vpc, spec, i + 1),
                    "tags": spec.get("tags"),
                }
            )
        az_block = ipaddress.IPv4Network(f"{ipaddress.IPv4Address(int(az_block.broadcast_address) + 1)}/{az_mask}")
    return out


_ORDER = {"public": 0, "private": 1, "isolated": 2}


def vpc(ctx: Context) -> None:
    """vpc.ts Vpc.initialize."""
    name, a = ctx.name, ctx.inputs
    strategy = a.get("subnetStrategy") or "Legacy"
    if strategy not in ("Legacy", "Auto"):
        raise Unmodelled(f"awsx:ec2:Vpc subnetStrategy {strategy!r} is not modelled (only 'Legacy' and 'Auto')")
    if any(
        isinstance(x, dict) and (x.get("cidrBlocks") is not None or x.get("size") is not None)
        for x in a.get("subnetSpecs") or []
    ):
        raise Unmodelled("awsx:ec2:Vpc subnetSpecs with explicit cidrBlocks or size are not modelled")
    if a.get("ipv4IpamPoolId") is not None and a.get("cidrBlock") is None:
        raise Unmodelled("an IPAM-allocated awsx:ec2:Vpc (ipv4IpamPoolId without cidrBlock) is not modelled")
    if a.get("availabilityZoneNames") is not None and a.get("numberOfAvailabilityZones") is not None:
        raise Unmodelled("the provider refuses both availabilityZoneNames and numberOfAvailabilityZones")
    azs = a.get("availabilityZoneNames")
    if azs is None:
        count = int(a.get("numberOfAvailabilityZones") or DEFAULT_AZ_COUNT)
        args = {"region": a["region"]} if a.get("region") else {}
        names = ctx.invoke("aws:index/getAvailabilityZones:getAvailabilityZones", args).get("names") or []
        if len(names) < count:
            raise Unmodelled(
                f"the offline answer for the region's availability zones has {len(names)}, fewer than the {count} "
                "the Vpc asks for"
            )
        azs = list(names[:count])
    if not all(isinstance(z, str) for z in azs):
        raise Unmodelled("availabilityZoneNames are unknown at preview")
    cidr = a.get("cidrBlock") or DEFAULT_CIDR
    if not isinstance(cidr, str) or cidr == UNKNOWN:
        raise Unmodelled("the Vpc's cidrBlock is unknown at preview")
    specs_in = a.get("subnetSpecs")
    layout = legacy_subnet_specs if strategy == "Legacy" else auto_subnet_specs
    specs = layout(name, cidr, azs, list(specs_in) if specs_in is not None else None)
    shared_tags = {"Name": name, **(a.get("tags") or {})}
    region = a.get("region")
    nat = a.get("natGateways") or {}
    nat_strategy = str(nat.get("strategy") or "OnePerAz").lower()
    allocation_ids = list(nat.get("elasticIpAllocationIds") or [])

    vpc_inputs = only_inputs_of("aws:ec2/vpc:Vpc", a)
    vpc_inputs.update({"cidrBlock": cidr, "tags": shared_tags})
    the_vpc = ctx.add("aws:ec2/vpc:Vpc", name, vpc_inputs)
    igw = ctx.add(
        "aws:ec2/internetGateway:InternetGateway",
        name,
        {"region": region, "vpcId": UNKNOWN, "tags": shared_tags},
        parent=the_vpc,
        depends=[the_vpc],
    )
    del igw
    nat_count = 0
    for i, az in enumerate(azs):
        for spec in sorted((s for s in specs if s["azName"] == az), key=lambda s: _ORDER[s["type"].lower()]):
            kind = spec["type"].lower()
            rname = spec["resourceName"]
            subnet = ctx.add(
                "aws:ec2/subnet:Subnet",
                rname,
                {
                    "region": region,
                    "vpcId": UNKNOWN,
                    "availabilityZone": az,
                    "mapPublicIpOnLaunch": kind == "public",
                    "cidrBlock": spec["cidrBlock"],
                    "assignIpv6AddressOnCreation": False,
                    "tags": {**shared_tags, **(spec.get("tags") or {}), "Name": rname, "SubnetType": spec["type"]},
                },
                parent=the_vpc,
                depends=[the_vpc],
            )
            table = ctx.add(
                "aws:ec2/routeTable:RouteTable",
                rname,
                {
                    "region": region,
                    "vpcId": UNKNOWN,
                    "tags": {**shared_tags, "Name": rname, "SubnetType": spec["type"]},
                },
                parent=subnet,
                depends=[subnet],
            )
            ctx.add(
                "aws:ec2/routeTableAssociation:RouteTableAssociation",
                rname,
                {"region": region, "routeTableId": UNKNOWN, "subnetId": UNKNOWN},
                parent=table,
                depends=[table],
            )
            if kind == "public" and _should_create_nat(nat_strategy, nat_count, i):
                if not allocation_ids:
                    ctx.add(
                        "aws:ec2/eip:Eip",
                        f"{name}-{i + 1}",
                        {"region": region, "tags": {**(a.get("tags") or {}), "Name": f"{name}-{i + 1}"}},
                        parent=subnet,
                        depends=[subnet],
                    )
                ctx.add(
                    "aws:ec2/natGateway:NatGateway",
                    f"{name}-{i + 1}",
                    {
                        "region": region,
                        "subnetId": UNKNOWN,
                        "allocationId": allocation_ids[i] if allocation_ids else UNKNOWN,
                        "tags": {**(a.get("tags") or {}), "Name": f"{name}-{i + 1}"},
                    },
                    parent=subnet,
                    depends=[subnet],
                )
                nat_count += 1
            if kind == "public":
                _route(ctx, rname, region, table, {"gatewayId": UNKNOWN})
            elif kind == "private" and nat_strategy != "none":
                _route(ctx, rname, region, table, {"natGatewayId": UNKNOWN})
    for endpoint in a.get("vpcEndpointSpecs") or []:
        endpoint = dict(endpoint) if isinstance(endpoint, dict) else {}
        inputs = only_inputs_of("aws:ec2/vpcEndpoint:VpcEndpoint", endpoint)
        inputs.update(
            {
                "vpcId": UNKNOWN,
                "tags": {**shared_tags, **(endpoint.get("tags") or {})},
                "region": endpoint.get("region", region),
            }
        )
        ctx.add(
            "aws:ec2/vpcEndpoint:VpcEndpoint",
            str(endpoint.get("serviceName")),
            inputs,
            parent=the_vpc,
            depends=[the_vpc],
        )


def _route(ctx: Context, name: str, region: Any, table: Handle, target: dict[str, Any]) -> None:
    ctx.add(
        "aws:ec2/route:Route",
        name,
        {"region": region, "routeTableId": UNKNOWN, **target, "destinationCidrBlock": "0.0.0.0/0"},
        parent=table,
        depends=[table],
    )


def _should_create_nat(strategy: str, count: int, az_index: int) -> bool:
    if strategy == "none":
        return False
    if strategy == "single":
        return count < 1
    return count < az_index + 1


_OPEN_INGRESS = [
    {"fromPort": 0, "toPort": 0, "protocol": "-1", "cidrBlocks": ["0.0.0.0/0"], "ipv6CidrBlocks": ["::/0"]}
]
_OPEN_EGRESS = [
    {"fromPort": 0, "toPort": 65535, "protocol": "tcp", "cidrBlocks": ["0.0.0.0/0"], "ipv6CidrBlocks": ["::/0"]}
]


def _sha1(text: str) -> str:
    # awsx/utils.ts sha1hash: the first 8 hex digits.
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def application_load_balancer(ctx: Context) -> None:
    """applicationLoadBalancer.ts: a default security group, the load balancer, a target group and listeners."""
    name, a = ctx.name, ctx.inputs
    rest = {
        k: v
        for k, v in a.items()
        if k
        not in (
            "subnetIds",
            "subnets",
            "defaultTargetGroup",
            "defaultTargetGroupPort",
            "defaultSecurityGroup",
            "listener",
            "listeners",
        )
    }
    lb = only_inputs_of("aws:lb/loadBalancer:LoadBalancer", rest)
    if a.get("subnets") is not None:
        lb["subnets"] = [UNKNOWN for _ in a["subnets"]] if isinstance(a["subnets"], list) else UNKNOWN
    elif a.get("subnetIds") is not None:
        lb["subnets"] = a["subnetIds"]
    elif a.get("subnetMappings") is None:
        lb["subnets"] = UNKNOWN  # the default VPC's public subnets (getDefaultVpc)
    default_sg = a.get("defaultSecurityGroup") or {}
    if lb.get("securityGroups") is None and not default_sg.get("skip"):
        if default_sg.get("securityGroupId") is not None:
            lb["securityGroups"] = [default_sg["securityGroupId"]]
        else:
            sg_args = default_sg.get("args") or {"vpcId": UNKNOWN, "ingress": _OPEN_INGRESS, "egress": _OPEN_EGRESS}
            ctx.add("aws:ec2/securityGroup:SecurityGroup", name, sg_args)
            lb["securityGroups"] = [UNKNOWN]
    lb["loadBalancerType"] = "application"
    ctx.add("aws:lb/loadBalancer:LoadBalancer", name, lb)
    protocol = _default_protocol(a)
    target = {"vpcId": UNKNOWN, "targetType": "ip", **(protocol or {}), **(a.get("defaultTargetGroup") or {})}
    ctx.add("aws:lb/targetGroup:TargetGroup", name, target)
    actions = [{"type": "forward", "targetGroupArn": UNKNOWN}]
    listeners = a.get("listeners")
    if a.get("listener") is not None:
        listeners = [{**(protocol or {}), **a["listener"]}]
    elif listeners is not None:
        listeners = [{**(_listener_protocol(x) or {}), **x} for x in listeners]
    else:
        listeners = [dict(protocol or {})]
    for i, listener in enumerate(listeners):
        ctx.add(
            "aws:lb/listener:Listener",
            f"{name}-{i}",
            {"defaultActions": actions, **listener, "loadBalancerArn": UNKNOWN},
        )


def _default_protocol(a: dict[str, Any]) -> dict[str, Any] | None:
    listener = a.get("listener")
    if a.get("listeners") is not None:
        if len(a["listeners"]) == 1:
            return None
        listener = a["listeners"][0]
    return _listener_protocol(listener, a.get("defaultTargetGroupPort"))


def _listener_protocol(listener: dict[str, Any] | None, default_port: Any = None) -> dict[str, Any] | None:
    if listener:
        port, protocol = listener.get("port"), listener.get("protocol")
        if port and protocol:
            return {"port": port, "protocol": protocol}
        if port:
            return {"port": port, "protocol": "HTTPS" if port == 443 else "HTTP"}
        if protocol:
            return {"protocol": protocol, "port": 443 if protocol == "HTTPS" else 80}
    return {"port": default_port if default_port is not None else 80, "protocol": "HTTP"}


def _default_role(ctx: Context, name: str, given: dict[str, Any] | None, policies: list[str]) -> Any:
    """role.ts defaultRoleWithPolicies: an ecs-tasks role and one attachment per default policy."""
    given = given or {}
    if given.get("skip") is True:
        return None
    if given.get("roleArn") is not None:
        return given["roleArn"]
    assume = {"Version": "2012-10-17", "Statement": [
        {"Action": "sts:AssumeRole", "Principal": {"Service": "ecs-tasks.amazonaws.com"}, "Effect": "Allow", "Sid": ""}
    ]}  # fmt: skip
    args = {"assumeRolePolicy": assume, **(given.get("args") or {})}
    if not isinstance(args["assumeRolePolicy"], str):
        args["assumeRolePolicy"] = json.dumps(args["assumeRolePolicy"], separators=(",", ":"))
    ctx.add("aws:iam/role:Role", name, only_inputs_of("aws:iam/role:Role", args))
    for arn in args.get("policyArns", policies):
        ctx.add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            f"{name}-{_sha1(arn)}",
            {"role": UNKNOWN, "policyArn": arn},
        )
    return UNKNOWN


EXECUTION_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"


def fargate_task_definition(ctx: Context) -> None:
    """fargateTaskDefinition.ts: a log group, task and execution roles and the task definition."""
    name, a = ctx.name, ctx.inputs
    if (a.get("container") is None) == (a.get("containers") is None):
        raise Unmodelled("the provider needs exactly one of container or containers")
    log = a.get("logGroup") or {}
    if not log.get("skip") and log.get("existing") is None:
        ctx.add(
            "aws:cloudwatch/logGroup:LogGroup",
            name,
            only_inputs_of("aws:cloudwatch/logGroup:LogGroup", log.get("args") or {}),
        )
    task_role = _default_role(ctx, f"{name}-task", a.get("taskRole"), [])
    execution_role = _default_role(ctx, f"{name}-execution", a.get("executionRole"), [EXECUTION_POLICY])
    inputs = only_inputs_of("aws:ecs/taskDefinition:TaskDefinition", a)
    inputs.update(
        {
            "requiresCompatibilities": ["FARGATE"],
            "networkMode": "awsvpc",
            "taskRoleArn": task_role,
            "executionRoleArn": execution_role,
            # family is `<name>-<sha1(stack + container JSON)>` and cpu/memory are summed from the containers:
            # the JSON carries the log group's name, known only after `up`.
            "family": a.get("family", UNKNOWN),
            "cpu": a.get("cpu", UNKNOWN),
            "memory": a.get("memory", UNKNOWN),
            "containerDefinitions": UNKNOWN,
        }
    )
    ctx.add("aws:ecs/taskDefinition:TaskDefinition", name, inputs)


def fargate_service(ctx: Context) -> None:
    """fargateService.ts: the task definition (a FargateTaskDefinition component) and the ECS service."""
    name, a = ctx.name, ctx.inputs
    if a.get("taskDefinition") is not None and a.get("taskDefinitionArgs") is not None:
        raise Unmodelled("the provider refuses both taskDefinition and taskDefinitionArgs")
    task = a.get("taskDefinition")
    if a.get("taskDefinitionArgs") is not None:
        component = ctx.add("awsx:ecs:FargateTaskDefinition", name, {}, custom=False)
        sub = ctx.nested("awsx:ecs:FargateTaskDefinition", component, a["taskDefinitionArgs"])
        fargate_task_definition(sub)
        task = UNKNOWN
    if task is None:
        raise Unmodelled("the provider needs taskDefinition or taskDefinitionArgs")
    network = a.get("networkConfiguration")
    if network is None:
        ctx.add(
            "aws:ec2/securityGroup:SecurityGroup",
            f"{name}-sg",
            {"vpcId": UNKNOWN, "ingress": _OPEN_INGRESS, "egress": _OPEN_EGRESS},
        )
        network = {
            "subnets": UNKNOWN,
            "assignPublicIp": bool(a.get("assignPublicIp", False)),
            "securityGroups": [UNKNOWN],
        }
    strategies = a.get("capacityProviderStrategies") or a.get("useClusterDefaultCapacityProviderStrategy")
    inputs = {"desiredCount": 1, **only_inputs_of("aws:ecs/service:Service", a)}
    inputs.update(
        {
            "networkConfiguration": network,
            "cluster": a.get("cluster"),
            "launchType": None if strategies else "FARGATE",
            "loadBalancers": a.get("loadBalancers", UNKNOWN if a.get("taskDefinitionArgs") is not None else None),
            "waitForSteadyState": not a.get("continueBeforeSteadyState", False),
            "taskDefinition": task,
        }
    )
    ctx.add("aws:ecs/service:Service", name, inputs)


def ecr_repository(ctx: Context) -> None:
    """ecr/repository.ts: the repository (lower-cased name) and, unless skipped, a lifecycle policy."""
    name, a = ctx.name.lower(), ctx.inputs
    args = {k: v for k, v in a.items() if k != "lifecyclePolicy"}
    ctx.add("aws:ecr/repository:Repository", name, only_inputs_of("aws:ecr/repository:Repository", args))
    if not (a.get("lifecyclePolicy") or {}).get("skip"):
        policy = {"repository": UNKNOWN, "policy": UNKNOWN}
        if a.get("region") is not None:
            policy["region"] = a["region"]
        ctx.add("aws:ecr/lifecyclePolicy:LifecyclePolicy", name, policy)


def ecr_image(ctx: Context) -> None:
    """ecr/image.ts computeImageFromAsset: one docker-build Image, named by imageName or imageTag (without either the
    name is a hash of the build inputs' JSON, which the model does not reproduce)."""
    a = ctx.inputs
    image_name = a.get("imageName") or a.get("imageTag")
    if not isinstance(image_name, str) or image_name == UNKNOWN:
        raise Unmodelled(
            "an awsx:ecr:Image without a known imageName or imageTag is named by a hash of its build inputs"
        )
    ref = (
        f"{a.get('repositoryUrl', UNKNOWN)}:{image_name}" if a.get("repositoryUrl") not in (None, UNKNOWN) else UNKNOWN
    )
    ctx.add(
        "docker-build:index:Image",
        image_name,
        {
            "tags": [ref],
            "buildArgs": a.get("args"),
            "cacheFrom": [{"registry": {"ref": c}} for c in a.get("cacheFrom") or []] or [{"registry": {"ref": ref}}],
            "cacheTo": [{"inline": {}}],
            "context": {"location": a.get("context") or "."},
            "dockerfile": {"location": a.get("dockerfile")},
            "platforms": [a["platform"]] if a.get("platform") else [],
            "target": a.get("target"),
            "push": True,
            "registries": [UNKNOWN],
        },
    )


MODELS = {
    VPC: (vpc, PROVENANCE),
    "awsx:ecr:Image": (ecr_image, ECR_PROVENANCE),
    "awsx:lb:ApplicationLoadBalancer": (application_load_balancer, LB_PROVENANCE),
    "awsx:ecs:FargateService": (fargate_service, ECS_PROVENANCE),
    "awsx:ecs:FargateTaskDefinition": (fargate_task_definition, ECS_PROVENANCE),
    "awsx:ecr:Repository": (ecr_repository, ECR_PROVENANCE),
}
