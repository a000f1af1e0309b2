"""Offline facts of a Region that every offline answer shares: the account, the partition and its DNS suffix, the
shape of availability-zone IDs. Its own module so that offline answers and the generic data-source answers
(invoke_shapes) both read it without importing each other."""

from __future__ import annotations

OFFLINE_ACCOUNT_ID = "123456789012"


def partition_of(region: str) -> tuple[str, str]:
    if region.startswith("cn-"):
        return "aws-cn", "amazonaws.com.cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov", "amazonaws.com"
    return "aws", "amazonaws.com"


def zone_id_prefix(region: str) -> str:
    # AZ ids look like use1-az1: the region's parts abbreviated.
    area, direction, number = region.split("-")[0], region.split("-")[1], region.split("-")[-1]
    return f"{area}{direction[0]}{number}"
