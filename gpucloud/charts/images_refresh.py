"""`gpucloud images refresh`: resolve every locked image's tag to its digest at its registry and rewrite the lock.

All or nothing: every tag is resolved first, and the lock is written once, atomically (gpucloud/fileio.py), only
when all of them answered; a registry that cannot be reached or a tag it does not have leaves the file as it was.
Entries whose registry is per Region and private (the EKS ECR accounts, `{region}` in the repository) need AWS
credentials and are listed as skipped.
"""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path
from typing import Any

from gpucloud.charts import images
from gpucloud.charts.registry import Client, registry_and_name


def refresh(source: Path, target: Path, client: Client, *, only: list[str] | None = None,
            today: date | None = None) -> dict[str, Any]:  # fmt: skip
    """Resolve and write; returns {file, changed: [{image, old, new, index}], unchanged, skipped: [{image, why}]}."""
    doc = images.read_document(source)
    new = copy.deepcopy(doc)
    day = (today or date.today()).isoformat()
    changed: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    unchanged = 0
    for entry in new["images"]:
        ref = f"{entry['repository']}:{entry['tag']}"
        if only and entry["repository"] not in only and ref not in only:
            continue
        if "{region}" in entry["repository"]:
            skipped.append({"image": ref, "why": "a per-Region private registry (EKS ECR): needs AWS credentials"})
            continue
        resolved = client.resolve(entry["repository"], entry["tag"])
        if resolved.digest == entry.get("digest"):
            unchanged += 1
            if resolved.index is not None:
                entry["index"] = resolved.index
            continue
        host, _ = registry_and_name(entry["repository"])
        changed.append({"image": ref, "old": entry.get("digest"), "new": resolved.digest, "index": resolved.index})
        entry["digest"] = resolved.digest
        entry["index"] = resolved.index
        entry["source"] = (
            f"registry {host}, manifest of tag {entry['tag']} (Docker-Content-Digest), "
            f"resolved by `gpucloud images refresh` on {day}"
        )
        entry.pop("unpinned", None)
    if changed or target != source:
        images.write_document(target, new)
    images.load.cache_clear()
    return {"file": str(target), "changed": changed, "unchanged": unchanged, "skipped": skipped}


__all__ = ["refresh"]
