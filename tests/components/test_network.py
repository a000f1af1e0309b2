"""GpuNetwork under recording mocks, and the network spec's layout rules through parse_platform."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.components.network import GpuNetwork, GpuNetworkConfig
from gpucloud.plan import Plan, ResourceRecord, run_callable
from gpucloud.spec import NetworkSpec, SpecError, parse_platform
from gpucloud.spec.network import carve_subnets

ROOT = Path(__file__).resolve().parents[2]
TAGS = {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud", "Env": "dev"}
AZS = ["us-east-1a", "us-east-1b", "us-east-1c"]
VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
NAT = "aws:ec2/natGateway:NatGateway"
EIP = "aws:ec2/eip:Eip"
IGW = "aws:ec2/internetGateway:InternetGateway"
ROUTE = "aws:ec2/route:Route"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
ROLE = "aws:iam/role:Role"
KEY = "aws:kms/key:Key"


def plan_network(name: str = "net", azs: list[str] | None = None, **network: Any) -> Plan:
    config = GpuNetworkConfig(
        region="us-east-1",
        tags=TAGS,
        availability_zones=azs or AZS,
        cluster_name="gpu-test",
        network=NetworkSpec.model_validate(network),
    )
    return run_callable(lambda: GpuNetwork(name, config), preview=True)


def only(plan: Plan, type_: str) -> ResourceRecord:
    found = plan.of_type(type_)
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def urn_of(plan: Plan, type_: str, name: str) -> str:
    return plan.find(type_, name).urn


def test_default_network_resources() -> None:
    plan = plan_network()
    counts = Counter(r.type for r in plan)
    assert counts == {
        "gpucloud:network:GpuNetwork": 1,
        VPC: 1,
        "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": 1,
        SUBNET: 6,
        IGW: 1,
        "aws:ec2/routeTable:RouteTable": 4,
        ROUTE: 4,
        "aws:ec2/routeTableAssociation:RouteTableAssociation": 6,
        EIP: 3,
        NAT: 3,
        KEY: 1,
        "aws:kms/alias:Alias": 1,
        LOG_GROUP: 1,
        ROLE: 1,
        "aws:iam/rolePolicy:RolePolicy": 1,
        FLOW_LOG: 1,
        ENDPOINT: 10,
        SG: 2,
        INGRESS: 2,
        EGRESS: 1,
    }
    vpc = only(plan, VPC)
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    assert vpc.inputs["enableDnsSupport"] is True and vpc.inputs["enableDnsHostnames"] is True


def test_subnets_carved_per_az_with_tags() -> None:
    plan = plan_network(vpcCidr="10.40.0.0/16")
    private = {r.get("availabilityZone"): r for r in plan.of_type(SUBNET) if "-private-" in r.name}
    public = {r.get("availabilityZone"): r for r in plan.of_type(SUBNET) if "-public-" in r.name}
    assert {az: r.get("cidrBlock") for az, r in private.items()} == {
        "us-east-1a": "10.40.0.0/19",
        "us-east-1b": "10.40.32.0/19",
        "us-east-1c": "10.40.64.0/19",
    }
    assert {az: r.get("cidrBlock") for az, r in public.items()} == {
        "us-east-1a": "10.40.96.0/24",
        "us-east-1b": "10.40.97.0/24",
        "us-east-1c": "10.40.98.0/24",
    }
    for r in [*private.values(), *public.values()]:
        assert r.get("mapPublicIpOnLaunch") is False
        assert r.get("tags")["kubernetes.io/cluster/gpu-test"] == "shared"
    for r in private.values():
        assert r.get("tags")["kubernetes.io/role/internal-elb"] == "1"
        assert r.get("tags")["karpenter.sh/discovery"] == "gpu-test"
        assert "kubernetes.io/role/elb" not in r.get("tags")
    for r in public.values():
        assert r.get("tags")["kubernetes.io/role/elb"] == "1"
        assert "karpenter.sh/discovery" not in r.get("tags")


@pytest.mark.parametrize(
    ("mode", "nats", "private_default_routes"), [("per-az", 3, 3), ("single", 1, 3), ("none", 0, 0)]
)
def test_nat_count_per_mode(mode: str, nats: int, private_default_routes: int) -> None:
    plan = plan_network(natGateways=mode)
    assert len(plan.of_type(NAT)) == nats
    assert len(plan.of_type(EIP)) == nats
    routes = [r for r in plan.of_type(ROUTE) if "private-default-route" in r.name]
    assert len(routes) == private_default_routes
    nat_urns = {r.urn for r in plan.of_type(NAT)}
    for route in routes:
        assert route.get("destinationCidrBlock") == "0.0.0.0/0"
        assert set(route.property_dependencies["natGatewayId"]) <= nat_urns
    if mode == "single":
        # Every AZ's route table goes through the one NAT in the first AZ.
        assert {tuple(r.property_dependencies["natGatewayId"]) for r in routes} == {
            (urn_of(plan, NAT, "net-nat-us-east-1a"),)
        }


def test_no_public_subnets_means_no_igw() -> None:
    plan = plan_network(createPublicSubnets=False, natGateways="none")
    assert plan.of_type(IGW) == []
    assert sorted(r.name for r in plan.of_type(SUBNET)) == [f"net-private-{az}" for az in AZS]
    assert plan.of_type(NAT) == []


def test_efa_security_group_self_rules_both_ways() -> None:
    plan = plan_network()
    efa_sg = urn_of(plan, SG, "net-efa-sg")
    rules = [r for r in plan.of_type(INGRESS, EGRESS) if efa_sg in r.property_dependencies.get("securityGroupId", [])]
    assert sorted((r.type, r.name) for r in rules) == [(EGRESS, "net-efa-self-out"), (INGRESS, "net-efa-self-in")]
    for rule in rules:
        assert rule.get("ipProtocol") == "-1"
        assert rule.property_dependencies["referencedSecurityGroupId"] == [efa_sg]
        assert "cidrIpv4" not in rule.inputs and "cidrIpv6" not in rule.inputs
        assert rule.get("description")


def test_default_security_group_has_no_rules() -> None:
    plan = plan_network()
    default = only(plan, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert default.get("ingress") == [] and default.get("egress") == []
    assert default.property_dependencies["vpcId"] == [only(plan, VPC).urn]


def test_interface_endpoints_on() -> None:
    plan = plan_network()
    interface = [r for r in plan.of_type(ENDPOINT) if r.get("vpcEndpointType") == "Interface"]
    assert sorted(r.get("serviceName") for r in interface) == sorted(
        f"com.amazonaws.us-east-1.{s}"
        for s in ("ecr.api", "ecr.dkr", "sts", "ec2", "ssm", "ssmmessages", "ec2messages", "logs", "eks-auth")
    )
    endpoint_sg = urn_of(plan, SG, "net-endpoints-sg")
    private_subnets = sorted(urn_of(plan, SUBNET, f"net-private-{az}") for az in AZS)
    for r in interface:
        assert r.get("privateDnsEnabled") is True
        assert r.property_dependencies["securityGroupIds"] == [endpoint_sg]
        assert sorted(r.property_dependencies["subnetIds"]) == private_subnets
    sg_rules = [r for r in plan.of_type(INGRESS, EGRESS) if endpoint_sg in r.property_dependencies["securityGroupId"]]
    assert [(r.type, r.get("ipProtocol"), r.get("fromPort"), r.get("toPort"), r.get("cidrIpv4")) for r in sg_rules] == [
        (INGRESS, "tcp", 443.0, 443.0, "10.0.0.0/16")
    ]


def test_interface_endpoints_off_keeps_s3_gateway() -> None:
    plan = plan_network(createInterfaceEndpoints=False)
    endpoints = plan.of_type(ENDPOINT)
    assert [(r.name, r.get("vpcEndpointType")) for r in endpoints] == [("net-s3", "Gateway")]
    assert [r.name for r in plan.of_type(SG)] == ["net-efa-sg"]
    s3 = endpoints[0]
    assert s3.get("serviceName") == "com.amazonaws.us-east-1.s3"
    assert sorted(s3.property_dependencies["routeTableIds"]) == sorted(
        urn_of(plan, "aws:ec2/routeTable:RouteTable", f"net-private-rt-{az}") for az in AZS
    )


def test_custom_endpoint_list() -> None:
    plan = plan_network(interfaceEndpointServices=["ecr.api", "ecr.dkr", "sts"], createS3GatewayEndpoint=False)
    assert sorted(r.name for r in plan.of_type(ENDPOINT)) == ["net-vpce-ecr-api", "net-vpce-ecr-dkr", "net-vpce-sts"]


def test_flow_logs_on() -> None:
    plan = plan_network(flowLogRetentionDays=30)
    flow = only(plan, FLOW_LOG)
    group = only(plan, LOG_GROUP)
    key = only(plan, KEY)
    role = only(plan, ROLE)
    assert flow.get("trafficType") == "ALL"
    assert flow.get("logDestinationType") == "cloud-watch-logs"
    assert flow.property_dependencies["logDestination"] == [group.urn]
    assert flow.property_dependencies["iamRoleArn"] == [role.urn]
    assert flow.property_dependencies["vpcId"] == [only(plan, VPC).urn]
    assert group.get("name") == "/aws/vpc/net/flow-logs"
    assert group.get("retentionInDays") == 30.0
    assert group.property_dependencies["kmsKeyId"] == [key.urn]
    assert key.get("enableKeyRotation") is True and key.get("deletionWindowInDays") == 30.0
    trust = json.loads(role.get("assumeRolePolicy"))["Statement"]
    assert trust == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
            "Action": "sts:AssumeRole",
            "Condition": {
                "StringEquals": {"aws:SourceAccount": "123456789012"},
                "ArnLike": {"aws:SourceArn": "arn:aws:ec2:us-east-1:123456789012:vpc-flow-log/*"},
            },
        }
    ]
    policy = json.loads(key.get("policy"))
    principals = [s["Principal"] for s in policy["Statement"]]
    assert principals == [{"AWS": "arn:aws:iam::123456789012:root"}, {"Service": "logs.us-east-1.amazonaws.com"}]


def test_flow_logs_off() -> None:
    plan = plan_network(enableFlowLogs=False)
    for type_ in (FLOW_LOG, LOG_GROUP, ROLE, KEY, "aws:iam/rolePolicy:RolePolicy"):
        assert plan.of_type(type_) == [], type_


def test_existing_vpc_creates_only_efa_sg_and_endpoints() -> None:
    existing = {
        "vpcId": "vpc-0a1b2c3d4e5f60789",
        "privateSubnetIds": {
            "us-east-1a": "subnet-0a1b2c3d4e5f60001",
            "us-east-1b": "subnet-0a1b2c3d4e5f60002",
        },
        "privateRouteTableIds": ["rtb-0a1b2c3d4e5f60001"],
    }
    captured: dict[str, GpuNetwork] = {}

    def program() -> None:
        config = GpuNetworkConfig(
            region="us-east-1",
            tags=TAGS,
            availability_zones=["us-east-1a", "us-east-1b"],
            cluster_name="gpu-test",
            network=NetworkSpec.model_validate({"existing": existing, "interfaceEndpointServices": ["sts"]}),
        )
        captured["net"] = GpuNetwork("net", config)

    plan = run_callable(program, preview=False)
    assert Counter(r.type for r in plan) == {
        "gpucloud:network:GpuNetwork": 1,
        SG: 2,
        INGRESS: 2,
        EGRESS: 1,
        ENDPOINT: 2,
    }
    assert {r.get("vpcId") for r in plan.of_type(SG, ENDPOINT)} == {"vpc-0a1b2c3d4e5f60789"}
    sts = plan.find(ENDPOINT, "net-vpce-sts")
    assert sts.get("subnetIds") == ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]
    assert plan.find(ENDPOINT, "net-s3").get("routeTableIds") == ["rtb-0a1b2c3d4e5f60001"]
    # The endpoint SG admits HTTPS from the existing VPC's CIDR, read through ec2.getVpc.
    assert plan.find(INGRESS, "net-endpoints-https-in").get("cidrIpv4") == "10.0.0.0/16"
    assert captured["net"].private_subnet_ids_by_az == existing["privateSubnetIds"]


def test_existing_vpc_without_route_tables_has_no_s3_gateway() -> None:
    plan = run_callable(
        lambda: GpuNetwork(
            "net",
            GpuNetworkConfig(
                region="us-east-1",
                tags=TAGS,
                availability_zones=["us-east-1a"],
                cluster_name="c",
                network=NetworkSpec.model_validate(
                    {
                        "existing": {"vpcId": "vpc-0a1b2c3d", "privateSubnetIds": {"us-east-1a": "subnet-0a1b2c3d"}},
                        "createInterfaceEndpoints": False,
                    }
                ),
            ),
        ),
        preview=False,
    )
    assert plan.of_type(ENDPOINT) == []
    assert sorted(r.name for r in plan.of_type(SG)) == ["net-efa-sg"]


def test_two_networks_in_one_program_do_not_collide() -> None:
    def program() -> None:
        for name in ("blue", "green"):
            GpuNetwork(
                name,
                GpuNetworkConfig(
                    region="us-east-1", tags=TAGS, availability_zones=AZS, cluster_name=name, network=NetworkSpec()
                ),
            )

    plan = run_callable(program, preview=False)
    urns = [r.urn for r in plan]
    assert len(urns) == len(set(urns)) == 2 * len(plan_network())
    log_groups = sorted(r.get("name") for r in plan.of_type(LOG_GROUP))
    assert log_groups == ["/aws/vpc/blue/flow-logs", "/aws/vpc/green/flow-logs"]


def test_carving_is_deterministic_and_largest_first() -> None:
    layout = carve_subnets("10.0.0.0/20", ["a", "b"], 22, 24)
    assert layout.private == {"a": "10.0.0.0/22", "b": "10.0.4.0/22"}
    assert layout.public == {"a": "10.0.8.0/24", "b": "10.0.9.0/24"}
    # Public blocks larger than private ones are placed first so nothing is misaligned.
    layout = carve_subnets("10.0.0.0/20", ["a"], 24, 22)
    assert layout == carve_subnets("10.0.0.0/20", ["a"], 24, 22)
    assert (layout.private, layout.public) == ({"a": "10.0.4.0/24"}, {"a": "10.0.0.0/22"})


# --- bad spec values through parse_platform ------------------------------------------------------------------------


def base_spec() -> dict[str, Any]:
    """The staging stack's spec spread over three AZs: valid, and kept valid by whoever changes the stacks."""
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]["gpucloud:platform"]
    data["availabilityZones"] = ["us-east-1a", "us-east-1b", "us-east-1c"]
    data.pop("network", None)
    return copy.deepcopy(data)


