"""GpuNodePool: one pool entry of the stack spec as AWS resources (managed, self-managed or Karpenter backend)."""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field, InstanceOf

from gpucloud.catalog import InstanceSpec
from gpucloud.components.base import ComponentConfig, child, named_tags
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.interruption import NTH_MANAGED_TAG, GpuInterruptionQueue
from gpucloud.components.karpenter import GpuKarpenter
from gpucloud.components.nodepools.ami import AmiChoice, choose_ami, karpenter_alias
from gpucloud.components.nodepools.capacity import (
    GroupPlan,
    capacity_types,
    managed_groups,
    plan_capacity,
    self_managed_sizes,
)
from gpucloud.components.nodepools.network import efa_layout, karpenter_layout
from gpucloud.components.nodepools.userdata import ClusterInfo, NodeBootstrap, Taint, render
from gpucloud.spec.pools import NodePoolSpec

LABEL_PREFIX = "gpucloud.io"
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
NEURON_TAINT = Taint("aws.amazon.com/neuron", "true", "NoSchedule")
# cluster-autoscaler auto-discovery (`--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,
# k8s.io/cluster-autoscaler/<cluster>`, which the chart's autoDiscovery.clusterName renders) finds ASGs by the
# presence of both keys; the add-on's IAM policy also scopes SetDesiredCapacity to groups carrying them.
CA_TAG_PREFIX = "k8s.io/cluster-autoscaler"
CA_ENABLED_TAG = f"{CA_TAG_PREFIX}/enabled"
CA_NODE_TEMPLATE = f"{CA_TAG_PREFIX}/node-template"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
_LtTarget = aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs
_EKS_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}
# The gp3 baseline; image pulls of multi-GB CUDA images are throughput-bound, so raise it above 125 MB/s.
ROOT_IOPS = 3000
ROOT_THROUGHPUT_MBPS = 250


class GpuNodePoolConfig(ComponentConfig):
    """Inputs of GpuNodePool."""

    environment: str = Field(description="Environment (dev, staging, prod); tags and defaults follow it.")
    pool: NodePoolSpec = Field(description="The validated pool entry of the stack spec.")
    cluster: InstanceOf[ClusterHandle] = Field(description="Cluster, subnets, security groups, node role, KMS key.")
    interruption_queue: InstanceOf[GpuInterruptionQueue] | None = Field(
        default=None,
        description="The platform's interruption queue. Managed/self-managed pools given one are handed to "
        "aws-node-termination-handler (managed tag on instances, termination lifecycle hook on ASGs).",
    )
    karpenter: InstanceOf[GpuKarpenter] | None = Field(
        default=None, description="The cluster's Karpenter install (karpenter backend: CRs wait for it)."
    )
    create_access_entry: bool = Field(
        default=True,
        description="Self-managed backend: create the EC2_LINUX access entry for the node role. Off when another "
        "pool, Karpenter or a managed node group on the same role already owns it.",
    )
    enable_node_repair: bool = Field(default=True, description="Managed backend: EKS node auto-repair.")
    startup_taint: InstanceOf[Taint] | None = Field(
        default=None,
        description="Taint every new node registers with until a DaemonSet removes it (the node health gate). "
        "Karpenter pools list it as a startupTaint; managed and self-managed pools register it with the kubelet.",
    )
    use_efa_only_interfaces: bool = Field(
        default=True, description="EFA cards after the first get `efa-only` interfaces (no IP) where supported."
    )


