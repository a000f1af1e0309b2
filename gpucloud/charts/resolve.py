"""Where a chart reference (name, version, repository) is found on disk for an offline render.

One function on purpose: the chart lock file will back it (chart, version, repository, digest); until then a
chart resolves to its vendored copy, vendor/upstream/charts/<chart>-<version>/.
"""

from __future__ import annotations

from pathlib import Path

VENDORED_CHARTS = Path(__file__).resolve().parents[2] / "vendor" / "upstream" / "charts"


class ChartNotPinned(Exception):
    """The chart reference names no vendored chart: the offline plan cannot render it."""


def resolve_chart_dir(chart: str, version: str | None, repo: str | None) -> Path:
    """The directory of the pinned chart `chart`@`version` from `repo` (an https index or an oci:// URL).

    `chart` may be a bare name, `repo/name` or a whole oci:// reference; only its last segment names the chart.
    """
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    where = f" from {repo}" if repo else ""
    if not name:
        raise ChartNotPinned("a chart reference needs a chart name")
    if not version:
        raise ChartNotPinned(
            f"chart {name}{where} has no version: pin one (version=...) so the plan renders what `up` installs"
        )
    bare = version[1:] if version.startswith("v") else version
    for candidate in (version, bare, f"v{bare}"):
        path = VENDORED_CHARTS / f"{name}-{candidate}"
        if (path / "Chart.yaml").is_file():
            return path
    known = sorted(p.name[len(name) + 1 :] for p in VENDORED_CHARTS.glob(f"{name}-*") if (p / "Chart.yaml").is_file())
    have = f"; vendored versions of {name}: {', '.join(known)}" if known else f"; no version of {name} is vendored"
    raise ChartNotPinned(
        f"chart {name}@{version}{where} is not in {VENDORED_CHARTS.relative_to(VENDORED_CHARTS.parents[2])}{have} "
        "(vendor it with its provenance, or use a pinned version)"
    )
