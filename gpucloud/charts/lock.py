"""The charts lock: one pinned version of every upstream chart (and non-chart artifact) the project installs.

`lock.yaml` (package data next to this module) is the single source of truth for chart coordinates: components
read chart, version and repository from it, the spec defaults its `*_version` fields to it, and the conformance
check renders the vendored copy it points at. Upgrading a chart is a change to `lock.yaml` plus the new vendored
directory under `vendor/upstream/charts/<chart>-<version>/`; `tests/charts/test_lock.py` fails while the two
disagree.

Digest algorithm (`compute_digest`), so anyone can recompute it without this code: walk the directory, keep
regular files only (symlinks are refused: the bundle has none), sort them by their path relative to the directory
in POSIX form (byte order of the UTF-8 path), and feed one SHA-256 with, for each file,
`<relative path> NUL <size in decimal> NUL <file bytes>`. The digest is `sha256:<hex>`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gpucloud.package_data import PACKAGE_ROOT

LOCK_FILE = Path(__file__).with_name("lock.yaml")
# Vendored paths in the lock (vendor/upstream/...) are relative to the package root: gpucloud/vendor in a
# checkout and in an installed wheel alike (gpucloud/package_data.py).
REPO_ROOT = PACKAGE_ROOT
LOCK_SOURCE = "charts lock (gpucloud/charts/lock.yaml)"


class LockError(Exception):
    """A chart, version or artifact that the lock does not pin, or a lock file that does not parse."""


@dataclass(frozen=True)
class ChartPin:
    """One pinned chart: where it is published and where its vendored copy lives."""

    name: str
    version: str
    app_version: str
    repository: str  # https chart repository URL, or the chart's own oci:// URL
    path: str  # vendored directory, relative to the package root (gpucloud/vendor/...)
    digest: str  # "sha256:<hex>" over the vendored directory (see the module docstring)

    @property
    def oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def chart_dir(self) -> Path:
        return REPO_ROOT / self.path

    @property
    def ref(self) -> str:
        """`name@version`, as findings name their source."""
        return f"{self.name}@{self.version}"

    @property
    def release_chart(self) -> str:
        """The `chart` input of a helm.v3.Release: the OCI URL itself, or the name within `repository`."""
        return self.repository if self.oci else self.name

    @property
    def repository_opts(self) -> dict[str, str] | None:
        """The `repository_opts` of a helm.v3.Release: none for an OCI chart (the URL is the chart)."""
        return None if self.oci else {"repo": self.repository}

    def matches_repository(self, repository: str | None) -> bool:
        return _norm_repo(repository) == _norm_repo(self.repository)


@dataclass(frozen=True)
class ArtifactPin:
    """A pinned non-chart artifact (CRD files, a plain manifest) vendored next to the charts."""

    name: str
    version: str
    kind: str  # "crds" | "manifest"
    source: str  # where upstream publishes it
    path: str
    digest: str

    @property
    def artifact_dir(self) -> Path:
        return REPO_ROOT / self.path

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class ChartsLock:
    charts: dict[str, ChartPin]  # the first entry of each chart: the default version
    artifacts: dict[str, ArtifactPin]
    # Every pinned version of each chart. A chart pinned more than once serves different Kubernetes minors (the
    # Cluster Autoscaler's minor follows the cluster's); gpucloud/versions/eks.json says which minor takes which.
    versions: dict[str, dict[str, ChartPin]] = field(default_factory=dict)

    def pin(self, chart: str, version: str | None = None) -> ChartPin:
        found = self.charts.get(chart)
        if found is None:
            raise LockError(
                f"chart {chart!r} is not in the charts lock; pinned charts: {', '.join(sorted(self.charts))}"
            )
        if version is None:
            return found
        pinned = self.versions.get(chart) or {found.version: found}
        match = pinned.get(version) or next(
            (p for v, p in pinned.items() if v.lstrip("v") == version.lstrip("v")), None
        )
        if match is None:
            raise LockError(
                f"chart {chart} version {version!r} is not pinned; the lock pins {' and '.join(pinned)} "
                "(upgrading is a lock change plus the vendored copy)"
            )
        return match

    def all_pins(self) -> list[ChartPin]:
        return [p for name in self.charts for p in (self.versions.get(name) or {name: self.charts[name]}).values()]

    def by_repository(self, repository: str) -> ChartPin | None:
        """The pin whose OCI URL (or `repository/name`) is this chart reference."""
        want = _norm_repo(repository)
        for p in self.charts.values():
            if p.oci and _norm_repo(p.repository) == want:
                return p
        return None


def _norm_repo(url: str | None) -> str:
    return (url or "").strip().rstrip("/")


@lru_cache(maxsize=1)
def load_lock(path: str | None = None) -> ChartsLock:
    """Parse the lock file (cached; pass a path to read another one, e.g. in tests)."""
    file = Path(path) if path else LOCK_FILE
    try:
        raw = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise LockError(f"cannot read the charts lock {file}: {exc}") from None
    if not isinstance(raw, dict):
        raise LockError(f"{file}: expected a mapping with `charts` and `artifacts`")
    charts: dict[str, ChartPin] = {}
    versions: dict[str, dict[str, ChartPin]] = {}
    for i, entry in enumerate(raw.get("charts") or []):
        pin = ChartPin(
            name=_field(entry, "name", file, i),
            version=_field(entry, "version", file, i),
            app_version=str(entry.get("appVersion", "")),
            repository=_field(entry, "repository", file, i),
            path=_field(entry, "path", file, i),
            digest=_field(entry, "digest", file, i),
        )
        if pin.version in versions.get(pin.name, {}):
            raise LockError(f"{file}: chart {pin.name} {pin.version} is pinned twice")
        charts.setdefault(pin.name, pin)
        versions.setdefault(pin.name, {})[pin.version] = pin
    artifacts: dict[str, ArtifactPin] = {}
    for i, entry in enumerate(raw.get("artifacts") or []):
        art = ArtifactPin(
            name=_field(entry, "name", file, i),
            version=_field(entry, "version", file, i),
            kind=_field(entry, "kind", file, i),
            source=_field(entry, "source", file, i),
            path=_field(entry, "path", file, i),
            digest=_field(entry, "digest", file, i),
        )
        artifacts[art.name] = art
    return ChartsLock(charts, artifacts, versions)


def _field(entry: Any, key: str, file: Path, index: int) -> str:
    value = entry.get(key) if isinstance(entry, dict) else None
    if value is None or value == "":
        raise LockError(f"{file}: entry {index} has no `{key}`")
    return str(value)


def pin(chart: str, version: str | None = None) -> ChartPin:
    """The lock entry of a chart; with `version`, also require that it is the pinned one (LockError otherwise)."""
    return load_lock().pin(chart, version)


def artifact(name: str) -> ArtifactPin:
    found = load_lock().artifacts.get(name)
    if found is None:
        raise LockError(f"artifact {name!r} is not in the charts lock")
    return found


def pinned_version(chart: str) -> str:
    return pin(chart).version


def check_version(chart: str, version: str) -> str | None:
    """None when `version` is the pinned one, else a message naming the pinned version (for spec validators)."""
    try:
        pin(chart, version)
    except LockError as exc:
        return str(exc)
    return None


def compute_digest(directory: str | Path) -> str:
    """SHA-256 over a directory's regular files, in the order and framing the module docstring documents."""
    root = Path(directory)
    if not root.is_dir():
        raise LockError(f"{root} is not a directory")
    files: list[tuple[bytes, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if (Path(dirpath) / name).is_symlink():
                raise LockError(f"{Path(dirpath) / name} is a symlink; vendored charts hold plain files only")
        for name in filenames:
            full = Path(dirpath) / name
            files.append((full.relative_to(root).as_posix().encode(), full))
    h = hashlib.sha256()
    for rel, full in sorted(files):
        data = full.read_bytes()
        h.update(rel + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return f"sha256:{h.hexdigest()}"


__all__ = [
    "LOCK_FILE",
    "LOCK_SOURCE",
    "ArtifactPin",
    "ChartPin",
    "ChartsLock",
    "LockError",
    "artifact",
    "check_version",
    "compute_digest",
    "load_lock",
    "pin",
    "pinned_version",
]