class GpuNodePool(pulumi.ComponentResource):
    """GPU nodes for one pool: launch templates, node groups / ASG / Karpenter CRs, placement and reservations."""

    def __init__(self, name: str, config: GpuNodePoolConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpucloud:nodepool:GpuNodePool", name, None, opts)
        pool, cluster = config.pool, config.cluster
        if pool.backend == "karpenter" and config.karpenter is None:
            raise ValueError(f"pool '{pool.name}' uses the karpenter backend: pass the cluster's GpuKarpenter")
        self._config = config
        self._name = name
        self.spec0 = pool.specs[0]
        self.azs = list(pool.availability_zones) if pool.availability_zones else list(cluster.subnet_ids_by_az)
        self.subnet_ids = cluster.subnet_ids(self.azs)
        self.ami: AmiChoice = choose_ami(pool, cluster.kubernetes_version)
        self.nth_managed = config.interruption_queue is not None and pool.backend != "karpenter"

        # Outputs (None / {} when the feature or backend is off).
        self.placement_group: aws.ec2.PlacementGroup | None = None
        self.capacity_reservation: aws.ec2.CapacityReservation | None = None
        self.launch_templates: dict[str, aws.ec2.LaunchTemplate] = {}
        self.node_groups: dict[str, aws.eks.NodeGroup] = {}
        self.managed_asg_tags: list[aws.autoscaling.Tag] = []
        self.autoscaling_group: aws.autoscaling.Group | None = None
        self.instance_profile: aws.iam.InstanceProfile | None = None
        self.access_entry: aws.eks.AccessEntry | None = None
        self.node_class: k8s.apiextensions.CustomResource | None = None
        self.karpenter_node_pool: k8s.apiextensions.CustomResource | None = None

        if pool.efa.enabled and pool.efa.placement_group:
            self.placement_group = aws.ec2.PlacementGroup(
                f"{name}-placement",
                strategy="cluster",
                tags=named_tags(config.tags, f"{name}-placement"),
                opts=child(self),
            )
        reserved = pool.capacity.reserved
        if reserved is not None and reserved.create:
            self.capacity_reservation = aws.ec2.CapacityReservation(
                f"{name}-reservation",
                instance_type=pool.instance_types[0],
                instance_platform="Linux/UNIX",
                availability_zone=self.azs[0],
                instance_count=reserved.count,
                # Targeted: only this pool's launch templates consume it, nothing else in the account.
                instance_match_criteria="targeted",
                end_date_type="unlimited",
                # Reserving inside the pool's placement group is what keeps the two from fighting (ICE).
                placement_group_arn=self.placement_group.arn if self.placement_group else None,
                tags=named_tags(config.tags, f"{name}-reservation"),
                opts=child(self),
            )

        if pool.backend == "managed":
            self._managed()
        elif pool.backend == "self-managed":
            self._self_managed()
        else:
            self._karpenter()

        self.node_group_names = {role: ng.node_group_name for role, ng in self.node_groups.items()}
        self.autoscaling_group_name = self.autoscaling_group.name if self.autoscaling_group else None
        self.placement_group_name = self.placement_group.name if self.placement_group else None
        self.capacity_reservation_id = self.capacity_reservation.id if self.capacity_reservation else None
        self.karpenter_node_pool_name = pool.name if self.karpenter_node_pool else None
        self.register_outputs(
            {
                "node_group_names": self.node_group_names,
                "autoscaling_group_name": self.autoscaling_group_name,
                "placement_group_name": self.placement_group_name,
                "capacity_reservation_id": self.capacity_reservation_id,
                "karpenter_node_pool_name": self.karpenter_node_pool_name,
                "launch_template_ids": {role: lt.id for role, lt in self.launch_templates.items()},
            }
        )

    # --- shared pieces ---------------------------------------------------------------------------------------

    @property
    def taint(self) -> Taint:
        return GPU_TAINT if self.spec0.is_gpu else NEURON_TAINT

    def labels(self, capacity_label: str | None) -> dict[str, str]:
        pool = self._config.pool
        labels = {
            f"{LABEL_PREFIX}/pool": pool.name,
            f"{LABEL_PREFIX}/workload": pool.workload,
            f"{LABEL_PREFIX}/accelerator": self.spec0.accelerator.lower(),
        }
        if capacity_label:
            labels[f"{LABEL_PREFIX}/capacity-type"] = capacity_label
        return {**labels, **pool.labels}

    @property
    def registered_taints(self) -> tuple[Taint, ...]:
        """Taints the kubelet registers the node with: the accelerator taint, then the startup taint if any."""
        startup = self._config.startup_taint
        return (self.taint,) if startup is None else (self.taint, startup)

    @property
    def raid0(self) -> bool:
        return all(s.has_instance_store for s in self._config.pool.specs)

    def _cluster_info(self) -> pulumi.Output[ClusterInfo]:
        c = self._config.cluster
        service_cidr: Any = c.extra.get("service_ipv4_cidr") or pulumi.Output.from_input(c.vpc_cidr).apply(
            _default_service_cidr
        )
        return pulumi.Output.all(c.name, c.endpoint, c.certificate_authority, service_cidr).apply(
            lambda a: ClusterInfo(name=a[0], endpoint=a[1], certificate_authority=a[2], service_cidr=a[3])
        )

    def _user_data(self, full: bool, capacity_label: str | None) -> pulumi.Output[str | None]:
        """Base64 user data. `full` renders the join settings, labels and taints (self-managed, custom AMI);
        otherwise only the extras EKS merges into its own bootstrap."""
        family, raid0 = self.ami.family, self.raid0
        if not full:
            text = render(family, NodeBootstrap(raid0=raid0))
            return pulumi.Output.from_input(_b64(text) if text else None)
        labels = self.labels(capacity_label)
        taints = self.registered_taints
        return self._cluster_info().apply(
            lambda info: _b64(render(family, NodeBootstrap(cluster=info, labels=labels, taints=taints, raid0=raid0)))
        )

    def _ssm(self, parameter: str) -> pulumi.Output[str]:
        return aws.ssm.get_parameter_output(name=parameter).value

    def _tag_specs(self, name: str) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
        tags = self._config.tags
        instance_tags = named_tags(tags, name)
        if self.nth_managed:
            instance_tags[NTH_MANAGED_TAG] = "true"
        return [
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="instance", tags=instance_tags),
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="volume", tags=named_tags(tags, name)),
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="network-interface", tags=named_tags(tags, name)),
        ]

    def _block_devices(self) -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgs]:
        kms = self._config.cluster.kms_key_arn

        def ebs(size: int) -> aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs:
            return aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                volume_size=size,
                volume_type="gp3",
                iops=ROOT_IOPS,
                throughput=ROOT_THROUGHPUT_MBPS,
                encrypted="true",
                kms_key_id=kms,
                delete_on_termination="true",
            )

        size = self._config.pool.root_volume_gib
        if self.ami.family == "bottlerocket":
            # Bottlerocket boots from a small OS volume; images and pods live on the data volume.
            return [
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(device_name="/dev/xvda", ebs=ebs(4)),
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(device_name="/dev/xvdb", ebs=ebs(size)),
            ]
        return [aws.ec2.LaunchTemplateBlockDeviceMappingArgs(device_name="/dev/xvda", ebs=ebs(size))]

    def _network(self) -> dict[str, Any]:
        c, pool = self._config.cluster, self._config.pool
        if not pool.efa.enabled:
            return {"vpc_security_group_ids": [c.node_security_group_id]}
        layout = efa_layout(self.spec0, efa_only=self._config.use_efa_only_interfaces)
        return {
            "network_interfaces": [
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                    network_card_index=int(str(i["networkCardIndex"])),
                    device_index=int(str(i["deviceIndex"])),
                    interface_type=str(i["interfaceType"]),
                    security_groups=[c.node_security_group_id, c.efa_security_group_id],
                    # A string in the provider; EC2 rejects associatePublicIpAddress (even "false") with
                    # several interfaces, so no public IP comes from the private subnets instead.
                    delete_on_termination="true",
                )
                for i in layout
            ]
        }

    def _reservation_target(self) -> Any:
        reserved = self._config.pool.capacity.reserved
        assert reserved is not None
        if self.capacity_reservation is not None:
            return _LtTarget(capacity_reservation_id=self.capacity_reservation.id)
        if reserved.resource_group_arn:
            return _LtTarget(capacity_reservation_resource_group_arn=reserved.resource_group_arn)
        return _LtTarget(capacity_reservation_id=reserved.capacity_reservation_ids[0])

    def _launch_template(self, role: str, *, group: GroupPlan | None, self_managed: bool) -> aws.ec2.LaunchTemplate:
        pool, name = self._config.pool, f"{self._name}-{role}-lt" if role else f"{self._name}-lt"
        reserved = pool.capacity.reserved
        capacity_block = group is not None and group.capacity_type == "CAPACITY_BLOCK"
        full_bootstrap = self_managed or self.ami.needs_full_bootstrap
        capacity_label = _capacity_label(pool, group)
        image_id: Any = None
        if self.ami.explicit_id:
            image_id = self.ami.explicit_id
        elif self_managed:
            image_id = self._ssm(self.ami.image_parameter)
        reservation_spec = None
        if group is not None and group.targets_reservation and reserved is not None:
            reservation_spec = aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                # Capacity Blocks take the target alone (EKS user guide); an ODCR adds the preference only when
                # nodes must not fall back to plain on-demand.
                capacity_reservation_preference="capacity-reservations-only"
                if reserved.preference == "capacity-reservations-only" and not capacity_block
                else None,
                capacity_reservation_target=self._reservation_target(),
            )
        lt = aws.ec2.LaunchTemplate(
            name,
            description=f"GPU pool {pool.name} ({role or 'all capacity types'})",
            update_default_version=True,
            image_id=image_id,
            # Capacity Block groups take the type from the launch template, never from the node group.
            instance_type=pool.instance_types[0] if capacity_block else None,
            instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
            if capacity_block
            else None,
            capacity_reservation_specification=reservation_spec,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=self.instance_profile.arn)
            if self_managed and self.instance_profile is not None
            else None,
            user_data=self._user_data(full_bootstrap, capacity_label),
            # Hop limit 1 keeps pods (one hop further away, in their own network namespace) from reading the
            # node role's credentials off IMDS; pods get AWS access through Pod Identity instead.
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1
            ),
            block_device_mappings=self._block_devices(),
            placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group.name)
            if self.placement_group is not None
            else None,
            tag_specifications=self._tag_specs(f"{self._name}-node"),
            tags=named_tags(self._config.tags, name),
            opts=child(self),
            **self._network(),
        )
        self.launch_templates[role or "all"] = lt
        return lt

    # --- managed ----------------------------------------------------------------------------------------------

    def _managed(self) -> None:
        pool, cluster, config = self._config.pool, self._config.cluster, self._config
        release = None if self.ami.explicit_id else self.ami.release
        for group in managed_groups(pool):
            lt = self._launch_template(group.role, group=group, self_managed=False)
            capacity_block = group.capacity_type == "CAPACITY_BLOCK"
            labels = None if self.ami.needs_full_bootstrap else self.labels(_capacity_label(pool, group))
            taints = (
                None
                if self.ami.needs_full_bootstrap
                else [
                    aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=_EKS_EFFECT[t.effect])
                    for t in self.registered_taints
                ]
            )
            self.node_groups[group.role] = aws.eks.NodeGroup(
                f"{self._name}-{group.role}",
                cluster_name=cluster.name,
                node_role_arn=cluster.node_role_arn,
                subnet_ids=self.subnet_ids,
                capacity_type=group.capacity_type,
                instance_types=None if capacity_block else list(pool.instance_types),
                ami_type=self.ami.ami_type,
                # Pinned kubelet minor and AMI release: both change only with the spec (upgrade steps).
                version=None if self.ami.explicit_id else self.ami.kubernetes_version,
                release_version=release,
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=lt.id, version=lt.latest_version.apply(_version)
                ),
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=group.sizes.min, desired_size=group.sizes.desired, max_size=group.sizes.max
                ),
                # One GPU node at a time: a rolling update never takes out more than one job's worth of GPUs.
                # Capacity Blocks and targeted ODCRs hold no spare instance to surge into: MINIMAL (pulumi-aws 7.51)
                # terminates a node before launching its replacement instead of failing to surge.
                update_config=aws.eks.NodeGroupUpdateConfigArgs(
                    max_unavailable=1,
                    update_strategy="MINIMAL" if capacity_block or group.targets_reservation else None,
                ),
                labels=labels,
                taints=taints,
                node_repair_config=aws.eks.NodeGroupNodeRepairConfigArgs(enabled=config.enable_node_repair),
                tags=named_tags(config.tags, f"{self._name}-{group.role}"),
                # Cluster autoscalers own desiredSize after creation.
                opts=child(self, ignore_changes=["scalingConfig.desiredSize"]),
            )
            self._managed_group_template_tags(group, self.node_groups[group.role])

    def _managed_group_template_tags(self, group: GroupPlan, node_group: aws.eks.NodeGroup) -> None:
        """Scale-from-zero hints EKS does not give cluster-autoscaler for a managed node group.

        EKS tags a managed group's ASG with the two auto-discovery keys itself, and CA (1.24+, the
        `eks:DescribeNodegroup` call in its AWS provider) reads the group's labels and taints from the EKS API
        when the group is at zero. Two things stay invisible: labels and taints that only the user data sets
        (custom AMIs, where the node group carries none), and extended resources CA cannot infer from the
        instance type (EFA). Those go on the group's ASG as tags (tags on the node group itself never reach it).
        """
        pool = self._config.pool
        tags = autoscaler_node_template_tags(
            self.labels(_capacity_label(pool, group)), self.taint, self.spec0, efa=pool.efa.enabled
        )
        wanted = {
            k: v
            for k, v in tags.items()
            if (self.ami.needs_full_bootstrap and "/resources/" not in k)
            or ("/resources/" in k and not k.endswith("/resources/nvidia.com/gpu"))
        }
        if not wanted:
            return
        asg_name = node_group.resources.apply(_first_asg_name)
        for i, (key, value) in enumerate(sorted(wanted.items())):
            self.managed_asg_tags.append(
                aws.autoscaling.Tag(
                    f"{self._name}-{group.role}-ca-{i}",
                    autoscaling_group_name=asg_name,
                    tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                    opts=child(self),
                )
            )

    # --- self-managed -----------------------------------------------------------------------------------------

    def _self_managed(self) -> None:
        pool, cluster, config = self._config.pool, self._config.cluster, self._config
        self.instance_profile = aws.iam.InstanceProfile(
            f"{self._name}-profile", role=cluster.node_role_name, tags=config.tags, opts=child(self)
        )
        if config.create_access_entry:
            self.access_entry = aws.eks.AccessEntry(
                f"{self._name}-node-access",
                cluster_name=cluster.name,
                principal_arn=cluster.node_role_arn,
                type="EC2_LINUX",
                tags=config.tags,
                opts=child(self),
            )
        reserved = pool.capacity.reserved
        # One launch template for every capacity type, so reservations are targeted at the ASG level below.
        lt = self._launch_template("", group=None, self_managed=True)
        plan = plan_capacity(pool)
        c = pool.capacity
        tags = [
            aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
            for k, v in named_tags(config.tags, f"{self._name}-node").items()
        ]
        tags.append(
            aws.autoscaling.GroupTagArgs(
                key=pulumi.Output.from_input(cluster.name).apply(lambda n: f"kubernetes.io/cluster/{n}"),
                value="owned",
                propagate_at_launch=True,
            )
        )
        # Discovery and scale-from-zero hints for cluster-autoscaler; they describe the group, not its instances.
        tags += [
            aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False)
            for k, v in autoscaler_node_template_tags(
                self.labels(_capacity_label(pool, None)), self.taint, self.spec0, efa=pool.efa.enabled
            ).items()
        ]
        tags += [
            aws.autoscaling.GroupTagArgs(key=CA_ENABLED_TAG, value="true", propagate_at_launch=False),
            aws.autoscaling.GroupTagArgs(
                key=pulumi.Output.from_input(cluster.name).apply(ca_cluster_tag),
                value="owned",
                propagate_at_launch=False,
            ),
        ]
        hooks = None
        if self.nth_managed:
            tags.append(aws.autoscaling.GroupTagArgs(key=NTH_MANAGED_TAG, value="true", propagate_at_launch=True))
            # NTH drains on the termination hook (scale-in, capacity rebalance) and then completes it.
            hooks = [
                aws.autoscaling.GroupInitialLifecycleHookArgs(
                    name="gpucloud-drain",
                    lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
                    default_result="CONTINUE",
                    heartbeat_timeout=300,
                )
            ]
        reservation = None
        if reserved is not None:
            target = aws.autoscaling.GroupCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_ids=[self.capacity_reservation.id]
                if self.capacity_reservation is not None
                else (list(reserved.capacity_reservation_ids) or None),
                capacity_reservation_resource_group_arns=[reserved.resource_group_arn]
                if reserved.resource_group_arn
                else None,
            )
            reservation = aws.autoscaling.GroupCapacityReservationSpecificationArgs(
                capacity_reservation_preference="capacity-reservations-only"
                if reserved.preference == "capacity-reservations-only"
                else "capacity-reservations-first",
                capacity_reservation_target=target,
            )
        sizes = self_managed_sizes(pool)
        self.autoscaling_group = aws.autoscaling.Group(
            f"{self._name}-asg",
            min_size=sizes.min,
            max_size=sizes.max,
            desired_capacity=sizes.desired,
            vpc_zone_identifiers=self.subnet_ids,
            capacity_rebalance=plan.max.spot > 0,
            mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
                instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                    on_demand_allocation_strategy="prioritized",
                    # Reserved nodes are on-demand nodes that land in the reservation, so they count in the base.
                    on_demand_base_capacity=pool.reserved_count + c.on_demand_base,
                    on_demand_percentage_above_base_capacity=c.on_demand_percentage_above_base,
                    spot_allocation_strategy=c.spot_allocation_strategy,
                ),
                launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                    launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                        launch_template_id=lt.id, version=lt.latest_version.apply(_version)
                    ),
                    overrides=[
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=t)
                        for t in pool.instance_types
                    ],
                ),
            ),
            capacity_reservation_specification=reservation,
            initial_lifecycle_hooks=hooks,
            health_check_type="EC2",
            tags=tags,
            opts=child(self, ignore_changes=["desiredCapacity"]),
        )

    # --- karpenter --------------------------------------------------------------------------------------------

    def _karpenter(self) -> None:
        pool, cluster, config = self._config.pool, self._config.cluster, self._config
        assert config.karpenter is not None
        opts = child(self, provider=cluster.k8s_provider, depends_on=[config.karpenter.release])
        reserved = pool.capacity.reserved
        ami_terms: Any
        if self.ami.explicit_id:
            ami_terms = [{"id": self.ami.explicit_id}]
        else:
            ami_terms = [{"alias": karpenter_alias(self.ami.family, self.ami.release)}]
        spec: dict[str, Any] = {
            "role": cluster.node_role_name,
            "amiSelectorTerms": ami_terms,
            "subnetSelectorTerms": [{"id": s} for s in self.subnet_ids],
            "securityGroupSelectorTerms": [{"id": cluster.node_security_group_id}]
            + ([{"id": cluster.efa_security_group_id}] if pool.efa.enabled else []),
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvdb" if self.ami.family == "bottlerocket" else "/dev/xvda",
                    "ebs": {
                        "volumeSize": f"{pool.root_volume_gib}Gi",
                        "volumeType": "gp3",
                        "iops": ROOT_IOPS,
                        "throughput": ROOT_THROUGHPUT_MBPS,
                        "encrypted": True,
                        "kmsKeyID": cluster.kms_key_arn,
                        "deleteOnTermination": True,
                    },
                }
            ],
            "associatePublicIPAddress": False,
            "tags": named_tags(config.tags, f"{self._name}-node"),
        }
        if self.ami.explicit_id:
            spec["amiFamily"] = "Bottlerocket" if self.ami.family == "bottlerocket" else "AL2023"
        if self.raid0:
            spec["instanceStorePolicy"] = "RAID0"
        if reserved is not None:
            ids: list[Any] = (
                [self.capacity_reservation.id]
                if self.capacity_reservation is not None
                else list(reserved.capacity_reservation_ids)
            )
            spec["capacityReservationSelectorTerms"] = [{"id": i} for i in ids]
        if self.placement_group is not None:
            spec["placementGroupSelector"] = {"name": self.placement_group.name}
        if pool.efa.enabled:
            interfaces = karpenter_layout(self.spec0)
            if interfaces:
                spec["networkInterfaces"] = interfaces
        self.node_class = k8s.apiextensions.CustomResource(
            f"{self._name}-nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": pool.name, "labels": {f"{LABEL_PREFIX}/pool": pool.name}},
            spec=spec,
            opts=opts,
        )
        self.karpenter_node_pool = k8s.apiextensions.CustomResource(
            f"{self._name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={
                "name": pool.name,
                "labels": {f"{LABEL_PREFIX}/pool": pool.name},
                # Karpenter has no desired size; the cost engine reads the expected node count from here.
                "annotations": {f"{LABEL_PREFIX}/expected-nodes": str(pool.desired_size)},
            },
            spec=karpenter_node_pool_spec(
                pool, self.azs, self.labels(None), self.taint, startup_taint=self._config.startup_taint
            ),
            opts=child(self, provider=cluster.k8s_provider, depends_on=[config.karpenter.release, self.node_class]),
        )


