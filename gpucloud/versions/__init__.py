"""Versions as data: what each EKS Kubernetes minor runs (add-on builds, AMI releases, chart versions) and when its
support ends, from the shipped snapshot `eks.json` (sources and dates inside it; `gpucloud versions refresh`
rebuilds its add-on part through EKS DescribeAddonVersions).

A leaf module (stdlib only): the stack spec derives its pinned defaults from it, components read the pins from the
spec, conformance and the upgrade planner read the support dates and the per-minor table.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

SNAPSHOT: Final = Path(__file__).with_name("eks.json")
SCHEMA: Final = "gpucloud.eks-versions/v1"
# Where `gpucloud versions refresh` writes by default: the shipped snapshot itself, so a refresh is a reviewed diff.
ENV_VAR: Final = "GPUCLOUD_EKS_VERSIONS"
SOURCE: Final = "gpucloud/versions/eks.json (EKS DescribeAddonVersions, amazon-eks-ami releases, EKS calendar)"
AMI_FAMILIES: Final = ("al2023", "bottlerocket")
# EKS upgrades the control plane one minor at a time (UpdateClusterVersion refuses a larger step).
MAX_CONTROL_PLANE_STEP: Final = 1
# Kubernetes version skew policy since 1.28: a kubelet may be up to three minors older than the API server and never
# newer (kubernetes.io/releases/version-skew-policy/#kubelet).
MAX_KUBELET_SKEW: Final = 3
SKEW_POLICY: Final = "Kubernetes version skew policy (kubernetes.io/releases/version-skew-policy, kubelet)"


class VersionsError(Exception):
    """The snapshot does not parse, or a minor it does not carry was asked for."""


@dataclass(frozen=True)
class Pin:
    version: str  # the build the minor defaults to
    verified: bool  # False: not found for this minor in the sources consulted (the plan warns)


@dataclass(frozen=True)
class AddonBuilds:
    version: str | None  # the default build for the minor; None: no sourced build (left to EKS, with a warning)
    verified: bool
    compatible: tuple[str, ...]  # builds known to run on the minor
    complete: bool  # True when `compatible` is DescribeAddonVersions' whole answer (from a refresh)


@dataclass(frozen=True)
class ChartChoice:
    version: str
    image_tag: str | None  # set where no chart of this minor exists upstream and the image is pinned instead
    verified: bool


@dataclass(frozen=True)
class MinorVersions:
    minor: str
    released: str | None
    end_of_standard_support: str | None
    end_of_extended_support: str | None
    addons: dict[str, AddonBuilds]
    ami: dict[str, Pin]
    charts: dict[str, ChartChoice]

    def support_on(self, day: date) -> str:
        """standard | extended | unsupported | unknown (a minor whose dates are not in the sources)."""
        if self.end_of_standard_support is None:
            return "unknown"
        if not past_support_end(self.end_of_standard_support, day):
            return "standard"
        if self.end_of_extended_support and not past_support_end(self.end_of_extended_support, day):
            return "extended"
        return "unsupported"


# "Once a version is past the end of standard support date, it enters extended support" (EKS User Guide,
# "Understand the Kubernetes version lifecycle on EKS", docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions):
# the calendar's end date is the period's last day; the next period (and its price) starts the day after.
SUPPORT_END_SOURCE = "EKS User Guide, Kubernetes version lifecycle: a version past the end of standard support date"


def past_support_end(end: str, day: date) -> bool:
    """Whether `day` is past a support period that ends on `end` (ISO date): the end date itself is still inside.

    The one boundary rule for the calendar: support tiers (`MinorVersions.support_on`) and the extended-support
    price (gpucloud/prices/rates.py `eks_in_extended_support`) both call it.
    """
    return day > date.fromisoformat(end)


def snapshot_path() -> Path:
    override = os.environ.get(ENV_VAR)
    return Path(override) if override else SNAPSHOT


@dataclass(frozen=True)
class SupportDates:
    """One row of the EKS Kubernetes release calendar (None: not in the sources consulted)."""

    minor: str
    released: str | None
    end_of_standard_support: str | None
    end_of_extended_support: str | None


def parse_calendar(doc: Any, where: str) -> dict[str, SupportDates]:
    """The document's `calendar` section; a row of an older snapshot's `minors` fills a minor the section lacks."""
    rows = dict((doc.get("minors") or {}) if isinstance(doc, dict) else {})
    rows.update((doc.get("calendar") or {}) if isinstance(doc, dict) else {})
    out: dict[str, SupportDates] = {}
    for minor, raw in rows.items():
        if not isinstance(raw, dict):
            raise VersionsError(f"{where}: calendar row {minor} is not a mapping")
        out[minor] = SupportDates(
            minor, raw.get("released"), raw.get("end_of_standard_support"), raw.get("end_of_extended_support")
        )
    return out


def parse(doc: Any, where: str) -> dict[str, MinorVersions]:
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("minors"), dict):
        raise VersionsError(f"{where}: not a {SCHEMA} document (needs `schema` and `minors`)")
    dates = parse_calendar(doc, where)
    out: dict[str, MinorVersions] = {}
    for minor, raw in doc["minors"].items():
        try:
            out[minor] = MinorVersions(
                minor=minor,
                released=dates[minor].released,
                end_of_standard_support=dates[minor].end_of_standard_support,
                end_of_extended_support=dates[minor].end_of_extended_support,
                addons={
                    k: AddonBuilds(
                        v["version"],
                        bool(v.get("verified")),
                        tuple(v.get("compatible") or ([v["version"]] if v["version"] else [])),
                        bool(v.get("complete")),
                    )
                    for k, v in raw["addons"].items()
                },
                ami={k: Pin(v["release"], bool(v.get("verified"))) for k, v in raw["ami"].items()},
                charts={
                    k: ChartChoice(v["version"], v.get("image_tag"), bool(v.get("verified")))
                    for k, v in (raw.get("charts") or {}).items()
                },
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise VersionsError(f"{where}: minor {minor}: missing or bad field {exc}") from None
    return out


@lru_cache(maxsize=4)
def _read(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise VersionsError(f"cannot read the EKS versions table {path}: {exc}") from None


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, MinorVersions]:
    return parse(_read(path), path)


def table() -> dict[str, MinorVersions]:
    return _load(str(snapshot_path()))


def support_calendar() -> dict[str, SupportDates]:
    """Every minor the EKS release calendar section carries (older ones too), the one copy the cost engine and the
    upgrade planner read."""
    path = str(snapshot_path())
    return parse_calendar(_read(path), path)


def minors() -> tuple[str, ...]:
    return tuple(sorted(table(), key=minor_key))


def for_minor(minor: str) -> MinorVersions:
    found = table().get(minor)
    if found is None:
        raise VersionsError(f"the EKS versions table carries no Kubernetes {minor}; it has {list(minors())}")
    return found


def addon_build(minor: str, addon: str) -> str | None:
    """The build an add-on is pinned to on `minor` when the spec names none (None: no sourced build)."""
    found = for_minor(minor).addons.get(addon)
    return found.version if found is not None else None


def ami_image_parameter(family: str, variant: str, minor: str, release: str) -> str:
    """The public SSM parameter holding the image id of one pinned EKS AMI release (never `recommended`/`latest`).

    Each AL2023 release has its own parameter named after the AMI (amazon-eks-node-al2023-x86_64-nvidia-1.35-
    v20260714, as awslabs/amazon-eks-ami's release notes list them) beside `recommended`; Bottlerocket publishes
    every release under its version next to `latest` (bottlerocket-os/bottlerocket, QUICKSTART-EKS "Finding an AMI").
    """
    if family == "bottlerocket":
        return f"/aws/service/bottlerocket/aws-k8s-{minor}-nvidia/x86_64/{release}/image_id"
    stamp = release.rsplit("-", 1)[-1]
    name = f"amazon-eks-node-al2023-x86_64-{variant}-{minor}-v{stamp}"
    return f"/aws/service/eks/optimized-ami/{minor}/amazon-linux-2023/x86_64/{variant}/{name}/image_id"


def minor_key(version: str) -> tuple[int, int]:
    """(1, 35) for "1.35" and "1.35.6-20260714"; raises ValueError for what is not a version."""
    head = version.lstrip("v").split("-")[0].split(".")
    return int(head[0]), int(head[1])


def minor_of(version: str) -> str | None:
    try:
        major, minor = minor_key(version)
    except (ValueError, IndexError):
        return None
    return f"{major}.{minor}"


def minor_distance(newer: str, older: str) -> int:
    """How many minors `older` is behind `newer` (negative when it is ahead)."""
    (a, b), (c, d) = minor_key(newer), minor_key(older)
    return (a - c) * 100 + (b - d)


def next_minor(minor: str) -> str:
    major, m = minor_key(minor)
    return f"{major}.{m + 1}"


__all__ = [
    "AMI_FAMILIES",
    "MAX_CONTROL_PLANE_STEP",
    "MAX_KUBELET_SKEW",
    "SKEW_POLICY",
    "SOURCE",
    "AddonBuilds",
    "ChartChoice",
    "MinorVersions",
    "Pin",
    "SupportDates",
    "VersionsError",
    "addon_build",
    "ami_image_parameter",
    "for_minor",
    "minor_distance",
    "minor_key",
    "minor_of",
    "minors",
    "next_minor",
    "parse",
    "parse_calendar",
    "snapshot_path",
    "support_calendar",
    "table",
]
