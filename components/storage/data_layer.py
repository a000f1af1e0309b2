"""GpuStorage: the whole data layer of one platform, composed from the stack spec's `storage` section."""

from __future__ import annotations

from typing import Any

import pulumi
from pydantic import Field, model_validator

from gpucloud.components.base import ComponentConfig, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.storage.buckets import DataBuckets, DataBucketsConfig
from gpucloud.components.storage.csi import FsxCsi, FsxCsiConfig
from gpucloud.components.storage.fsx import LustreConfig, LustreStorage
from gpucloud.spec.storage import StorageSpec


class GpuStorageConfig(ComponentConfig):
    """Inputs of GpuStorage."""

    name_prefix: str = Field(description="Platform name: prefix of generated bucket names and descriptions.")
    storage: StorageSpec = Field(description="The stack spec's storage section.")
    fsx_availability_zone: str | None = Field(
        default=None, description="AZ of the file system (the platform resolves it from the pool it feeds)."
    )
    protect: bool = Field(default=False, description="Protect data-holding resources as well as retaining them.")

    @model_validator(mode="after")
    def _fsx_az(self) -> GpuStorageConfig:
        if self.storage.fsx_enabled and self.fsx_availability_zone is None:
            raise ValueError("fsx_availability_zone is required when the storage spec enables FSx")
        return self


class GpuStorage(pulumi.ComponentResource):
    """Buckets, KMS key and access roles; FSx for Lustre linked to the buckets; the CSI driver and volume."""

    def __init__(
        self,
        name: str,
        config: GpuStorageConfig,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:storage:GpuStorage", name, None, opts)
        spec = config.storage
        keep_args: dict[str, Any] = {
            "region": config.region,
            "tags": config.tags,
            "name_prefix": config.name_prefix,
            "allow_data_deletion": spec.allow_data_deletion,
            "protect": config.protect,
        }
        self.buckets = DataBuckets(
            f"{name}-s3",
            DataBucketsConfig(
                **keep_args,
                dataset=spec.dataset_bucket,
                checkpoint=spec.checkpoint_bucket,
                access=spec.access,
                access_logs=spec.access_logs,
                kms_key_arn=spec.kms_key_arn,
            ),
            cluster,
            opts=child(self),
        )
        b = self.buckets
        self.lustre: LustreStorage | None = None
        if spec.fsx is not None and spec.fsx.enabled:
            assert config.fsx_availability_zone is not None  # checked by the config model
            self.lustre = LustreStorage(
                f"{name}-fsx",
                LustreConfig(
                    **keep_args,
                    fsx=spec.fsx,
                    availability_zone=config.fsx_availability_zone,
                    enable_log_encryption=b.kms_key is not None,
                ),
                cluster,
                kms_key_arn=b.kms_key_arn,
                buckets={
                    "dataset": (b.dataset_bucket_name, b.dataset_bucket_arn),
                    "checkpoint": (b.checkpoint_bucket_name, b.checkpoint_bucket_arn),
                },
                opts=child(self),
            )
        self.csi: FsxCsi | None = None
        if spec.csi.create_addon or (self.lustre is not None and spec.csi.create_volume):
            self.csi = FsxCsi(
                f"{name}-csi",
                FsxCsiConfig(
                    region=config.region,
                    tags=config.tags,
                    name_prefix=config.name_prefix,
                    csi=spec.csi,
                    use_pod_identity=spec.access.use_pod_identity,
                ),
                cluster,
                file_system=self.lustre,
                opts=child(self),
            )
        self.register_outputs(self.exports())

    def exports(self) -> dict[str, Any]:
        """Stack outputs (camelCase), with None for what is off."""
        b, fs, csi = self.buckets, self.lustre, self.csi
        return {
            "datasetBucketName": b.dataset_bucket_name,
            "datasetBucketArn": b.dataset_bucket_arn,
            "checkpointBucketName": b.checkpoint_bucket_name,
            "checkpointBucketArn": b.checkpoint_bucket_arn,
            "checkpointUri": b.checkpoint_uri,
            "storageKmsKeyArn": b.kms_key_arn,
            "storageReaderRoleArn": b.reader_role_arn,
            "storageWriterRoleArn": b.writer_role_arn,
            "accessLogBucketName": b.log_bucket_name,
            "fsxFileSystemId": fs.file_system_id if fs else None,
            "fsxDnsName": fs.dns_name if fs else None,
            "fsxMountName": fs.mount_name if fs else None,
            "fsxAvailabilityZone": fs.availability_zone if fs else None,
            "fsxStorageCapacityGib": fs.storage_capacity_gib if fs else None,
            "fsxAggregateThroughputMBps": fs.aggregate_throughput_mbps if fs else None,
            "fsxPvcName": csi.claim_name if csi else None,
            "fsxPvcNamespace": csi.claim_namespace if csi else None,
        }
