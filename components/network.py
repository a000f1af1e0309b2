"""VPC for a GPU EKS platform: private node subnets per AZ, public subnets for NAT/LBs only, endpoints, flow
logs, and the EFA security group. Or, with `network.existing`, only the EFA SG and endpoints in a given VPC."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
from pydantic import Field, model_validator

from gpucloud.components.base import ComponentConfig, account_and_partition, child, named_tags
from gpucloud.spec import NetworkSpec


class GpuNetworkConfig(ComponentConfig):
    """Inputs of GpuNetwork."""

    availability_zones: list[str] = Field(min_length=1, description="AZs to place one private subnet each in.")
    cluster_name: str = Field(
        min_length=1, description="EKS cluster name the subnets are tagged for (load balancers, Karpenter)."
    )
    network: NetworkSpec = Field(description="VPC layout, NAT mode, endpoints and flow logs from the stack spec.")
    controller_services: list[str] = Field(
        default_factory=list,
        description="Interface endpoint services the platform's controllers need on top of "
        "network.interfaceEndpointServices (PlatformSpec.controller_endpoint_services).",
    )

    @model_validator(mode="after")
    def _layout(self) -> GpuNetworkConfig:
        # Same check as the platform spec, for callers that build the config directly.
        if self.network.existing is None:
            self.network.subnet_layout(self.availability_zones)
        else:
            missing = [az for az in self.availability_zones if az not in self.network.existing.private_subnet_ids]
            if missing:
                raise ValueError(f"network.existing.privateSubnetIds has no subnet for {missing}")
        return self


def key_policy(account: str, partition: str, region: str, extra_statements: list[dict[str, Any]] | None = None) -> str:
    """Key policy: the account administers the key through IAM, CloudWatch Logs may encrypt this account's log
    groups with it (a log group's kmsKeyId fails without that grant), plus any service statements."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": "AccountAdministersThroughIam",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:{partition}:iam::{account}:root"},
            "Action": "kms:*",
            "Resource": "*",
        },
        {
            "Sid": "CloudWatchLogsEncryptsThisAccountsLogGroups",
            "Effect": "Allow",
            "Principal": {"Service": f"logs.{region}.amazonaws.com"},
            "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
            "Resource": "*",
            "Condition": {
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account}:log-group:*"
                }
            },
        },
        *(extra_statements or []),
    ]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


