"""FSx for Lustre next to the GPUs: one file system in the AZ of the pool it feeds, its security group (Lustre
ports from the node security groups only), CloudWatch logging, and data repository associations to S3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import pulumi
import pulumi_aws as aws
from pydantic import Field

from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.storage._common import data_options, slug
from gpucloud.spec.storage import FsxSpec

# Lustre: 988 for the servers, 1018-1023 for LNet connections clients open (FSx Lustre guide, security groups).
LUSTRE_PORTS: tuple[tuple[int, int, str], ...] = ((988, 988, "Lustre"), (1018, 1023, "Lustre LNet"))
FSX_S3_SERVICE_ROLE_PATH = "aws-service-role/s3.data-source.lustre.fsx.amazonaws.com"
# What FSx's per-file-system S3 role needs on the buckets' KMS key to import and export objects.
FSX_S3_KEY_OPERATIONS = ["Decrypt", "DescribeKey", "Encrypt", "GenerateDataKey", "ReEncryptFrom", "ReEncryptTo"]


class LustreConfig(ComponentConfig):
    """Inputs of LustreStorage."""

    RENAMED: ClassVar[dict[str, str]] = {"encrypt_logs": "enable_log_encryption"}

    name_prefix: str = Field(description="Platform name, used in descriptions and the log group name.")
    fsx: FsxSpec = Field(description="File system settings from the stack spec.")
    availability_zone: str = Field(description="AZ of the file system: the AZ of the GPU pool it feeds.")
    allow_data_deletion: bool = Field(default=False, description="Let destroy delete the file system.")
    protect: bool = Field(default=False, description="Also protect the file system and its links (prod).")
    enable_log_encryption: bool = Field(
        default=False, description="Encrypt the log group with the storage key (its key policy must allow Logs)."
    )


class LustreStorage(pulumi.ComponentResource):
    """An FSx for Lustre file system, reachable from the cluster's nodes only, linked to S3."""

    def __init__(
        self,
        name: str,
        config: LustreConfig,
        cluster: ClusterHandle,
        *,
        kms_key_arn: pulumi.Input[str] | None = None,
        buckets: Mapping[str, tuple[pulumi.Input[str], pulumi.Input[str]]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`buckets` maps 'dataset'/'checkpoint' to (bucket name, bucket ARN) for the data repository links."""
        super().__init__("gpucloud:storage:LustreStorage", name, None, opts)
        spec = config.fsx
        buckets = dict(buckets or {})
        missing = sorted({a.bucket for a in spec.data_repository_associations} - set(buckets))
        if missing:
            raise ValueError(f"{name}: data repository associations name buckets {missing} that were not given")
        if spec.kms_encrypted and kms_key_arn is None:
            raise ValueError(f"{name}: {spec.deployment_type} with KMS encryption needs kms_key_arn")
        keep = not config.allow_data_deletion

        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=cluster.vpc_id,
            description=f"{config.name_prefix} FSx for Lustre: Lustre traffic from cluster nodes only",
            tags={**config.tags, "Name": f"{name}-sg"},
            opts=child(self),
        )
        sg_id = self.security_group.id
        clients: list[tuple[str, pulumi.Input[str]]] = [("nodes", cluster.node_security_group_id)]
        if cluster.efa_security_group_id and cluster.efa_security_group_id != cluster.node_security_group_id:
            clients.append(("efa-nodes", cluster.efa_security_group_id))
        self.ingress_rules: list[aws.vpc.SecurityGroupIngressRule] = []
        self.egress_rules: list[aws.vpc.SecurityGroupEgressRule] = []
        for peer, peer_sg in [("self", sg_id), *clients]:
            for low, high, what in LUSTRE_PORTS:
                ports = f"{low}" if low == high else f"{low}-{high}"
                self.ingress_rules.append(
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-in-{ports}-{peer}",
                        security_group_id=sg_id,
                        referenced_security_group_id=peer_sg,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"{what} ({ports}) from {peer}",
                        tags=config.tags,
                        opts=child(self),
                    )
                )
                self.egress_rules.append(
                    aws.vpc.SecurityGroupEgressRule(
                        f"{name}-out-{ports}-{peer}",
                        security_group_id=sg_id,
                        referenced_security_group_id=peer_sg,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"{what} ({ports}) to {peer}",
                        tags=config.tags,
                        opts=child(self),
                    )
                )
        # Lustre servers also connect back to clients, so the node groups need the same ports from the file system.
        self.client_rules: list[aws.vpc.SecurityGroupIngressRule] = []
        for peer, peer_sg in clients:
            for low, high, what in LUSTRE_PORTS:
                ports = f"{low}" if low == high else f"{low}-{high}"
                self.client_rules.append(
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-{peer}-in-{ports}",
                        security_group_id=peer_sg,
                        referenced_security_group_id=sg_id,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"{what} ({ports}) from FSx {config.name_prefix}",
                        tags=config.tags,
                        opts=child(self),
                    )
                )

        self.log_group: aws.cloudwatch.LogGroup | None = None
        log_config = aws.fsx.LustreFileSystemLogConfigurationArgs(level="DISABLED")
        if spec.log_level != "DISABLED":
            self.log_group = aws.cloudwatch.LogGroup(
                f"{name}-logs",
                # FSx writes only to log groups under /aws/fsx.
                name=f"/aws/fsx/lustre/{name}",
                retention_in_days=spec.log_retention_days,
                kms_key_id=kms_key_arn if config.enable_log_encryption else None,
                tags=config.tags,
                opts=child(self),
            )
            log_config = aws.fsx.LustreFileSystemLogConfigurationArgs(
                level=spec.log_level, destination=self.log_group.arn
            )

        persistent = not spec.is_scratch
        self.file_system = aws.fsx.LustreFileSystem(
            f"{name}-fs",
            # One subnet: FSx for Lustre lives in a single AZ, the one of the GPU pool it feeds.
            subnet_ids=cluster.subnet_ids([config.availability_zone])[0],
            security_group_ids=[sg_id],
            deployment_type=spec.deployment_type,
            storage_type="SSD",
            storage_capacity=spec.storage_capacity_gib,
            per_unit_storage_throughput=spec.per_unit_storage_throughput,
            data_compression_type=spec.data_compression,
            file_system_type_version=spec.lustre_version,
            kms_key_id=kms_key_arn if spec.kms_encrypted else None,
            automatic_backup_retention_days=spec.backup_retention_days if persistent else None,
            daily_automatic_backup_start_time=spec.daily_backup_start_time if persistent else None,
            copy_tags_to_backups=True if persistent else None,
            # A final backup only matters when deletion is possible at all; with allowDataDeletion the user asked
            # for the data to go.
            skip_final_backup=config.allow_data_deletion if persistent else None,
            weekly_maintenance_start_time=spec.weekly_maintenance_start_time,
            log_configuration=log_config,
            tags={**config.tags, "Name": f"{name}-fs"},
            opts=data_options(self, keep=keep, protect=config.protect),
        )
        fs_id = self.file_system.id

        self.associations: list[aws.fsx.DataRepositoryAssociation] = []
        for assoc in spec.data_repository_associations:
            bucket_name, _ = buckets[assoc.bucket]
            s3 = aws.fsx.DataRepositoryAssociationS3Args(
                auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(
                    events=list(assoc.import_events)
                )
                if assoc.import_events
                else None,
                auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(
                    events=list(assoc.export_events)
                )
                if assoc.export_events
                else None,
            )
            self.associations.append(
                aws.fsx.DataRepositoryAssociation(
                    f"{name}-dra-{slug(assoc.file_system_path)}",
                    file_system_id=fs_id,
                    file_system_path=assoc.file_system_path,
                    data_repository_path=pulumi.Output.concat("s3://", bucket_name, "/", assoc.prefix),
                    batch_import_meta_data_on_create=assoc.batch_import_metadata_on_create,
                    imported_file_chunk_size=assoc.imported_file_chunk_size_mib,
                    # Unlinking must never delete the files on Lustre (unexported checkpoints would be lost).
                    delete_data_in_filesystem=False,
                    s3=s3,
                    tags=config.tags,
                    opts=data_options(self, keep=keep, protect=config.protect),
                )
            )

        # FSx reads and writes SSE-KMS objects through a service-linked role named after the file system, created
        # with the first association; a grant per linked bucket (encryption context = bucket ARN, as bucket keys
        # use) lets that role use the key without a wildcard in the key policy.
        self.key_grants: list[aws.kms.Grant] = []
        if self.associations and kms_key_arn is not None:
            account_id, partition = account_and_partition(self)
            service_role = pulumi.Output.concat(
                "arn:",
                partition,
                ":iam::",
                account_id,
                f":role/{FSX_S3_SERVICE_ROLE_PATH}/AWSServiceRoleForFSxS3Access_",
                fs_id,
            )
            for role in sorted({a.bucket for a in spec.data_repository_associations}):
                _, bucket_arn = buckets[role]
                self.key_grants.append(
                    aws.kms.Grant(
                        f"{name}-s3-key-{role}",
                        key_id=kms_key_arn,
                        grantee_principal=service_role,
                        operations=FSX_S3_KEY_OPERATIONS,
                        constraints=[aws.kms.GrantConstraintArgs(encryption_context_equals={"aws:s3:arn": bucket_arn})],
                        opts=child(self, depends_on=self.associations),
                    )
                )

        self.file_system_id: pulumi.Output[str] = fs_id
        self.dns_name: pulumi.Output[str] = self.file_system.dns_name
        self.mount_name: pulumi.Output[str] = self.file_system.mount_name
        self.security_group_id: pulumi.Output[str] = sg_id
        self.subnet_id: pulumi.Input[str] = cluster.subnet_ids([config.availability_zone])[0]
        self.availability_zone = config.availability_zone
        self.storage_capacity_gib = spec.storage_capacity_gib
        self.aggregate_throughput_mbps = spec.aggregate_throughput_mbps
        self.register_outputs(
            {
                "file_system_id": self.file_system_id,
                "dns_name": self.dns_name,
                "mount_name": self.mount_name,
                "security_group_id": self.security_group_id,
                "availability_zone": self.availability_zone,
                "storage_capacity_gib": self.storage_capacity_gib,
                "aggregate_throughput_mbps": self.aggregate_throughput_mbps,
            }
        )
