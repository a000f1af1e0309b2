"""The image lock (`images.json`, next to this module): each container image the shipped plans deploy, pinned by
digest where a source names one.

A digest enters the lock only with its source (upstream chart values, an upstream release manifest, a public
repository that records the same repository:tag@digest pair verbatim, or the registry itself through
`gpucloud images refresh`); an image no source pins stays tag-only with the reason in `unpinned`, and the prod
guardrail's reviewed exemptions name exactly those. How a digest reaches the plan is the entry's `render`:

- ``chart``: the upstream chart's own values already pin it (Karpenter, OpenCost); nothing to set;
- ``hex`` / ``tag@digest`` / ``digest``: gpucloud sets the chart value(s) ``value`` (`pin_values`, applied to
  every release in components/releases.py) to the bare hex digest (a ``sha`` value beside the tag),
  ``<tag>@sha256:<hex>`` (a ``tag`` value) or ``sha256:<hex>`` (node-exporter's ``image.digest``; the GPU
  Operator's ClusterPolicy takes a digest as an operand's `version`). A path under a dependency's alias sets the
  subchart's value, as Helm merges it (``grafana.image.sha``, the device plugin's ``nfd.image.tag``). Such an
  entry pins the chart's default tag, unless it names that default in ``replaces``: then the source pins another
  build of the same component for the same release (NVIDIA's OLM bundle ships the ubi9 DCGM build where the Helm
  chart defaults to ubuntu22.04); as for every entry, the value is set where the release leaves it unset or names
  the locked tag, and any other tag the release chose (the replaced default included) is kept;
- ``ref``: gpucloud's own manifests pass their image through `pin_ref`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpucloud.fileio import write_atomic

IMAGES_FILE = Path(__file__).with_name("images.json")
IMAGES_SOURCE = "image lock (gpucloud/charts/images.json)"
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
RENDER_FORMS = ("chart", "hex", "tag@digest", "digest", "ref")
VALUE_FORMS = ("hex", "tag@digest", "digest")


class ImageLockError(Exception):
    """The image lock does not parse, or an entry breaks its rules (the message names the entry and field)."""


@dataclass(frozen=True)
class ImagePin:
    repository: str  # registry/path, no tag; `{region}` where the registry is per Region (EKS ECR)
    tag: str
    digest: str | None  # "sha256:<hex>", None for tag-only
    index: bool | None  # True: the multi-arch index digest; None: the source does not say
    source: str | None
    unpinned: str | None  # why there is no digest
    render: dict[str, Any] | None
    used_by: str | None

    @property
    def ref(self) -> str:
        """`repository:tag@digest`, or `repository:tag` for a tag-only entry."""
        return f"{self.repository}:{self.tag}" + (f"@{self.digest}" if self.digest else "")

    @property
    def regional(self) -> bool:
        return "{region}" in self.repository


def _entry(raw: Any, i: int, where: str) -> ImagePin:
    if not isinstance(raw, dict):
        raise ImageLockError(f"{where}: images[{i}] is not an object")
    repo, tag = raw.get("repository"), raw.get("tag")
    if not isinstance(repo, str) or not repo or not isinstance(tag, str) or not tag:
        raise ImageLockError(f"{where}: images[{i}] needs a non-empty `repository` and `tag`")
    name = f"{where}: image {repo}:{tag}"
    digest = raw.get("digest")
    if digest is not None and not (isinstance(digest, str) and DIGEST.match(digest)):
        raise ImageLockError(f"{name}: `digest` {digest!r} is not sha256:<64 lowercase hex>; fix it or set null")
    if digest and not raw.get("source"):
        raise ImageLockError(f"{name}: a digest needs its `source` (where it was read, at which tag or commit)")
    if not digest and not raw.get("unpinned"):
        raise ImageLockError(f"{name}: a tag-only entry needs `unpinned`, the reason no digest is recorded")
    render = raw.get("render")
    if render is not None:
        form = render.get("form") if isinstance(render, dict) else None
        if form not in RENDER_FORMS:
            raise ImageLockError(f"{name}: render.form {form!r} is not one of {', '.join(RENDER_FORMS)}")
        value = render.get("value")
        paths_ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        if form in VALUE_FORMS and not (render.get("chart") and render.get("version") and value and paths_ok):
            raise ImageLockError(
                f"{name}: render form {form} needs `chart`, `version` and `value` (the chart values path)"
            )
        replaces = render.get("replaces")
        if replaces is not None and not (form in VALUE_FORMS and isinstance(replaces, str) and replaces != tag):
            raise ImageLockError(
                f"{name}: render.replaces names the chart's default tag this pin stands in for: a tag other than "
                f"{tag!r}, with form {' / '.join(VALUE_FORMS)}"
            )
    index = raw.get("index")
    return ImagePin(
        repository=repo,
        tag=tag,
        digest=digest,
        index=index if isinstance(index, bool) else None,
        source=raw.get("source"),
        unpinned=raw.get("unpinned"),
        render=dict(render) if isinstance(render, dict) else None,
        used_by=raw.get("used_by"),
    )


def parse(doc: Any, where: str) -> tuple[ImagePin, ...]:
    if not isinstance(doc, dict) or not isinstance(doc.get("images"), list):
        raise ImageLockError(f"{where}: expected an object with an `images` list")
    pins = tuple(_entry(raw, i, where) for i, raw in enumerate(doc["images"]))
    seen: set[tuple[str, str]] = set()
    for p in pins:
        if (p.repository, p.tag) in seen:
            raise ImageLockError(f"{where}: image {p.repository}:{p.tag} is listed twice")
        seen.add((p.repository, p.tag))
    return pins


def read_document(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ImageLockError(f"cannot read the image lock {path}: {exc}") from None
    parse(doc, str(path))
    return dict(doc)


def write_document(path: Path, doc: dict[str, Any]) -> None:
    """Validate, then write atomically: a reader sees the old lock or the new one, never half of one."""
    parse(doc, str(path))
    write_atomic(path, json.dumps(doc, indent=2) + "\n")


@lru_cache(maxsize=4)
def load(path: str | None = None) -> tuple[ImagePin, ...]:
    file = Path(path) if path else IMAGES_FILE
    return parse(read_document(file), str(file))


def split_ref(image: str) -> tuple[str, str | None, str | None]:
    """(repository, tag, digest) of an image reference; a `:` before the last `/` is a registry port."""
    name, _, digest = image.partition("@")
    head, _, last = name.rpartition("/")
    if ":" in last:
        last, tag = last.split(":", 1)
        return (f"{head}/{last}" if head else last), tag, digest or None
    return name, None, digest or None


def find(repository: str, tag: str, pins: tuple[ImagePin, ...] | None = None) -> ImagePin | None:
    for p in pins if pins is not None else load():
        if p.tag == tag and (p.repository == repository or (p.regional and _regional_match(p.repository, repository))):
            return p
    return None


def _regional_match(template: str, repository: str) -> bool:
    pattern = re.escape(template).replace(re.escape("{region}"), "[a-z0-9-]+")
    return re.fullmatch(pattern, repository) is not None


def pin_ref(image: str) -> str:
    """The image with its locked digest appended (unchanged when it already has one or the lock has none)."""
    repository, tag, digest = split_ref(image)
    if digest or tag is None:
        return image
    found = find(repository, tag)
    return f"{image}@{found.digest}" if found and found.digest else image


def chart_pins(chart: str, version: str) -> list[tuple[str, str, str]]:
    """(values path, the tag the chart defaults to there, the value that pins it) for this chart version's locked
    images. An entry names the chart version whose default tag it pins, so another version never gets it."""
    out: list[tuple[str, str, str]] = []
    for p in load():
        r = p.render
        if not p.digest or not r or r.get("form") not in VALUE_FORMS:
            continue
        if r.get("chart") != chart or r.get("version") != version:
            continue
        form = r["form"]
        value = {"hex": p.digest.split(":", 1)[1], "tag@digest": f"{p.tag}@{p.digest}", "digest": p.digest}[form]
        paths = [r["value"]] if isinstance(r["value"], str) else list(r["value"])
        out.extend((path, p.tag, value) for path in paths)
    return out


def chart_values(chart: str, version: str) -> dict[str, Any]:
    """The pins of `chart_pins` as a nested values overlay."""
    out: dict[str, Any] = {}
    for path, _tag, value in chart_pins(chart, version):
        node = out
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def pin_values(chart: str, version: str, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with this chart version's locked digests set, except where the release sets that value itself to
    something other than the locked tag (a tag gpucloud or the user chose is not silently replaced). `values` is
    not changed: the mappings along each set path are copied, everything else (Outputs included) is shared."""
    out = dict(values)
    for path, tag, value in chart_pins(chart, version):
        node = out
        *parents, leaf = path.split(".")
        for key in parents:
            child = node.get(key, {})
            if not isinstance(child, dict):
                break  # an Output or a scalar where the chart expects a mapping: leave the release's value
            node[key] = node = dict(child)
        else:
            if node.get(leaf) in (None, tag):
                node[leaf] = value
    return out


__all__ = [
    "IMAGES_FILE",
    "IMAGES_SOURCE",
    "ImageLockError",
    "ImagePin",
    "chart_pins",
    "chart_values",
    "find",
    "load",
    "parse",
    "pin_ref",
    "pin_values",
    "read_document",
    "split_ref",
    "write_document",
]
