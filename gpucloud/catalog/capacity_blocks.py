"""Where AWS sells each instance type as Capacity Blocks for ML, per region, from capacity_blocks.json.

A leaf of facts like the instance catalog (stdlib only; each listed region names its sources). Three answers:
``offered`` (a source lists the region), ``not-offered`` (the type is never sold as Capacity Blocks: its
DescribeInstanceTypes usage classes lack capacity-block) and ``unlisted`` (a Capacity Block type in a region no
source lists). The sources are older lists, so ``unlisted`` is undecided, not a "no": AWS adds regions.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal

SCHEMA: Final = "gpucloud.capacity-block-regions/v1"
Status = Literal["offered", "not-offered", "unlisted"]


@dataclass(frozen=True, slots=True)
class CapacityBlockOffering:
    instance_type: str
    region: str
    status: Status
    reason: str
    sources: tuple[str, ...] = ()


@functools.cache
def _data() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("capacity_blocks.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    if data.get("schema") != SCHEMA:
        raise ValueError(f"capacity_blocks.json schema {data.get('schema')!r} is not {SCHEMA!r}")
    return data


def listed_regions(instance_type: str) -> dict[str, tuple[str, ...]]:
    """Region -> the sources listing Capacity Blocks of ``instance_type`` there."""
    return {region: tuple(ids) for region, ids in (_data()["types"].get(instance_type) or {}).items()}


def source_note(source: str) -> str:
    return str((_data()["sources"].get(source) or {}).get("note", source))


def capacity_block_offering(instance_type: str, region: str, *, sold_as_blocks: bool) -> CapacityBlockOffering:
    """Whether ``instance_type`` Capacity Blocks are sold in ``region``; ``sold_as_blocks`` is the catalog's
    ``capacity_block`` (DescribeInstanceTypes usage class) for the type."""
    if not sold_as_blocks:
        return CapacityBlockOffering(
            instance_type,
            region,
            "not-offered",
            f"{instance_type} is not sold as Capacity Blocks in any region (DescribeInstanceTypes "
            "SupportedUsageClasses has no capacity-block)",
        )
    listed = listed_regions(instance_type)
    if region in listed:
        ids = listed[region]
        return CapacityBlockOffering(
            instance_type,
            region,
            "offered",
            f"{instance_type} Capacity Blocks are listed in {region} ({', '.join(ids)})",
            ids,
        )
    where = f"the sources list it in {', '.join(sorted(listed))}" if listed else "no source read lists its regions"
    return CapacityBlockOffering(
        instance_type,
        region,
        "unlisted",
        f"{instance_type} Capacity Blocks in {region} are undecided: {where} (gpucloud/catalog/capacity_blocks.json); "
        f"check with `aws ec2 describe-capacity-block-offerings --region {region} --instance-type {instance_type}` "
        "(or `gpucloud prices refresh`)",
    )
