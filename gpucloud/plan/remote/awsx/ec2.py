"""awsx `ec2.Vpc` and `ec2.DefaultVpc` (pulumi/pulumi-awsx v3.8.0): awsx/ec2/vpc.ts (Vpc.initialize,
createInnerVpc, shouldCreateNatGateway, compareSubnetSpecs), awsx/ec2/subnetDistributorLegacy.ts
(getSubnetSpecsLegacy, the default layout), awsx/ec2/subnetDistributorNew.ts (getSubnetSpecs, "Auto"),
awsx/ec2/subnetNaming.ts (subnet resource names) and awsx/ec2/defaultVpc.ts.

`awsx:ec2:Vpc` is modelled for `subnetStrategy` "Legacy" (what awsx 3 uses when none is given) and "Auto";
"Exact"/"AutoMerge", explicit subnet cidrBlocks/sizes and IPAM-allocated VPCs are opaque with that reason.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Handle, Unmodelled, only_inputs_of

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


def default_vpc(ctx: Context) -> None:
    """defaultVpc.ts: the component only reads the account's default VPC (getDefaultVpc, an invoke): its outputs
    are that VPC's and subnets' ids, and it registers no children."""
