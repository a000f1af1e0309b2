"""Data section of the stack spec: S3 dataset/checkpoint buckets and FSx for Lustre."""

from __future__ import annotations

from pydantic import Field

from gpucloud.spec.base import SpecModel


class StorageSpec(SpecModel):
    """Training data and checkpoint storage. Data-holding resources survive `pulumi destroy` by default."""

    allow_data_deletion: bool = Field(
        default=False,
        description="Let `pulumi destroy` delete buckets and file systems. Off: they are retained (and protected "
        "in prod).",
    )