def karpenter_node_pool_spec(
    pool: NodePoolSpec, azs: list[str], labels: dict[str, str], taint: Taint, startup_taint: Taint | None = None
) -> dict[str, Any]:
    """NodePool spec: capacity types from the mix, GPU limit from maxSize, disruption tuned per workload."""
    k = pool.karpenter
    training = pool.workload in ("training", "hpc")
    policy = k.consolidation_policy or ("WhenEmpty" if training else "WhenEmptyOrUnderutilized")
    spec0 = pool.specs[0]
    resource = "nvidia.com/gpu" if spec0.is_gpu else "aws.amazon.com/neuron"
    budgets: list[dict[str, Any]] = [{"nodes": k.disruption_budget_nodes}]
    if training:
        # Drift (a new AMI, a changed node class) must not pull nodes out from under a running job;
        # training nodes pick up changes when they expire or empty out.
        budgets.append({"nodes": "0", "reasons": ["Drifted"]})
    return {
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity_types(pool)},
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(pool.instance_types)},
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(azs)},
                ],
                "taints": [{"key": taint.key, "value": taint.value, "effect": taint.effect}],
                # Karpenter expects startup taints to be removed by a DaemonSet and does not count them against
                # scheduling (karpenter.sh/v1 NodePool spec.template.spec.startupTaints).
                **(
                    {
                        "startupTaints": [
                            {"key": startup_taint.key, "value": startup_taint.value, "effect": startup_taint.effect}
                        ]
                    }
                    if startup_taint is not None
                    else {}
                ),
                "expireAfter": k.expire_after,
                "terminationGracePeriod": k.termination_grace_period,
            },
        },
        # Every type in a pool has the same accelerator count, so this caps the pool at exactly maxSize nodes.
        "limits": {resource: str(pool.max_size * spec0.accelerator_count)},
        "disruption": {"consolidationPolicy": policy, "consolidateAfter": k.consolidate_after, "budgets": budgets},
    }


