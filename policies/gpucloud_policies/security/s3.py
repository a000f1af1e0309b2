"""Shared matching of S3 bucket sub-resources to their bucket, by URN (the bucket ID is unknown at preview)."""

from __future__ import annotations

from typing import Any

from pulumi_policy import PolicyResource

from ..base import UnknownValueError, get, has, text
from ..stack import linked, of_type

BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")


def buckets(resources: list[PolicyResource]) -> list[PolicyResource]:
    return of_type(resources, *BUCKETS)


def attached(resources: list[PolicyResource], bucket: PolicyResource, *types: str) -> list[PolicyResource]:
    """Sub-resources of ``types`` whose ``bucket`` input refers to ``bucket`` (by URN, or by literal name)."""
    return children(resources, *types).get(bucket.urn, [])


def children(resources: list[PolicyResource], *types: str) -> dict[str, list[PolicyResource]]:
    """Bucket URN -> its sub-resources of ``types``, built in one pass (plans hold thousands of buckets)."""
    key = (id(resources), len(resources), types)
    cached = _INDEX.get(key)
    if cached is not None and cached[0] is resources:
        return cached[1]
    by_name: dict[str, str] = {}
    for b in buckets(resources):
        name = _literal(b.props, "bucket")
        if name:
            by_name[name] = b.urn
    bucket_urns = {b.urn for b in buckets(resources)}
    index: dict[str, list[PolicyResource]] = {}
    for r in of_type(resources, *types):
        deps = [d.urn for d in linked(r, "bucket") if d.urn in bucket_urns]
        if not deps and not linked(r, "bucket"):
            literal = _literal(r.props, "bucket")
            deps = [by_name[literal]] if literal in by_name else []
        for urn in deps:
            index.setdefault(urn, []).append(r)
    _INDEX.clear()
    _INDEX[key] = (resources, index)
    return index


def _literal(props: Any, key: str) -> str:
    """A known bucket name, or "": an unknown name matches no literal reference (the URN link still does), and
    must not stop the policy for every other bucket."""
    try:
        return text(get(props, key)) if has(props, key) else ""
    except UnknownValueError:
        return ""


_INDEX: dict[tuple[int, int, tuple[str, ...]], tuple[list[PolicyResource], dict[str, list[PolicyResource]]]] = {}