class GpuNetwork(pulumi.ComponentResource):
    """VPC, subnets, routing, NAT, endpoints, flow logs, default-SG lockdown and the EFA security group."""

    def __init__(
        self,
        name: str,
        config: GpuNetworkConfig,
        *,
        logs_kms_key_arn: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:network:GpuNetwork", name, None, opts)
        self._name = name
        self._config = config
        net = config.network
        tags = config.tags
        azs = list(config.availability_zones)

        self.public_subnet_ids: list[pulumi.Output[str]] = []
        self.nat_gateway_ids: list[pulumi.Output[str]] = []
        self.private_route_table_ids: list[pulumi.Input[str]] = []
        self.internet_gateway_id: pulumi.Output[str] | None = None
        self.flow_log_group_name: pulumi.Output[str] | str = ""
        self.flow_logs_kms_key_arn: pulumi.Input[str] | None = None
        self.endpoint_security_group_id: pulumi.Output[str] | None = None
        self.interface_endpoint_ids: dict[str, pulumi.Output[str]] = {}
        self.s3_endpoint_id: pulumi.Output[str] | None = None

        if net.existing is None:
            self._create_vpc(azs, tags, logs_kms_key_arn)
        else:
            existing = net.existing
            self.vpc_id: pulumi.Input[str] = existing.vpc_id
            self.vpc_cidr: pulumi.Input[str] = aws.ec2.get_vpc_output(
                id=existing.vpc_id, opts=pulumi.InvokeOutputOptions(parent=self)
            ).cidr_block
            self.private_subnet_ids_by_az: dict[str, pulumi.Input[str]] = {
                az: existing.private_subnet_ids[az] for az in azs
            }
            self.private_route_table_ids = list(existing.private_route_table_ids)

        self.private_subnet_ids: list[pulumi.Input[str]] = list(self.private_subnet_ids_by_az.values())
        self.pod_cidr: str | None = net.pod_cidr
        self.pod_subnet_ids_by_az: dict[str, pulumi.Input[str]] = {}
        if net.pod_cidr is not None and net.existing is None:
            self._create_pod_subnets(azs, tags)
        self._create_endpoints(tags)
        self._create_efa_security_group(tags)

        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "vpc_cidr": self.vpc_cidr,
                "private_subnet_ids": self.private_subnet_ids,
                "private_subnet_ids_by_az": self.private_subnet_ids_by_az,
                "pod_subnet_ids_by_az": self.pod_subnet_ids_by_az,
                "public_subnet_ids": self.public_subnet_ids,
                "nat_gateway_ids": self.nat_gateway_ids,
                "efa_security_group_id": self.efa_security_group_id,
                "endpoint_security_group_id": self.endpoint_security_group_id,
                "s3_endpoint_id": self.s3_endpoint_id,
                "flow_log_group_name": self.flow_log_group_name,
            }
        )

    def _create_vpc(self, azs: list[str], tags: dict[str, str], logs_kms_key_arn: pulumi.Input[str] | None) -> None:
        name, net, cluster = self._name, self._config.network, self._config.cluster_name
        layout = net.subnet_layout(azs)
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=net.vpc_cidr,
            # Both DNS flags are required for interface endpoints' private DNS and for EKS node registration.
            enable_dns_support=True,
            enable_dns_hostnames=True,
            tags=named_tags(tags, f"{name}-vpc"),
            opts=child(self),
        )
        self.vpc = vpc
        self.vpc_id = vpc.id
        self.vpc_cidr = net.vpc_cidr
        # Adopting the default SG with no rules removes its allow-all-within-group rules (guardrail 29).
        self.default_security_group = aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            vpc_id=vpc.id,
            ingress=[],
            egress=[],
            tags=named_tags(tags, f"{name}-default-sg-unused"),
            opts=child(self),
        )
        discovery = {f"kubernetes.io/cluster/{cluster}": "shared", "karpenter.sh/discovery": cluster}
        self.private_subnets: dict[str, aws.ec2.Subnet] = {}
        for az, cidr in layout.private.items():
            self.private_subnets[az] = aws.ec2.Subnet(
                f"{name}-private-{az}",
                vpc_id=vpc.id,
                availability_zone=az,
                cidr_block=cidr,
                map_public_ip_on_launch=False,
                tags={
                    **named_tags(tags, f"{name}-private-{az}"),
                    **discovery,
                    "kubernetes.io/role/internal-elb": "1",
                    "gpucloud/subnet-tier": "private",
                },
                opts=child(self),
            )
        self.private_subnet_ids_by_az = {az: s.id for az, s in self.private_subnets.items()}

        self.public_subnets: dict[str, aws.ec2.Subnet] = {}
        for az, cidr in layout.public.items():
            self.public_subnets[az] = aws.ec2.Subnet(
                f"{name}-public-{az}",
                vpc_id=vpc.id,
                availability_zone=az,
                cidr_block=cidr,
                # NAT gateways use Elastic IPs and load balancers bring their own; nothing here needs an
                # auto-assigned public IP, and an instance launched here by mistake stays unreachable.
                map_public_ip_on_launch=False,
                tags={
                    **named_tags(tags, f"{name}-public-{az}"),
                    f"kubernetes.io/cluster/{cluster}": "shared",
                    "kubernetes.io/role/elb": "1",
                    "gpucloud/subnet-tier": "public",
                },
                opts=child(self),
            )
        self.public_subnet_ids = [s.id for s in self.public_subnets.values()]

        if self.public_subnets:
            igw = aws.ec2.InternetGateway(
                f"{name}-igw", vpc_id=vpc.id, tags=named_tags(tags, f"{name}-igw"), opts=child(self)
            )
            self.internet_gateway_id = igw.id
            public_rt = aws.ec2.RouteTable(
                f"{name}-public-rt", vpc_id=vpc.id, tags=named_tags(tags, f"{name}-public-rt"), opts=child(self)
            )
            aws.ec2.Route(
                f"{name}-public-default-route",
                route_table_id=public_rt.id,
                destination_cidr_block="0.0.0.0/0",
                gateway_id=igw.id,
                opts=child(self),
            )
            for az, subnet in self.public_subnets.items():
                aws.ec2.RouteTableAssociation(
                    f"{name}-public-rta-{az}", route_table_id=public_rt.id, subnet_id=subnet.id, opts=child(self)
                )

        nat_by_az: dict[str, aws.ec2.NatGateway] = {}
        nat_azs = {"per-az": azs, "single": azs[:1], "none": []}[net.nat_gateways] if self.public_subnets else []
        for az in nat_azs:
            eip = aws.ec2.Eip(
                f"{name}-nat-eip-{az}", domain="vpc", tags=named_tags(tags, f"{name}-nat-{az}"), opts=child(self)
            )
            nat_by_az[az] = aws.ec2.NatGateway(
                f"{name}-nat-{az}",
                allocation_id=eip.id,
                subnet_id=self.public_subnets[az].id,
                connectivity_type="public",
                tags=named_tags(tags, f"{name}-nat-{az}"),
                opts=child(self),
            )
        self.nat_gateway_ids = [n.id for n in nat_by_az.values()]

        # One route table per AZ even with a single NAT, so moving to per-az NAT only changes routes.
        for az, subnet in self.private_subnets.items():
            rt = aws.ec2.RouteTable(
                f"{name}-private-rt-{az}",
                vpc_id=vpc.id,
                tags=named_tags(tags, f"{name}-private-rt-{az}"),
                opts=child(self),
            )
            nat = nat_by_az.get(az) or (next(iter(nat_by_az.values())) if nat_by_az else None)
            if nat is not None:
                aws.ec2.Route(
                    f"{name}-private-default-route-{az}",
                    route_table_id=rt.id,
                    destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=nat.id,
                    opts=child(self),
                )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-rta-{az}", route_table_id=rt.id, subnet_id=subnet.id, opts=child(self)
            )
            self.private_route_table_ids.append(rt.id)

        if net.enable_flow_logs:
            self._create_flow_logs(tags, logs_kms_key_arn)

    def _create_pod_subnets(self, azs: list[str], tags: dict[str, str]) -> None:
        """Secondary CIDR and one pod subnet per AZ, routed like the AZ's node subnet (same NAT, same endpoints).

        Not tagged for Karpenter or load-balancer discovery: nodes and NLBs stay in the node subnets; only the
        VPC CNI places pod ENIs here, through the ENIConfigs the cluster writes.
        """
        name, net = self._name, self._config.network
        assert net.pod_cidr is not None
        association = aws.ec2.VpcIpv4CidrBlockAssociation(
            f"{name}-pod-cidr", vpc_id=self.vpc_id, cidr_block=net.pod_cidr, opts=child(self)
        )
        for (az, cidr), rt in zip(net.pod_subnets(azs).items(), self.private_route_table_ids, strict=True):
            subnet = aws.ec2.Subnet(
                f"{name}-pods-{az}",
                vpc_id=self.vpc_id,
                availability_zone=az,
                cidr_block=cidr,
                map_public_ip_on_launch=False,
                tags={**named_tags(tags, f"{name}-pods-{az}"), "gpucloud/subnet-tier": "pods"},
                # The block must be associated before a subnet can be carved from it.
                opts=child(self, depends_on=[association]),
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-pods-rta-{az}", route_table_id=rt, subnet_id=subnet.id, opts=child(self)
            )
            self.pod_subnet_ids_by_az[az] = subnet.id

    def _create_flow_logs(self, tags: dict[str, str], logs_kms_key_arn: pulumi.Input[str] | None) -> None:
        name, net = self._name, self._config.network
        region = self._config.region
        account, partition = account_and_partition(self)
        if logs_kms_key_arn is None:
            key = aws.kms.Key(
                f"{name}-flow-logs-key",
                description=f"{name}: VPC flow log encryption",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=pulumi.Output.all(account, partition).apply(lambda a: key_policy(a[0], a[1], region)),
                tags=named_tags(tags, f"{name}-flow-logs-key"),
                opts=child(self),
            )
            aws.kms.Alias(
                f"{name}-flow-logs-key-alias",
                name=f"alias/{name}-flow-logs",
                target_key_id=key.key_id,
                opts=child(self),
            )
            logs_kms_key_arn = key.arn
        self.flow_logs_kms_key_arn = logs_kms_key_arn
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-flow-logs",
            name=f"/aws/vpc/{name}/flow-logs",
            retention_in_days=net.flow_log_retention_days,
            kms_key_id=logs_kms_key_arn,
            tags=named_tags(tags, f"{name}-flow-logs"),
            opts=child(self),
        )
        self.flow_log_group_name = log_group.name
        trust = pulumi.Output.all(account, partition).apply(
            lambda a: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                            # Confused-deputy guard: only flow logs of this account may assume the role.
                            "Condition": {
                                "StringEquals": {"aws:SourceAccount": a[0]},
                                "ArnLike": {"aws:SourceArn": f"arn:{a[1]}:ec2:{region}:{a[0]}:vpc-flow-log/*"},
                            },
                        }
                    ],
                }
            )
        )
        role = aws.iam.Role(
            f"{name}-flow-logs-role",
            assume_role_policy=trust,
            description=f"{name}: VPC flow logs delivery to CloudWatch Logs",
            tags=named_tags(tags, f"{name}-flow-logs-role"),
            opts=child(self),
        )
        aws.iam.RolePolicy(
            f"{name}-flow-logs-policy",
            role=role.id,
            policy=log_group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": [
                                    "logs:CreateLogStream",
                                    "logs:PutLogEvents",
                                    "logs:DescribeLogStreams",
                                ],
                                "Resource": [arn, f"{arn}:*"],
                            },
                            # DescribeLogGroups accepts only Resource "*" (Service Authorization Reference):
                            # scoped to the log group the grant would be void.
                            {"Effect": "Allow", "Action": "logs:DescribeLogGroups", "Resource": "*"},
                        ],
                    }
                )
            ),
            opts=child(self),
        )
        self.flow_log = aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=self.vpc_id,
            traffic_type=net.flow_log_traffic_type,
            log_destination_type="cloud-watch-logs",
            log_destination=log_group.arn,
            iam_role_arn=role.arn,
            tags=named_tags(tags, f"{name}-flow-log"),
            opts=child(self),
        )

    def _create_endpoints(self, tags: dict[str, str]) -> None:
        name, net, region = self._name, self._config.network, self._config.region
        if net.create_s3_gateway_endpoint and self.private_route_table_ids:
            self.s3_endpoint_id = aws.ec2.VpcEndpoint(
                f"{name}-s3",
                vpc_id=self.vpc_id,
                service_name=f"com.amazonaws.{region}.s3",
                vpc_endpoint_type="Gateway",
                route_table_ids=self.private_route_table_ids,
                tags=named_tags(tags, f"{name}-s3"),
                opts=child(self),
            ).id
        if not net.create_interface_endpoints:
            return
        sg = aws.ec2.SecurityGroup(
            f"{name}-endpoints-sg",
            vpc_id=self.vpc_id,
            description="Interface endpoints: HTTPS from inside the VPC only",
            tags=named_tags(tags, f"{name}-endpoints-sg"),
            opts=child(self),
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-endpoints-https-in",
            security_group_id=sg.id,
            ip_protocol="tcp",
            from_port=443,
            to_port=443,
            cidr_ipv4=self.vpc_cidr,
            description="HTTPS to AWS service endpoints from the VPC",
            tags=named_tags(tags, f"{name}-endpoints-https-in"),
            opts=child(self),
        )
        if self.pod_cidr is not None:
            # Pods on custom networking call AWS APIs from the secondary block, not from vpcCidr.
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-endpoints-https-pods-in",
                security_group_id=sg.id,
                ip_protocol="tcp",
                from_port=443,
                to_port=443,
                cidr_ipv4=self.pod_cidr,
                description="HTTPS to AWS service endpoints from pod IPs",
                tags=named_tags(tags, f"{name}-endpoints-https-pods-in"),
                opts=child(self),
            )
        self.endpoint_security_group_id = sg.id
        services = list(dict.fromkeys([*net.interface_endpoint_services, *self._config.controller_services]))
        for service in services:
            self.interface_endpoint_ids[service] = aws.ec2.VpcEndpoint(
                f"{name}-vpce-{service.replace('.', '-')}",
                vpc_id=self.vpc_id,
                service_name=f"com.amazonaws.{region}.{service}",
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                subnet_ids=self.private_subnet_ids,
                security_group_ids=[sg.id],
                tags=named_tags(tags, f"{name}-vpce-{service}"),
                opts=child(self),
            ).id

    def _create_efa_security_group(self, tags: dict[str, str]) -> None:
        name = self._name
        # EFA's SRD traffic needs every protocol to and from the group itself, egress included; nothing else
        # is open, so the group is attached alongside the node SGs, never alone.
        sg = aws.ec2.SecurityGroup(
            f"{name}-efa-sg",
            vpc_id=self.vpc_id,
            description="EFA: all traffic between members of this group only",
            tags=named_tags(tags, f"{name}-efa-sg"),
            opts=child(self),
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-efa-self-in",
            security_group_id=sg.id,
            referenced_security_group_id=sg.id,
            ip_protocol="-1",
            description="EFA: all traffic from members of this group",
            tags=named_tags(tags, f"{name}-efa-self-in"),
            opts=child(self),
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-efa-self-out",
            security_group_id=sg.id,
            referenced_security_group_id=sg.id,
            ip_protocol="-1",
            description="EFA: all traffic to members of this group",
            tags=named_tags(tags, f"{name}-efa-self-out"),
            opts=child(self),
        )
        self.efa_security_group = sg
        self.efa_security_group_id = sg.id