def ca_cluster_tag(cluster_name: str) -> str:
    return f"{CA_TAG_PREFIX}/{cluster_name}"


def autoscaler_node_template_tags(
    labels: dict[str, str], taint: Taint, spec: InstanceSpec, *, efa: bool
) -> dict[str, str]:
    """cluster-autoscaler's node-template ASG tags: what a node of an empty group would look like.

    Format from the cluster-autoscaler AWS provider README (kubernetes/autoscaler,
    cluster-autoscaler/cloudprovider/aws/README.md, "Auto-Discovery Setup"):
    `k8s.io/cluster-autoscaler/node-template/label/<name>` = value, `.../taint/<key>` = `<value>:<Effect>`,
    `.../resources/<resource>` = quantity. Without them an ASG at 0 nodes looks like a plain, untainted
    instance type to CA, so pods selecting the pool label or tolerating the GPU taint never trigger a scale-up,
    and extended resources CA cannot infer from the instance type (EFA) never fit.
    """
    tags = {f"{CA_NODE_TEMPLATE}/label/{k}": v for k, v in labels.items()}
    tags[f"{CA_NODE_TEMPLATE}/taint/{taint.key}"] = f"{taint.value}:{taint.effect}"
    resource = "nvidia.com/gpu" if spec.is_gpu else "aws.amazon.com/neuron"
    tags[f"{CA_NODE_TEMPLATE}/resources/{resource}"] = str(spec.accelerator_count)
    if efa and spec.efa_interfaces:
        tags[f"{CA_NODE_TEMPLATE}/resources/{EFA_RESOURCE}"] = str(spec.efa_interfaces)
    return tags


