"""Where a chart reference (name, version, repository) is found on disk for an offline render.

The charts lock (gpucloud/charts/lock.yaml) is the only source: a chart renders offline exactly when the lock pins
that chart at that version, and the directory is the lock's vendored copy. A reference the lock does not pin is
refused with the pinned version, so a plan never renders something `up` would not install.
"""

from __future__ import annotations

from pathlib import Path

from gpucloud.charts import lock as charts_lock


class ChartNotPinned(Exception):
    """The chart reference names no chart the lock pins: the offline plan cannot render it."""


def resolve_chart_dir(chart: str, version: str | None, repo: str | None) -> Path:
    """The vendored directory of `chart`@`version` from `repo` (an https index or an oci:// URL).

    `chart` may be a bare name, `repo/name` or a whole oci:// reference; an OCI reference is looked up by its URL,
    anything else by its last path segment.
    """
    lock = charts_lock.load_lock()
    pinned = lock.by_repository(chart) if chart.startswith("oci://") else None
    name = pinned.name if pinned is not None else chart.rstrip("/").rsplit("/", 1)[-1]
    where = f" from {repo}" if repo else ""
    if not name:
        raise ChartNotPinned("a chart reference needs a chart name")
    if not version:
        raise ChartNotPinned(
            f"chart {name}{where} has no version: pin one (version=...) so the plan renders what `up` installs"
        )
    try:
        lock.pin(name)
    except charts_lock.LockError as exc:
        raise ChartNotPinned(f"{exc} (add it to gpucloud/charts/lock.yaml with its vendored copy)") from None
    # Charts tag their versions with and without a leading v; the lock's spelling is the chart's own.
    try:
        pinned = lock.pin(name, version)
    except charts_lock.LockError:
        versions = " and ".join(f"{name}@{v}" for v in lock.versions.get(name, {}))
        raise ChartNotPinned(
            f"chart {name}@{version}{where} is not pinned; the charts lock pins {versions} "
            "(upgrading is a lock change plus the vendored copy)"
        ) from None
    if repo and not pinned.oci and not pinned.matches_repository(repo):
        raise ChartNotPinned(
            f"chart {name}@{version} comes from {repo}, but the charts lock pins it from {pinned.repository}"
        )
    return pinned.chart_dir