def issues_for(**network: Any) -> list[tuple[str, str]]:
    data = base_spec()
    data["network"] = network
    with pytest.raises(SpecError) as err:
        parse_platform(data)
    return [(i.path, i.message) for i in err.value.issues]


def test_base_spec_is_valid() -> None:
    assert parse_platform(base_spec()).network.nat_gateways == "per-az"


def test_subnets_that_do_not_fit_the_vpc() -> None:
    issues = issues_for(vpcCidr="10.0.0.0/20", privateSubnetPrefix=19)
    assert issues == [
        (
            "gpucloud:platform.network.privateSubnetPrefix",
            "3 private /19 and 3 public /24 subnets (25344 addresses) do not fit in vpcCidr 10.0.0.0/20 (4096); "
            "use a longer prefix or a larger vpcCidr",
        )
    ]


def test_overlapping_explicit_subnets() -> None:
    issues = issues_for(
        vpcCidr="10.0.0.0/16",
        privateSubnetCidrs=["10.0.0.0/19", "10.0.16.0/20", "10.0.64.0/19"],
        publicSubnetCidrs=["10.0.96.0/24", "10.0.97.0/24", "10.1.0.0/24"],
    )
    assert issues == [
        (
            "gpucloud:platform.network.publicSubnetCidrs[2]",
            "10.1.0.0/24 is outside vpcCidr 10.0.0.0/16; pick a block inside it",
        ),
        (
            "gpucloud:platform.network.privateSubnetCidrs[1]",
            "10.0.16.0/20 overlaps privateSubnetCidrs.0 (10.0.0.0/19); give each subnet its own block",
        ),
    ]


