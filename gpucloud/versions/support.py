"""Each add-on's published Kubernetes support window (support.json, next to this module).

A window is keyed by the add-on's app version (major.minor) and bounds the Kubernetes minors its project lists for
that release; `None` on a side means the project publishes no bound there. `same-minor` add-ons (the Cluster
Autoscaler) are meant for exactly their own minor. Every window carries its source; nothing here is inferred.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

SUPPORT_FILE = Path(__file__).with_name("support.json")


class SupportError(Exception):
    """support.json does not parse or breaks its shape (the message names the entry)."""


@dataclass(frozen=True)
class Window:
    chart: str
    app: str  # "2.20"
    oldest: str | None  # "1.33"
    newest: str | None
    source: str

    def covers(self, minor: str) -> bool:
        key = _minor_key(minor)
        return (self.oldest is None or key >= _minor_key(self.oldest)) and (
            self.newest is None or key <= _minor_key(self.newest)
        )

    @property
    def shown(self) -> str:
        """ "1.33 - 1.35", "1.31 and newer", "up to 1.35"."""
        if self.newest is None:
            return f"{self.oldest} and newer" if self.oldest else "any version"
        return f"{self.oldest} - {self.newest}" if self.oldest else f"up to {self.newest}"


@dataclass(frozen=True)
class ChartSupport:
    chart: str
    windows: tuple[Window, ...]
    same_minor: bool
    source: str


def _minor_key(minor: str) -> tuple[int, int]:
    major, _, rest = minor.lstrip("v").partition(".")
    return int(major), int(rest.split(".", 1)[0] or 0)


def app_minor(version: str) -> str | None:
    """ "2.20" of "2.20.2" / "v2.20.2" (None when it is not numeric major.minor)."""
    parts = version.lstrip("v").split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return f"{int(parts[0])}.{int(parts[1])}"


def parse(doc: Any, where: str) -> dict[str, ChartSupport]:
    if not isinstance(doc, dict) or not isinstance(doc.get("charts"), dict):
        raise SupportError(f"{where}: expected an object with a `charts` mapping")
    out: dict[str, ChartSupport] = {}
    for chart, raw in doc["charts"].items():
        if not isinstance(raw, dict) or not raw.get("source"):
            raise SupportError(f"{where}: charts.{chart} needs a `source`")
        windows = []
        for i, w in enumerate(raw.get("windows") or []):
            bounds = w.get("kubernetes") if isinstance(w, dict) else None
            if not isinstance(bounds, list) or len(bounds) != 2 or not app_minor(str(w.get("app", "")) + ".0"):
                raise SupportError(f"{where}: charts.{chart}.windows[{i}] needs `app` and `kubernetes: [old, new]`")
            windows.append(Window(chart, str(w["app"]), bounds[0], bounds[1], str(raw["source"])))
        out[chart] = ChartSupport(chart, tuple(windows), bool(raw.get("same-minor")), str(raw["source"]))
    return out


@lru_cache(maxsize=2)
def load(path: str | None = None) -> dict[str, ChartSupport]:
    file = Path(path) if path else SUPPORT_FILE
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SupportError(f"cannot read the support windows {file}: {exc}") from None
    return parse(doc, str(file))


def window(chart: str, app_version: str) -> Window | None:
    support = load().get(chart)
    minor = app_minor(app_version)
    if support is None or minor is None:
        return None
    return next((w for w in support.windows if w.app == minor), None)


__all__ = ["SUPPORT_FILE", "ChartSupport", "SupportError", "Window", "app_minor", "load", "parse", "window"]
