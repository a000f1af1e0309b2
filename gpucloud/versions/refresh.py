"""`gpucloud versions refresh`: rebuild the add-on part of the versions table from EKS DescribeAddonVersions.

For every minor the table carries and every add-on it lists, one paginated DescribeAddonVersions(addonName,
kubernetesVersion) call: `compatible` becomes every build whose compatibilities name that cluster version (the
whole answer, so `complete` is true and a pin outside it is a conformance error), `version` the one EKS marks
`defaultVersion` for it (else the newest), `verified` true. AMI releases, charts and support dates are kept. The
file is written atomically (a temporary file in the same directory, then os.replace).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpucloud.versions import SCHEMA, VersionsError, parse

ClientFactory = Callable[[str, str], Any]


def _build_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def addon_builds(eks: Any, addon: str, minor: str) -> dict[str, Any]:
    """The table entry of `addon` on `minor` from DescribeAddonVersions (every page)."""
    compatible: list[str] = []
    default: str | None = None
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"addonName": addon, "kubernetesVersion": minor}
        if token:
            kwargs["nextToken"] = token
        page = eks.describe_addon_versions(**kwargs)
        for info in page.get("addons") or []:
            if info.get("addonName") != addon:
                continue
            for build in info.get("addonVersions") or []:
                for compat in build.get("compatibilities") or []:
                    if compat.get("clusterVersion") != minor:
                        continue
                    compatible.append(build["addonVersion"])
                    if compat.get("defaultVersion"):
                        default = build["addonVersion"]
        token = page.get("nextToken")
        if not token:
            break
    ordered = sorted(set(compatible), key=_build_key, reverse=True)
    return {
        "version": default or (ordered[0] if ordered else None),
        "verified": bool(ordered),
        "compatible": ordered,
        "complete": True,
    }


def refresh(
    source: Path,
    target: Path,
    *,
    clients: ClientFactory,
    region: str = "us-east-1",
    minors: Iterable[str] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Read `source`, refresh its add-on builds through EKS and write the result to `target` atomically."""
    try:
        doc = json.loads(source.read_text())
    except (OSError, ValueError) as exc:
        raise VersionsError(f"cannot read the EKS versions table {source}: {exc}") from None
    parse(doc, str(source))  # refuse to refresh a file that would not load
    wanted = list(minors) if minors is not None else list(doc["minors"])
    unknown = [m for m in wanted if m not in doc["minors"]]
    if unknown:
        raise VersionsError(f"the versions table carries no Kubernetes {unknown}; it has {sorted(doc['minors'])}")
    eks = clients("eks", region)
    changed: dict[str, dict[str, str | None]] = {}
    for minor in wanted:
        row = doc["minors"][minor]
        for addon in sorted(row["addons"]):
            fresh = addon_builds(eks, addon, minor)
            if fresh["version"] != row["addons"][addon].get("version"):
                changed.setdefault(minor, {})[addon] = fresh["version"]
            row["addons"][addon] = fresh
    stamp = (now or datetime.now(UTC)).date().isoformat()
    doc["assembled"] = stamp
    doc.setdefault("sources", {})["refresh"] = (
        f"EKS DescribeAddonVersions in {region}, {stamp} (gpucloud versions refresh), minors {', '.join(wanted)}"
    )
    assert doc.get("schema") == SCHEMA
    write_atomically(target, json.dumps(doc, indent=2) + "\n")
    return {"file": str(target), "region": region, "minors": wanted, "changed": changed, "refreshed": stamp}


def write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["addon_builds", "refresh", "write_atomically"]