def test_explicit_subnet_count_must_match_azs() -> None:
    issues = issues_for(privateSubnetCidrs=["10.0.0.0/19"])
    assert issues == [
        (
            "gpucloud:platform.network.privateSubnetCidrs",
            "give exactly one CIDR per AZ (3 AZs: ['us-east-1a', 'us-east-1b', 'us-east-1c']), got 1",
        )
    ]


def test_bad_vpc_cidr() -> None:
    issues = issues_for(vpcCidr="10.0.0.1/16")
    assert [p for p, _ in issues] == ["gpucloud:platform.network.vpcCidr"]
    assert "is not an IPv4 network CIDR such as 10.0.0.0/16" in issues[0][1]


def test_nat_without_public_subnets_and_no_egress_at_all() -> None:
    assert issues_for(createPublicSubnets=False) == [
        (
            "gpucloud:platform.network.natGateways",
            "NAT gateways live in public subnets; set createPublicSubnets: true or natGateways: none",
        )
    ]
    assert issues_for(natGateways="none", createInterfaceEndpoints=False) == [
        (
            "gpucloud:platform.network.createInterfaceEndpoints",
            "with natGateways: none, nodes reach ECR, STS and EC2 only through interface endpoints; "
            "set createInterfaceEndpoints: true or choose natGateways: single",
        )
    ]


