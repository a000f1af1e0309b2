"""Expansion models of multi-language components (gpucloud.plan.remote): what pulumi-eks and awsx register."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pulumi_aws as aws
import pulumi_awsx as awsx
import pulumi_eks as eks
import pytest

from gpucloud.guard import evaluate
from gpucloud.plan import UNKNOWN, run_callable
from gpucloud.plan.remote import models, provenance, sdk_input_names
from gpucloud.plan.remote.awsx.ec2 import auto_subnet_specs, legacy_subnet_specs
from gpucloud.report import validate_report
from gpucloud.report.pipeline import build_report
from gpucloud.report.render import render_markdown, render_text
from gpucloud.report.sarif import to_sarif
from gpucloud.report.visual import render_html

ROOT = Path(__file__).resolve().parents[2]
PROD = json.loads((ROOT / "policies/configs/prod.json").read_text())

STACK = "urn:pulumi:test::gpucloud::"


def _types(plan: object) -> dict[str, int]:
    return dict(Counter(r.type for r in plan))  # type: ignore[attr-defined]


def test_default_awsx_vpc_registers_the_providers_subnets_routes_and_nat_gateways() -> None:
    plan = run_callable(lambda: awsx.ec2.Vpc("net"), region="us-west-2")
    assert _types(plan) == {
        "awsx:ec2:Vpc": 1,
        "aws:ec2/vpc:Vpc": 1,
        "aws:ec2/internetGateway:InternetGateway": 1,
        "aws:ec2/subnet:Subnet": 6,
        "aws:ec2/routeTable:RouteTable": 6,
        "aws:ec2/routeTableAssociation:RouteTableAssociation": 6,
        "aws:ec2/route:Route": 6,
        "aws:ec2/eip:Eip": 3,
        "aws:ec2/natGateway:NatGateway": 3,
    }
    vpc = plan.find("aws:ec2/vpc:Vpc", "net")
    assert vpc.urn == STACK + "awsx:ec2:Vpc$aws:ec2/vpc:Vpc::net"
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    subnets = {
        r.name: (r.inputs["cidrBlock"], r.inputs["availabilityZone"]) for r in plan.of_type("aws:ec2/subnet:Subnet")
    }
    assert subnets == {
        "net-private-1": ("10.0.0.0/19", "us-west-2a"),
        "net-public-1": ("10.0.32.0/20", "us-west-2a"),
        "net-private-2": ("10.0.64.0/19", "us-west-2b"),
        "net-public-2": ("10.0.96.0/20", "us-west-2b"),
        "net-private-3": ("10.0.128.0/19", "us-west-2c"),
        "net-public-3": ("10.0.160.0/20", "us-west-2c"),
    }
    route = plan.find("aws:ec2/route:Route", "net-private-1")
    # Parented as vpc.ts parents them: route -> route table -> subnet -> VPC -> the component.
    assert route.urn.split("::")[2] == (
        "awsx:ec2:Vpc$aws:ec2/vpc:Vpc$aws:ec2/subnet:Subnet$aws:ec2/routeTable:RouteTable$aws:ec2/route:Route"
    )
    assert route.inputs["natGatewayId"] == UNKNOWN


def test_awsx_vpc_single_nat_and_explicit_subnet_specs() -> None:
    def program() -> None:
        awsx.ec2.Vpc(
            "net",
            cidr_block="10.1.0.0/16",
            number_of_availability_zones=2,
            nat_gateways=awsx.ec2.NatGatewayConfigurationArgs(strategy=awsx.ec2.NatGatewayStrategy.SINGLE),
            subnet_specs=[
                awsx.ec2.SubnetSpecArgs(type=awsx.ec2.SubnetType.PRIVATE, cidr_mask=20),
                awsx.ec2.SubnetSpecArgs(type=awsx.ec2.SubnetType.PUBLIC, cidr_mask=24),
            ],
        )

    plan = run_callable(program)
    assert len(plan.of_type("aws:ec2/natGateway:NatGateway")) == 1
    assert {r.name: r.inputs["cidrBlock"] for r in plan.of_type("aws:ec2/subnet:Subnet")} == {
        "net-private-1": "10.1.0.0/20",
        "net-public-1": "10.1.16.0/24",
        "net-private-2": "10.1.128.0/20",
        "net-public-2": "10.1.144.0/24",
    }


def test_subnet_layouts_follow_the_distributors() -> None:
    assert [s["cidrBlock"] for s in auto_subnet_specs("v", "10.0.0.0/16", ["a", "b"], None)] == [
        "10.0.0.0/18",
        "10.0.64.0/19",
        "10.0.128.0/18",
        "10.0.192.0/19",
    ]
    legacy = legacy_subnet_specs("v", "10.0.0.0/16", ["a"], [{"type": "Isolated", "name": "db"}])
    assert [(s["resourceName"], s["cidrBlock"]) for s in legacy] == [("v-db-1", "10.0.0.0/24")]


def _gpu_cluster() -> None:
    role = aws.iam.Role("ng", assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": []}))
    cluster = eks.Cluster("gpu", skip_default_node_group=True, authentication_mode="API", instance_roles=[])
    # The cluster goes in as its URN: a resource reference as input waits on the runtime fix of issue 26 item 1.
    eks.ManagedNodeGroup(
        "gpu-ng",
        cluster=cluster.urn,
        node_role_arn=role.arn,
        instance_types=["g6e.12xlarge"],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=1, max_size=4),
        operating_system="AL2023",
        gpu=True,
        labels={"gpu": "true"},
    )


def test_default_eks_cluster_registers_roles_security_groups_addons_and_the_default_node_group() -> None:
    plan = run_callable(lambda: eks.Cluster("c"), region="us-east-2")
    assert _types(plan) == {
        "eks:index:Cluster": 1,
        "eks:index:ServiceRole": 2,
        "aws:iam/role:Role": 2,
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4,
        "aws:ec2/securityGroup:SecurityGroup": 2,
        "aws:ec2/securityGroupRule:SecurityGroupRule": 6,
        "aws:eks/cluster:Cluster": 1,
        "aws:eks/addon:Addon": 3,
        "pulumi:providers:kubernetes": 1,
        "aws:iam/instanceProfile:InstanceProfile": 1,
        "kubernetes:core/v1:ConfigMap": 1,
        "eks:index:VpcCniAddon": 1,
        "aws:ec2/launchTemplate:LaunchTemplate": 1,
        "aws:autoscaling/group:Group": 1,
    }
    names = {r.name for r in plan}
    # servicerole.ts names each attachment by the first 8 hex digits of the SHA-1 of the policy ARN.
    assert {"c-eksRole-4b490823", "c-eksRole-role", "c-instanceRole-role", "c-eksCluster", "c-coredns"} <= names
    asg = plan.find("aws:autoscaling/group:Group", "c")
    assert (asg.inputs["minSize"], asg.inputs["desiredCapacity"], asg.inputs["maxSize"]) == (1.0, 2.0, 2.0)
    assert plan.find("aws:ec2/launchTemplate:LaunchTemplate", "c-launchTemplate").inputs["instanceType"] == "t3.medium"
    cluster = plan.find("aws:eks/cluster:Cluster", "c-eksCluster")
    assert cluster.inputs["name"].startswith("c-eksCluster-")  # autonamed, as pulumi-aws does
    assert plan.find("kubernetes:core/v1:ConfigMap", "c-nodeAccess").inputs["metadata"]["name"] == "aws-auth"


def test_gpu_managed_node_group_is_priced_and_judged() -> None:
    plan = run_callable(_gpu_cluster, region="us-east-1")
    group = plan.find("aws:eks/nodeGroup:NodeGroup", "gpu-ng")
    assert group.urn == STACK + "eks:index:ManagedNodeGroup$aws:eks/nodeGroup:NodeGroup::gpu-ng"
    assert group.inputs["instanceTypes"] == ["g6e.12xlarge"]
    assert group.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group.inputs["scalingConfig"] == {"desiredSize": 2.0, "minSize": 1.0, "maxSize": 4.0}
    assert group.inputs["clusterName"] == plan.find("aws:eks/cluster:Cluster", "gpu-eksCluster").inputs["name"]
    assert "gpu" not in group.inputs and "operatingSystem" not in group.inputs  # not aws:eks NodeGroup inputs
    report = build_report(plan, policy_config=PROD)
    item = next(i for i in report["cost"]["items"] if i["name"] == "gpu-ng")
    assert (item["instance_type"], item["quantity"], item["max_quantity"]) == ("g6e.12xlarge", 2, 4)
    flagged = {v["policy"] for v in report["policies"]["violations"] if v["urn"] == group.urn}
    assert "cost-tags" in flagged


def test_remote_component_without_a_model_is_opaque_in_every_format_and_blocks_under_prod() -> None:
    plan = run_callable(lambda: awsx.cloudtrail.Trail("trail"))
    assert [o["type"] for o in plan.opaque] == ["awsx:cloudtrail:Trail"]
    assert "no expansion model for awsx:cloudtrail:Trail" in plan.opaque[0]["reason"]
    assert plan.children(plan.opaque[0]["urn"]) == []
    report = build_report(plan, policy_config=PROD)
    validate_report(report)
    assert report["opaque_components"] == plan.opaque
    blocked = [v for v in report["policies"]["violations"] if v["urn"] == plan.opaque[0]["urn"]]
    assert blocked and all(v["enforcement"] == "mandatory" for v in blocked)
    assert {v["undecided"]["field"] for v in blocked} == {"children"}
    assert "remote component trail (awsx:cloudtrail:Trail) is opaque" in render_text(report, width=200)
    assert "awsx:cloudtrail:Trail) is opaque" in render_markdown(report)
    assert "<h2>Opaque components</h2>" in render_html(report) and "awsx:cloudtrail:Trail" in render_html(report)
    sarif = to_sarif(report)
    assert sarif["runs"][0]["properties"]["opaque_components"][0]["type"] == "awsx:cloudtrail:Trail"


def test_opaque_component_is_undecided_not_blocking_under_warn_configs() -> None:
    plan = run_callable(lambda: awsx.cloudtrail.Trail("trail"))
    out = evaluate(plan, policy_config=None)
    urn = plan.opaque[0]["urn"]
    assert not [v for v in out.violations if v["urn"] == urn]
    warned = [u for u in out.undecided if u["urn"] == urn]
    assert warned and {u["action"] for u in warned} == {"warn"}
    assert {n["urn"] for n in out.not_evaluated} >= {urn}


def test_remote_component_method_result_is_unknown_and_outputs_are_not_an_echo_of_inputs() -> None:
    seen: dict[str, bool] = {}

    def program() -> None:
        cluster = eks.Cluster("c", skip_default_node_group=True)
        kubeconfig = cluster.get_kubeconfig()
        vpc = awsx.ec2.Vpc("v", nat_gateways=awsx.ec2.NatGatewayConfigurationArgs(strategy="None"))

        def record(known: bool, key: str) -> None:
            seen[key] = known

        kubeconfig.apply(lambda _: record(True, "kubeconfig"))
        vpc.nat_gateways.apply(lambda v: record(True, "natGateways"))

    plan = run_callable(program)
    # Unknown outputs never run their apply in a preview: neither callback fired.
    assert seen == {}
    assert len(plan.of_type("aws:ec2/natGateway:NatGateway")) == 0


def test_every_model_names_its_source_at_the_pinned_version() -> None:
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line)
    tags = {"pulumi/pulumi-eks": "v" + pins["pulumi_eks"], "pulumi/pulumi-awsx": "v" + pins["pulumi_awsx"]}
    sources = provenance()
    assert set(sources) >= {
        "eks:index:Cluster",
        "eks:index:ManagedNodeGroup",
        "eks:index:NodeGroupV2",
        "eks:index:NodeGroup",
        "eks:index:NodeGroupSecurityGroup",
        "awsx:ec2:Vpc",
        "awsx:lb:ApplicationLoadBalancer",
        "awsx:ecs:FargateService",
    }
    for token, (_, source) in models().items():
        assert source.tag == tags[source.repository], token
        assert all(f.endswith(".ts") for f in source.files), token


@pytest.mark.parametrize(
    ("token", "present", "absent"),
    [("aws:eks/nodeGroup:NodeGroup", "scalingConfig", "gpu"), ("aws:ec2/vpc:Vpc", "cidrBlock", "subnetSpecs")],
)
def test_sdk_input_names_come_from_the_provider_sdk(token: str, present: str, absent: str) -> None:
    names = sdk_input_names(token)
    assert names is not None and present in names and absent not in names


def test_awsx_load_balancer_and_fargate_service_register_what_awsx_registers() -> None:
    def program() -> None:
        lb = awsx.lb.ApplicationLoadBalancer("web")
        cluster = aws.ecs.Cluster("apps")
        awsx.ecs.FargateService(
            "svc",
            cluster=cluster.arn,
            assign_public_ip=True,
            task_definition_args=awsx.ecs.FargateServiceTaskDefinitionArgs(
                container=awsx.ecs.TaskDefinitionContainerDefinitionArgs(
                    name="app", image="nginx:latest", cpu=128, memory=512, essential=True
                )
            ),
        )
        del lb

    plan = run_callable(program)
    children = {(r.type, r.name) for r in plan if r.parent and "awsx:" in r.parent}
    assert children == {
        ("aws:ec2/securityGroup:SecurityGroup", "web"),
        ("aws:lb/loadBalancer:LoadBalancer", "web"),
        ("aws:lb/targetGroup:TargetGroup", "web"),
        ("aws:lb/listener:Listener", "web-0"),
        ("awsx:ecs:FargateTaskDefinition", "svc"),
        ("aws:cloudwatch/logGroup:LogGroup", "svc"),
        ("aws:iam/role:Role", "svc-task"),
        ("aws:iam/role:Role", "svc-execution"),
        # role.ts: `${name}-${sha1hash(policyArn)}`, the first 8 hex digits of the SHA-1 of the policy ARN.
        ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "svc-execution-9a42f520"),
        ("aws:ecs/taskDefinition:TaskDefinition", "svc"),
        ("aws:ec2/securityGroup:SecurityGroup", "svc-sg"),
        ("aws:ecs/service:Service", "svc"),
    }
    listener = plan.find("aws:lb/listener:Listener", "web-0")
    assert (listener.inputs["port"], listener.inputs["protocol"]) == (80.0, "HTTP")
    assert plan.find("aws:lb/loadBalancer:LoadBalancer", "web").inputs["loadBalancerType"] == "application"
    service = plan.find("aws:ecs/service:Service", "svc")
    assert (service.inputs["launchType"], service.inputs["desiredCount"]) == ("FARGATE", 1.0)
    task = plan.find("aws:ecs/taskDefinition:TaskDefinition", "svc")
    assert task.inputs["requiresCompatibilities"] == ["FARGATE"] and task.inputs["networkMode"] == "awsvpc"


def test_awsx_network_load_balancer_registers_tcp_children_and_no_security_group() -> None:
    plan = run_callable(lambda: awsx.lb.NetworkLoadBalancer("nlb", listeners=[{"port": 443}, {"port": 8443}]))
    children = sorted((r.type, r.name) for r in plan if r.parent and "awsx:" in r.parent)
    assert children == [
        ("aws:lb/listener:Listener", "nlb-0"),
        ("aws:lb/listener:Listener", "nlb-1"),
        ("aws:lb/loadBalancer:LoadBalancer", "nlb"),
        ("aws:lb/targetGroup:TargetGroup", "nlb"),
    ]
    assert plan.opaque == []
    lb = plan.find("aws:lb/loadBalancer:LoadBalancer", "nlb").inputs
    # networkLoadBalancer.ts sets these three explicitly (HTTP/2 and the idle timeout are ALB-only).
    assert (lb["loadBalancerType"], lb["enableHttp2"], lb["idleTimeout"]) == ("network", False, 0.0)
    target = plan.find("aws:lb/targetGroup:TargetGroup", "nlb").inputs
    assert (target["protocol"], target["port"]) == ("TCP", 80.0)
    listeners = [plan.find("aws:lb/listener:Listener", f"nlb-{i}").inputs for i in (0, 1)]
    assert [(x["protocol"], x["port"]) for x in listeners] == [("TCP", 443.0), ("TCP", 8443.0)]


def test_awsx_network_load_balancer_with_two_subnet_inputs_is_opaque_as_the_provider_refuses_it() -> None:
    plan = run_callable(
        lambda: awsx.lb.NetworkLoadBalancer("nlb", subnet_ids=["s-1"], subnet_mappings=[{"subnet_id": "s-2"}])
    )
    assert [o["type"] for o in plan.opaque] == ["awsx:lb:NetworkLoadBalancer"]
    assert "subnetIds, subnets, subnetMappings" in plan.opaque[0]["reason"]


def test_awsx_ec2_service_and_task_definition_register_what_ec2service_ts_registers() -> None:
    def program() -> None:
        cluster = aws.ecs.Cluster("apps")
        awsx.ecs.EC2Service(
            "svc",
            cluster=cluster.arn,
            desired_count=2,
            task_definition_args=awsx.ecs.EC2ServiceTaskDefinitionArgs(
                network_mode="bridge",
                container=awsx.ecs.TaskDefinitionContainerDefinitionArgs(
                    name="app", image="nginx:latest", cpu=128, memory=512, essential=True
                ),
            ),
        )

    plan = run_callable(program)
    children = sorted((r.type, r.name) for r in plan if r.parent and "awsx:" in r.parent)
    assert children == [
        ("aws:cloudwatch/logGroup:LogGroup", "svc"),
        ("aws:ecs/service:Service", "svc"),
        ("aws:ecs/taskDefinition:TaskDefinition", "svc"),
        ("aws:iam/role:Role", "svc-execution"),
        ("aws:iam/role:Role", "svc-task"),
        ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "svc-execution-9a42f520"),
        ("awsx:ecs:EC2TaskDefinition", "svc"),
    ]
    service = plan.find("aws:ecs/service:Service", "svc").inputs
    assert (service["launchType"], service["desiredCount"]) == ("EC2", 2.0)
    assert "networkConfiguration" not in service  # no default network (Fargate's default SG is not registered)
    task = plan.find("aws:ecs/taskDefinition:TaskDefinition", "svc").inputs
    # ec2TaskDefinition.ts: `networkMode: "awsvpc", ...args`, so the program's mode wins; compatibilities are EC2's.
    assert (task["networkMode"], task["requiresCompatibilities"]) == ("bridge", ["EC2"])
    assert "cpu" not in task and "memory" not in task  # no Fargate sizing


def test_awsx_default_vpc_is_expanded_with_no_children() -> None:
    plan = run_callable(lambda: awsx.ec2.DefaultVpc("default"))
    assert plan.opaque == []
    [component] = plan.of_type("awsx:ec2:DefaultVpc")
    assert plan.children(component.urn) == []


def test_every_awsx_model_names_its_own_typescript_source() -> None:
    sources = provenance()
    assert sources["awsx:lb:NetworkLoadBalancer"] == "pulumi/pulumi-awsx@v3.8.0: awsx/lb/networkLoadBalancer.ts"
    assert sources["awsx:ec2:DefaultVpc"] == (
        "pulumi/pulumi-awsx@v3.8.0: awsx/ec2/defaultVpc.ts, awsx/ec2/getDefaultVpc.ts"
    )
    assert sources["awsx:ecs:EC2Service"] == (
        "pulumi/pulumi-awsx@v3.8.0: awsx/ecs/ec2Service.ts, awsx/ecs/ec2TaskDefinition.ts, awsx/role.ts, "
        "awsx/cloudwatch/logGroup.ts"
    )
