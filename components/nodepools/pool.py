"""GpuNodePool: one pool entry of the stack spec as AWS resources (managed, self-managed or Karpenter backend)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field, InstanceOf

from gpucloud.components.base import ComponentConfig, child, named_tags
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.interruption import NTH_MANAGED_TAG, GpuInterruptionQueue
from gpucloud.components.karpenter import GpuKarpenter
from gpucloud.components.nodepools.ami import AmiChoice, choose_ami
from gpucloud.components.nodepools.capacity import (
    GroupPlan,
)
from gpucloud.components.nodepools.common import (
    GPU_TAINT,
    LABEL_PREFIX,
    NEURON_TAINT,
    ROOT_IOPS,
    ROOT_THROUGHPUT_MBPS,
    _b64,
    _capacity_label,
    _default_service_cidr,
    _LtTarget,
)
from gpucloud.components.nodepools.karpenter_pool import build_karpenter
from gpucloud.components.nodepools.managed import build_managed
from gpucloud.components.nodepools.network import efa_layout
from gpucloud.components.nodepools.self_managed import build_self_managed
from gpucloud.components.nodepools.userdata import ClusterInfo, NodeBootstrap, Taint, render
from gpucloud.spec.pools import NodePoolSpec


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
            build_managed(self)
        elif pool.backend == "self-managed":
            build_self_managed(self)
        else:
            build_karpenter(self)

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
