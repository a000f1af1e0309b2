"""The data layer: S3 dataset/checkpoint buckets, FSx for Lustre linked to them, and its mount in the cluster.

`GpuStorage` composes the three components from the stack spec's `storage` section; team stacks can use
`DataBuckets`, `LustreStorage` and `FsxCsi` on their own.
"""

from components.storage.buckets import DataBuckets, DataBucketsConfig
from components.storage.csi import FsxCsi, FsxCsiConfig
from components.storage.data_layer import GpuStorage, GpuStorageConfig
from components.storage.fsx import LustreConfig, LustreStorage

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