def _capacity_label(pool: NodePoolSpec, group: GroupPlan | None) -> str:
    if group is not None:
        return {"CAPACITY_BLOCK": "capacity-block", "SPOT": "spot"}.get(
            group.capacity_type, "reserved" if group.role == "reserved" else "on-demand"
        )
    kinds = capacity_types(pool)
    # A mixed ASG launches on-demand and spot from one launch template, so the label cannot be static.
    return kinds[0] if len(kinds) == 1 else "mixed"


def _default_service_cidr(vpc_cidr: str) -> str:
    # What EKS picks when the cluster sets no service CIDR: 172.20.0.0/16 if the VPC is in 10.0.0.0/8.
    if vpc_cidr and ipaddress.IPv4Network(vpc_cidr).subnet_of(ipaddress.IPv4Network("10.0.0.0/8")):
        return "172.20.0.0/16"
    return "10.100.0.0/16"


def _first_asg_name(resources: Any) -> Any:
    # Known only after EKS creates the group; under preview it stays unknown, as the provider reports it.
    for r in resources or []:
        groups = r.get("autoscaling_groups") if isinstance(r, dict) else getattr(r, "autoscaling_groups", None)
        for g in groups or []:
            name = g.get("name") if isinstance(g, dict) else getattr(g, "name", None)
            if name:
                return name
    return None


def _version(v: Any) -> Any:
    # Under update-mode mocks the computed version is None; keep it absent rather than the string "None".
    return None if v is None else str(v)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
