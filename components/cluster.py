"""EKS control plane for GPU pools: private endpoint, KMS secrets encryption, audit logs, API access entries,
IRSA/Pod Identity, managed add-ons, the shared node role, the node SG and a small on-demand system node group."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud.components.base import (
    ComponentConfig,
    account_and_partition,
    child,
    named_tags,
    service_trust,
)
from gpucloud.components.cluster_parts import _autoscaling_statements, _slug, build_system_nodes, kubeconfig_json
from gpucloud.components.network import key_policy
from gpucloud.components.pod_identity import pod_identity_role
from gpucloud.spec import ClusterSpec
from gpucloud.spec.cluster import AddonName

# Add-ons a node needs before it can become Ready; they go in before the node group. CoreDNS is a Deployment
# that stays DEGRADED (and times out the create) until nodes exist, so it and the monitoring agent go after.
_BEFORE_NODES: tuple[AddonName, ...] = ("eks-pod-identity-agent", "kube-proxy", "vpc-cni")
_AFTER_NODES: tuple[AddonName, ...] = ("coredns", "eks-node-monitoring-agent")
_NODE_POLICIES = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "ecr-read": "AmazonEC2ContainerRegistryReadOnly",
    "ssm": "AmazonSSMManagedInstanceCore",
}


class GpuClusterConfig(ComponentConfig):
    """Inputs of GpuCluster."""

    cluster_name: str = Field(
        min_length=1,
        max_length=100,
        pattern=r"^[0-9A-Za-z][A-Za-z0-9\-_]*$",
        description="EKS cluster name (also in subnet tags and the /aws/eks/<name>/cluster log group).",
    )
    environment: Literal["dev", "staging", "prod"] = Field(
        description="Environment: prod disables creator admin and keeps extended support."
    )
    cluster: ClusterSpec = Field(description="Version, endpoint access, logging, add-ons and system nodes.")
    retain_key: bool = Field(
        default=False,
        description="Keep the created KMS key on destroy (and protect it in prod): on when data encrypted with it "
        "outlives the stack (the platform's retained Prometheus volumes), which is unreadable without the key.",
    )


class _Build(NamedTuple):
    """What every part of GpuCluster's construction reads."""

    name: str
    spec: ClusterSpec
    tags: dict[str, str]
    region: str
    cluster_name: str
    prod: bool
    account: pulumi.Output[str]
    partition: pulumi.Output[str]
    managed_policy: Callable[[str], pulumi.Output[str]]
    retain_key: bool = False  # GpuClusterConfig.retain_key