def test_flow_log_retention_must_be_a_cloudwatch_value() -> None:
    issues = issues_for(flowLogRetentionDays=50)
    assert [p for p, _ in issues] == ["gpucloud:platform.network.flowLogRetentionDays"]
    assert issues[0][1].endswith("use e.g. 60")


def test_existing_subnets_must_cover_every_az() -> None:
    issues = issues_for(
        existing={
            "vpcId": "vpc-0a1b2c3d",
            "privateSubnetIds": {"us-east-1a": "subnet-0a1b2c3d", "us-west-2a": "subnet-0a1b2c3e"},
        }
    )
    assert issues == [
        (
            "gpucloud:platform.network.existing.privateSubnetIds",
            "no private subnet for ['us-east-1b', 'us-east-1c']; map every AZ to one",
        ),
        (
            "gpucloud:platform.network.existing.privateSubnetIds",
            "['us-west-2a'] are not among availabilityZones ['us-east-1a', 'us-east-1b', 'us-east-1c']; "
            "remove them or add the AZs",
        ),
    ]


def test_controller_services_are_added_once_after_the_listed_ones() -> None:
    config = GpuNetworkConfig(
        region="us-east-1",
        tags=TAGS,
        availability_zones=AZS,
        cluster_name="gpu-test",
        network=NetworkSpec.model_validate({"interfaceEndpointServices": ["sts", "ecr.api"]}),
        controller_services=["sqs", "sts", "aps-workspaces"],
    )
    plan = run_callable(lambda: GpuNetwork("net", config), preview=True)
    interface = [r.get("serviceName") for r in plan.of_type(ENDPOINT) if r.get("vpcEndpointType") == "Interface"]
    assert sorted(interface) == [
        "com.amazonaws.us-east-1.aps-workspaces",
        "com.amazonaws.us-east-1.ecr.api",
        "com.amazonaws.us-east-1.sqs",
        "com.amazonaws.us-east-1.sts",
    ]


