"""The data layer: S3 dataset/checkpoint buckets, FSx for Lustre linked to them, and its mount in the cluster.

`GpuStorage` composes the three components from the stack spec's `storage` section; team stacks can use
`DataBuckets`, `LustreStorage` and `FsxCsi` on their own.
"""

from gpucloud.components.storage.buckets import DataBuckets, DataBucketsConfig
from gpucloud.components.storage.csi import FsxCsi, FsxCsiConfig
from gpucloud.components.storage.data_layer import GpuStorage, GpuStorageConfig
from gpucloud.components.storage.fsx import LustreConfig, LustreStorage

__all__ = [
    "DataBuckets",
    "DataBucketsConfig",
    "FsxCsi",
    "FsxCsiConfig",
    "GpuStorage",
    "GpuStorageConfig",
    "LustreConfig",
    "LustreStorage",
]