class GpuCluster(pulumi.ComponentResource):
    """EKS cluster with everything GPU node pools and add-ons rely on."""

    # Set by build_system_nodes (cluster_parts.py).
    system_launch_template: aws.ec2.LaunchTemplate
    system_node_group: aws.eks.NodeGroup

    def __init__(
        self,
        name: str,
        config: GpuClusterConfig,
        *,
        vpc_id: pulumi.Input[str],
        vpc_cidr: pulumi.Input[str],
        subnet_ids_by_az: Mapping[str, pulumi.Input[str]],
        efa_security_group_id: pulumi.Input[str] | None = None,
        pod_subnet_ids_by_az: Mapping[str, pulumi.Input[str]] | None = None,
        pod_cidr: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:cluster:GpuCluster", name, None, opts)
        pod_subnets = dict(pod_subnet_ids_by_az or {})
        spec = config.cluster
        tags = config.tags
        self._tags = tags
        region = config.region
        cluster_name = config.cluster_name
        prod = config.environment == "prod"
        account, partition = account_and_partition(self)

        def managed_policy(policy: str) -> pulumi.Output[str]:
            return partition.apply(lambda p: f"arn:{p}:iam::aws:policy/{policy}")

        b = _Build(name, spec, tags, region, cluster_name, prod, account, partition, managed_policy, config.retain_key)
        subnet_ids = list(subnet_ids_by_az.values())
        # In the order the resources were always registered: the plan lists them in this order.
        self._encryption(b)
        self._control_plane(b, subnet_ids)
        self._irsa(b)
        self._admin_access(b)
        node_policies, cni_policy = self._node_identity(b)
        self._node_security_group(b, vpc_id, vpc_cidr, pod_cidr)
        self._node_addons(b, cni_policy, pod_subnets)
        self._kubernetes_access(b, pod_subnets)
        build_system_nodes(self, b, subnet_ids, node_policies)
        for addon in _AFTER_NODES:
            self.addons[addon] = self._addon(name, addon, spec, tags, [self.system_node_group])

        self.subnet_ids_by_az = dict(subnet_ids_by_az)
        self.efa_security_group_id = efa_security_group_id

        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "certificate_authority": self.certificate_authority,
                "kubernetes_version": self.kubernetes_version,
                "oidc_provider_arn": self.oidc_provider_arn,
                "oidc_provider_url": self.oidc_provider_url,
                "node_security_group_id": self.node_security_group_id,
                "cluster_security_group_id": self.cluster_security_group_id,
                "node_role_arn": self.node_role_arn,
                "node_role_name": self.node_role_name,
                "node_instance_profile_name": self.node_instance_profile.name,
                "kubeconfig": self.kubeconfig,
                "subnet_ids_by_az": self.subnet_ids_by_az,
                "efa_security_group_id": self.efa_security_group_id,
                "kms_key_arn": self.kms_key_arn,
            }
        )

    def _encryption(self, b: _Build) -> None:
        """The KMS key (secrets, control-plane logs, node volumes) and the control-plane log group."""
        name, spec, tags, region, cluster_name, account, partition = (
            b.name,
            b.spec,
            b.tags,
            b.region,
            b.cluster_name,
            b.account,
            b.partition,
        )
        # --- encryption key (secrets, control-plane logs, node root volumes) ---
        self.kms_key: aws.kms.Key | None = None
        if spec.kms_key_arn is not None:
            self.kms_key_arn: pulumi.Input[str] = spec.kms_key_arn
        else:
            # Retained volumes (reclaimPolicy Retain) are encrypted with this key: deleted with the stack, it would
            # leave them undecryptable once its deletion window ends.
            keep: dict[str, Any] = {"retain_on_delete": True, "protect": b.prod} if b.retain_key else {}
            key_opts = child(self, **keep)
            if spec.create_autoscaling_service_linked_role:
                slr = aws.iam.ServiceLinkedRole(
                    f"{name}-autoscaling-slr",
                    aws_service_name="autoscaling.amazonaws.com",
                    description="Auto Scaling service-linked role (launches nodes with KMS-encrypted volumes)",
                    tags=named_tags(tags, "AWSServiceRoleForAutoScaling"),
                    opts=child(self),
                )
                key_opts = child(self, depends_on=[slr], **keep)
            self.kms_key = aws.kms.Key(
                f"{name}-key",
                description=f"{cluster_name}: EKS secrets, control-plane logs and node volumes",
                enable_key_rotation=True,
                deletion_window_in_days=spec.kms_deletion_window_days,
                policy=pulumi.Output.all(account, partition).apply(
                    lambda a: key_policy(a[0], a[1], region, _autoscaling_statements(a[0], a[1]))
                ),
                tags=named_tags(tags, f"{cluster_name}-eks"),
                opts=key_opts,
            )
            aws.kms.Alias(
                f"{name}-key-alias",
                name=f"alias/{cluster_name}-eks",
                target_key_id=self.kms_key.key_id,
                opts=child(self),
            )
            self.kms_key_arn = self.kms_key.arn

        # Pre-created so it is KMS-encrypted with a retention; EKS would otherwise create it unencrypted, forever.
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=f"/aws/eks/{cluster_name}/cluster",
            retention_in_days=spec.log_retention_days,
            kms_key_id=self.kms_key_arn,
            tags=named_tags(tags, f"{cluster_name}-control-plane-logs"),
            opts=child(self),
        )

    def _control_plane(self, b: _Build, subnet_ids: list[pulumi.Input[str]]) -> None:
        """The EKS cluster and its role."""
        name, spec, tags, cluster_name, prod, managed_policy = (
            b.name,
            b.spec,
            b.tags,
            b.cluster_name,
            b.prod,
            b.managed_policy,
        )
        # --- control plane ---
        self.cluster_role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=service_trust("eks.amazonaws.com", ["sts:AssumeRole", "sts:TagSession"]),
            description=f"{cluster_name}: EKS control plane",
            tags=named_tags(tags, f"{cluster_name}-cluster-role"),
            opts=child(self),
        )
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=self.cluster_role.name,
            policy_arn=managed_policy("AmazonEKSClusterPolicy"),
            opts=child(self),
        )
        cluster_kms = aws.iam.RolePolicy(
            f"{name}-cluster-kms",
            role=self.cluster_role.id,
            policy=pulumi.Output.from_input(self.kms_key_arn).apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
                                "Resource": arn,
                            }
                        ],
                    }
                )
            ),
            opts=child(self),
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=cluster_name,
            version=spec.kubernetes_version,
            role_arn=self.cluster_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=subnet_ids,
                endpoint_private_access=True,
                endpoint_public_access=spec.endpoint_public_access,
                public_access_cidrs=list(spec.public_access_cidrs) if spec.endpoint_public_access else None,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"],
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=self.kms_key_arn),
            ),
            enabled_cluster_log_types=list(spec.log_types),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                # In prod nobody is admin by accident of having run `pulumi up`; admins come from access entries.
                bootstrap_cluster_creator_admin_permissions=not prod,
            ),
            # Non-prod moves to the next version instead of paying extended-support fees; prod keeps EXTENDED so
            # an upgrade is never forced on running training jobs.
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type="EXTENDED" if prod else "STANDARD"),
            # The add-ons below are EKS-managed; the self-managed copies would only conflict with them.
            bootstrap_self_managed_addons=False,
            # A prod cluster is deleted only after someone turns this off on purpose.
            deletion_protection=prod,
            tags=named_tags(tags, cluster_name),
            opts=child(self, depends_on=[self.log_group, cluster_policy, cluster_kms]),
        )
        self.cluster_name = self.cluster.name
        self.endpoint = self.cluster.endpoint
        self.certificate_authority = self.cluster.certificate_authority.apply(
            lambda ca: (ca.data if ca else None) or ""
        )
        self.cluster_security_group_id = self.cluster.vpc_config.apply(
            lambda v: (v.cluster_security_group_id if v else None) or ""
        )
        self.kubernetes_version = spec.kubernetes_version

    def _irsa(self, b: _Build) -> None:
        """The cluster's OIDC provider for IRSA."""
        name, tags, cluster_name = b.name, b.tags, b.cluster_name
        # --- IRSA ---
        issuer = self.cluster.identities.apply(
            lambda ids: (ids[0].oidcs[0].issuer if ids and ids[0].oidcs else None) or ""
        )
        # No thumbprint: IAM fetches and trusts the EKS OIDC endpoint's CA itself (pulumi-aws documents
        # thumbprintLists as optional), and a pinned thumbprint breaks when the certificate rotates.
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=issuer,
            client_id_lists=["sts.amazonaws.com"],
            tags=named_tags(tags, f"{cluster_name}-oidc"),
            opts=child(self),
        )
        self.oidc_provider_arn = self.oidc_provider.arn
        # Without the scheme, as IRSA trust conditions use it: "<url>:sub" and "<url>:aud".
        self.oidc_provider_url = issuer.apply(lambda u: u.removeprefix("https://"))

    def _admin_access(self, b: _Build) -> None:
        """An access entry with cluster-admin per admin principal."""
        name, spec, tags, cluster_name, partition = b.name, b.spec, b.tags, b.cluster_name, b.partition
        # --- access entries ---
        self.admin_access_entries: list[aws.eks.AccessEntry] = []
        seen: set[str] = set()
        for i, arn in enumerate(spec.admin_principal_arns):
            slug = _slug(arn)
            slug = slug if slug not in seen else f"{slug}-{i}"
            seen.add(slug)
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{slug}",
                cluster_name=self.cluster.name,
                principal_arn=arn,
                type="STANDARD",
                tags=named_tags(tags, f"{cluster_name}-admin-{slug}"),
                opts=child(self),
            )
            aws.eks.AccessPolicyAssociation(
                f"{name}-admin-{slug}-cluster-admin",
                cluster_name=self.cluster.name,
                principal_arn=arn,
                policy_arn=partition.apply(
                    lambda p: f"arn:{p}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
                ),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=child(self, depends_on=[entry]),
            )
            self.admin_access_entries.append(entry)

    def _node_identity(self, b: _Build) -> tuple[list[aws.iam.RolePolicyAttachment], aws.iam.RolePolicyAttachment]:
        """The node role and instance profile, and the vpc-cni role; (node policy attachments, CNI attachment)."""
        name, tags, cluster_name, managed_policy = b.name, b.tags, b.cluster_name, b.managed_policy
        # --- node identity, shared by every node group of the platform ---
        self.node_role = aws.iam.Role(
            f"{name}-node-role",
            assume_role_policy=service_trust("ec2.amazonaws.com"),
            description=f"{cluster_name}: EKS nodes (CNI permissions come through Pod Identity, not this role)",
            tags=named_tags(tags, f"{cluster_name}-node-role"),
            opts=child(self),
        )
        node_policies = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{short}", role=self.node_role.name, policy_arn=managed_policy(policy), opts=child(self)
            )
            for short, policy in _NODE_POLICIES.items()
        ]
        # Self-managed Auto Scaling groups launch through an instance profile; managed node groups make their own.
        self.node_instance_profile = aws.iam.InstanceProfile(
            f"{name}-node-profile",
            role=self.node_role.name,
            tags=named_tags(tags, f"{cluster_name}-node-profile"),
            opts=child(self),
        )
        self.node_role_arn = self.node_role.arn
        self.node_role_name = self.node_role.name

        # The vpc-cni add-on gets AmazonEKS_CNI_Policy through Pod Identity, so pods on a node never inherit
        # ENI-management rights from the node role.
        self.cni_role = pod_identity_role(
            f"{name}-vpc-cni-role",
            description=f"{cluster_name}: vpc-cni (aws-node) through EKS Pod Identity",
            tags=named_tags(tags, f"{cluster_name}-vpc-cni-role"),
            opts=child(self),
        )
        cni_policy = aws.iam.RolePolicyAttachment(
            f"{name}-vpc-cni-policy",
            role=self.cni_role.name,
            policy_arn=managed_policy("AmazonEKS_CNI_Policy"),
            opts=child(self),
        )
        return node_policies, cni_policy

    def _node_security_group(
        self, b: _Build, vpc_id: pulumi.Input[str], vpc_cidr: pulumi.Input[str], pod_cidr: str | None
    ) -> None:
        """The node security group and its rules."""
        name, tags, cluster_name = b.name, b.tags, b.cluster_name
        # --- node security group ---
        self.node_security_group = aws.ec2.SecurityGroup(
            f"{name}-node-sg",
            vpc_id=vpc_id,
            description=f"{cluster_name}: nodes (attached with the EKS cluster security group)",
            tags={
                **named_tags(tags, f"{cluster_name}-node"),
                f"kubernetes.io/cluster/{cluster_name}": "owned",
                "karpenter.sh/discovery": cluster_name,
            },
            opts=child(self),
        )
        node_sg = self.node_security_group.id
        self._rule(
            "in",
            f"{name}-node-self-in",
            node_sg,
            "-1",
            referenced=node_sg,
            description="Node to node and pod to pod, all protocols",
        )
        self._rule(
            "in",
            f"{name}-node-from-cluster-in",
            node_sg,
            "-1",
            referenced=self.cluster_security_group_id,
            description="Control plane to kubelet and admission webhooks on pods",
        )
        self._rule(
            "in",
            f"{name}-cluster-from-node-in",
            self.cluster_security_group_id,
            "tcp",
            443,
            referenced=node_sg,
            description="Nodes that carry only the node SG reach the API server",
        )
        self._rule(
            "out",
            f"{name}-node-https-out",
            node_sg,
            "tcp",
            443,
            cidr="0.0.0.0/0",
            description="Image registries and AWS APIs through NAT or endpoints",
        )
        self._rule(
            "out",
            f"{name}-node-vpc-out",
            node_sg,
            "-1",
            cidr=vpc_cidr,
            description="Pods, DNS, kubelet, endpoints and FSx inside the VPC",
        )
        if pod_cidr is not None:
            self._rule(
                "out",
                f"{name}-node-pods-out",
                node_sg,
                "-1",
                cidr=pod_cidr,
                description="Pods on custom networking (the VPC's secondary pod CIDR)",
            )
        self.node_security_group_id = node_sg

    def _node_addons(
        self, b: _Build, cni_policy: aws.iam.RolePolicyAttachment, pod_subnets: Mapping[str, pulumi.Input[str]]
    ) -> None:
        """The EKS add-ons a node needs to become Ready."""
        name, spec, tags = b.name, b.spec, b.tags
        # --- add-ons a node needs to become Ready ---
        self.addons: dict[str, aws.eks.Addon] = {}
        for addon in _BEFORE_NODES:
            extra: dict[str, Any] = {}
            depends: list[pulumi.Resource] = []
            if addon == "vpc-cni":
                extra["pod_identity_associations"] = [
                    aws.eks.AddonPodIdentityAssociationArgs(role_arn=self.cni_role.arn, service_account="aws-node")
                ]
                # EKS wants the Pod Identity agent in place before an add-on's association is used.
                depends = [cni_policy, self.addons["eks-pod-identity-agent"]]
                if pod_subnets:
                    # Custom networking: pod ENIs go to the ENIConfig named after the node's zone label
                    # (EKS user guide, "Deploy pods in alternate subnets with custom networking").
                    extra["configuration_values"] = json.dumps(
                        {
                            "env": {
                                "AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG": "true",
                                "ENI_CONFIG_LABEL_DEF": "topology.kubernetes.io/zone",
                            }
                        }
                    )
            self.addons[addon] = self._addon(name, addon, spec, tags, depends, **extra)

    def _kubernetes_access(self, b: _Build, pod_subnets: Mapping[str, pulumi.Input[str]]) -> None:
        """The kubeconfig, the Kubernetes provider and the ENIConfigs of custom networking."""
        name, region, cluster_name = b.name, b.region, b.cluster_name
        node_sg = self.node_security_group_id
        # --- Kubernetes access ---
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.name, self.endpoint, self.certificate_authority).apply(
                lambda a: kubeconfig_json(a[0] or cluster_name, a[1] or "", a[2] or "", region)
            )
        )
        self.k8s_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=child(self, depends_on=[*self.admin_access_entries]),
        )
        self.eni_configs = self._eni_configs(name, pod_subnets, node_sg)

    def _eni_configs(
        self, name: str, pod_subnets: Mapping[str, pulumi.Input[str]], node_sg: pulumi.Input[str]
    ) -> list[k8s.apiextensions.CustomResource]:
        """One ENIConfig per AZ, named after the zone (ENI_CONFIG_LABEL_DEF), placing pod ENIs in the pod subnet.

        Pod ENIs carry the cluster and node security groups, the groups the node's own ENI has, so every rule
        written for nodes applies to pods too.
        """
        configs = []
        for az, subnet_id in pod_subnets.items():
            configs.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-eniconfig-{az}",
                    api_version="crd.k8s.amazonaws.com/v1alpha1",
                    kind="ENIConfig",
                    metadata={"name": az},
                    spec={"subnet": subnet_id, "securityGroups": [self.cluster_security_group_id, node_sg]},
                    # The ENIConfig CRD ships with the vpc-cni add-on.
                    opts=child(self, provider=self.k8s_provider, depends_on=[self.addons["vpc-cni"]]),
                )
            )
        return configs

    def _rule(
        self,
        direction: Literal["in", "out"],
        resource_name: str,
        security_group_id: pulumi.Input[str],
        protocol: str,
        port: int | None = None,
        *,
        description: str,
        referenced: pulumi.Input[str] | None = None,
        cidr: pulumi.Input[str] | None = None,
    ) -> None:
        cls = aws.vpc.SecurityGroupIngressRule if direction == "in" else aws.vpc.SecurityGroupEgressRule
        cls(
            resource_name,
            security_group_id=security_group_id,
            ip_protocol=protocol,
            from_port=port,
            to_port=port,
            referenced_security_group_id=referenced,
            cidr_ipv4=cidr,
            description=description,
            tags=named_tags(self._tags, resource_name),
            opts=child(self),
        )

    def _addon(
        self,
        name: str,
        addon: AddonName,
        spec: ClusterSpec,
        tags: dict[str, str],
        depends_on: list[pulumi.Resource],
        **extra: Any,
    ) -> aws.eks.Addon:
        # Always an exact build (the spec's or the versions table's for the minor): unset, EKS would install its
        # default and the plan could not say which; a version bump would leave the add-ons behind.
        version = spec.addon_version(addon)
        return aws.eks.Addon(
            f"{name}-addon-{addon}",
            cluster_name=self.cluster.name,
            addon_name=addon,
            addon_version=version,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=named_tags(tags, f"{name}-{addon}"),
            opts=child(self, depends_on=depends_on),
            **extra,
        )