def _stack_spec(stack: str) -> dict[str, Any]:
    root = Path(__file__).resolve().parents[2]
    data = yaml.safe_load((root / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(data["config"]["gpucloud:platform"])


def test_controller_endpoints_follow_the_controllers_each_stack_runs() -> None:
    prod = parse_platform(_stack_spec("prod"))
    # prod: managed pools (cluster-autoscaler), spot/reserved pools under NTH, Container Insights on.
    assert set(prod.controller_endpoint_services()) == {"sqs", "autoscaling", "monitoring"}
    staging = parse_platform(_stack_spec("staging"))
    assert set(staging.controller_endpoint_services()) == {"sqs", "eks", "ssm", "autoscaling"}
    # dev creates no interface endpoints at all (NAT only), so nothing is derived either.
    assert parse_platform(_stack_spec("dev")).controller_endpoint_services() == {}


def test_controller_endpoints_for_karpenter_and_amp_and_switched_off() -> None:
    data = _stack_spec("staging")
    data.setdefault("addons", {}).setdefault("observability", {})["metrics"] = "amp"
    services = parse_platform(data).controller_endpoint_services()
    assert services["aps-workspaces"] == "Amazon Managed Prometheus remote write and KEDA queries"
    assert services["eks"] == "Karpenter (DescribeCluster)"
    data["network"]["controllerEndpoints"] = False
    assert parse_platform(data).controller_endpoint_services() == {}


def test_pod_cidr_is_carved_per_az_routed_like_the_nodes_and_open_to_endpoints() -> None:
    plan = plan_network(podCidr="100.64.0.0/16")
    (assoc,) = plan.of_type("aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation")
    assert assoc.get("cidrBlock") == "100.64.0.0/16"
    pods = {r.get("availabilityZone"): r for r in plan.of_type(SUBNET) if r.name.startswith("net-pods-")}
    assert {az: r.get("cidrBlock") for az, r in pods.items()} == {
        "us-east-1a": "100.64.0.0/18",
        "us-east-1b": "100.64.64.0/18",
        "us-east-1c": "100.64.128.0/18",
    }
    for r in pods.values():
        # Not discoverable by Karpenter or the load-balancer controller: only pod ENIs live here.
        assert r.get("tags")["gpucloud/subnet-tier"] == "pods"
        assert "karpenter.sh/discovery" not in r.get("tags")
        assert "kubernetes.io/role/internal-elb" not in r.get("tags")
        assert assoc.urn in r.dependencies
    rta = {
        r.name: r.property_dependencies["routeTableId"]
        for r in plan.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
        if r.name.startswith("net-pods-rta-")
    }
    assert rta == {
        f"net-pods-rta-{az}": [urn_of(plan, "aws:ec2/routeTable:RouteTable", f"net-private-rt-{az}")] for az in AZS
    }
    https = [(r.name, r.get("cidrIpv4")) for r in plan.of_type(INGRESS) if r.name.startswith("net-endpoints-https")]
    assert sorted(https) == [
        ("net-endpoints-https-in", "10.0.0.0/16"),
        ("net-endpoints-https-pods-in", "100.64.0.0/16"),
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"podCidr": "10.1.0.0/16"},
            "10.1.0.0/16 is outside ['100.64.0.0/10', '198.19.0.0/16']; pick e.g. 100.64.0.0/16",
        ),
        ({"podCidr": "100.64.0.0/12"}, "/12 is outside /16../24; a /16 gives each AZ thousands of pod IPs"),
        ({"podCidr": "100.64.0.1/16"}, "'100.64.0.1/16' is not an IPv4 network CIDR such as 100.64.0.0/16"),
        (
            {"podCidr": "100.64.0.0/16", "vpcCidr": "100.64.0.0/16"},
            "100.64.0.0/16 overlaps vpcCidr 100.64.0.0/16; pick a disjoint block",
        ),
    ],
)
def test_pod_cidr_rules(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_platform({**_minimal_platform(), "network": changes})
    assert [(i.path, i.message.split(" (")[0]) for i in err.value.issues] == [
        ("gpucloud:platform.network.podCidr", message)
    ]


def _minimal_platform() -> dict[str, Any]:
    data = _stack_spec("dev")
    data.pop("network", None)
    return data


def test_platform_with_pod_cidr_turns_on_custom_networking() -> None:
    from gpucloud.plan import run_program

    root = Path(__file__).resolve().parents[2]
    data = _stack_spec("prod")
    data.setdefault("network", {})["podCidr"] = "198.19.0.0/16"
    plan = run_program(root, "prod", config_overrides={"gpucloud:platform": data})
    (cni,) = [r for r in plan if r.name == "gpucloud-prod-eks-addon-vpc-cni"]
    assert json.loads(cni.get("configurationValues")) == {
        "env": {"AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG": "true", "ENI_CONFIG_LABEL_DEF": "topology.kubernetes.io/zone"}
    }
    eni = {r.inputs["metadata"]["name"]: r for r in plan.of_type("kubernetes:crd.k8s.amazonaws.com/v1alpha1:ENIConfig")}
    azs = data["availabilityZones"]
    assert sorted(eni) == sorted(azs)
    for az, r in eni.items():
        assert (
            r.property_dependencies["spec"] and urn_of(plan, SUBNET, f"gpucloud-prod-net-pods-{az}") in r.dependencies
        )
        assert cni.urn in r.dependencies
    (system,) = [r for r in plan if r.name == "gpucloud-prod-eks-system"]
    assert {r.urn for r in eni.values()} <= set(system.dependencies)
    egress = {r.name: r.get("cidrIpv4") for r in plan.of_type(EGRESS) if r.name.startswith("gpucloud-prod-eks-node-")}
    assert egress["gpucloud-prod-eks-node-pods-out"] == "198.19.0.0/16"
