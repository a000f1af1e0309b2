"""GC-SEC-150 k8s-image-digest: every container image a pod would run is pinned by digest.

A tag is a pointer the registry's owner can move: the same manifest can run different code tomorrow, and two
nodes pulling an hour apart can run different images. An image reference (distribution/reference grammar:
``[registry/]path[:tag][@algorithm:hex]``) with a digest always resolves to the same content, whatever its tag
says. Two grades of tag-only references are told apart in the message:

- a *moving* tag: no tag at all (the runtime pulls ``latest``), ``latest``, or a tag with no digit in it
  (``stable``, ``main``, ``edge``), which by convention follows a branch;
- a *version* tag (``v0.14.0``, ``3.12-slim``): stable by convention only, since registries let the owner
  re-push it (and a partial version such as ``3.12-slim`` is re-pushed at every patch release).

Every container list of every pod spec the plan shows is read (containers, initContainers, ephemeralContainers;
registered objects and objects rendered from charts, found as in ``k8s.py``). Images reviewed as allowed by tag
are exempted by image glob in the config, each with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    UnknownValueError,
    get,
    maps,
    text,
    unknown,
)
from ..k8s import objects, pod_specs, unseen_releases

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# distribution/reference: a digest is "algorithm:encoded"; sha256 (64 hex) and sha512 (128 hex) are registered.
_DIGEST = re.compile(r"@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")


def tag_of(image: str) -> str | None:
    """The tag of a reference without a digest, or None when it has none (a ``:`` before the last ``/`` is a
    registry port, not a tag)."""
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def grade(image: str) -> str | None:
    """None for a digest-pinned reference, else "moving" or "version" (see the module docstring)."""
    if _DIGEST.search(image):
        return None
    tag = tag_of(image)
    if tag is None or tag == "latest" or not any(ch.isdigit() for ch in tag):
        return "moving"
    return "version"


def _why(image: str, kind: str) -> str:
    tag = tag_of(image)
    if kind == "version":
        return f"{image} (version tag {tag!r}: the registry lets its owner re-push it)"
    shown = "no tag, so the runtime pulls 'latest'" if tag is None else f"moving tag {tag!r}"
    return f"{image} ({shown}: worse than a version tag, it changes under the same reference)"


def _exempt(image: str, exemptions: Any) -> bool:
    return any(
        isinstance(e, Mapping) and fnmatchcase(image, str(e.get("image")))
        for e in (exemptions if isinstance(exemptions, list) else [])
    )


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    undecided: list[str] = []
    for obj in objects(args.resources):
        found: dict[str, str] = {}
        try:
            for _path, spec in pod_specs(obj):
                for lst in CONTAINER_LISTS:
                    for c in maps(get(spec, lst)):
                        image = text(get(c, "image"))
                        kind = grade(image) if image else None
                        if kind and not _exempt(image, cfg["exemptions"]):
                            found[image] = kind
        except UnknownValueError:
            undecided.append(obj.ref)
            continue
        if found:
            # Moving tags first: they are the worse of the two.
            shown = "; ".join(_why(i, k) for i, k in sorted(found.items(), key=lambda x: (x[1] != "moving", x[0])))
            report(
                obj.urn,
                f"{obj.ref} runs images by tag, not digest: {shown}. Fix: pin each image by digest "
                "(image: repo:tag@sha256:..., the digest from `crane digest` or the registry's manifest API), or "
                'add {"image": "<glob>", "reason": "..."} to exemptions for an image reviewed to run by tag.',
            )
    undecided += [
        f"{r.resource_type.rsplit(':', 1)[-1]} {r.name} (rendered objects not visible)"
        for r in unseen_releases(args.resources)
    ]
    if undecided:
        raise unknown(
            "spec",
            "pod specs with images unknown at preview, or charts whose objects the pack cannot see: "
            f"{sorted(undecided)}",
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-150",
    name="k8s-image-digest",
    description="Every container image of every pod the plan would run, registered or rendered from a chart, "
    "is pinned by digest; a moving tag (latest, no tag) is reported as worse than a version tag.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Pin each image by digest (repo:tag@sha256:<digest>); for a chart, set the chart's image "
    "digest value where it has one. Exempt an image reviewed to run by tag by glob with a reason.",
    references=("CKV_K8S_14", "CKV_K8S_43", "distribution/reference"),
    kind="stack",
    validate=validate,
    config={
        "exemptions": {
            "type": "array",
            "default": [],
            "description": "Images allowed by tag: an image glob (fnmatch, matched against the whole reference) "
            "with the reason it is allowed.",
            "items": {
                "type": "object",
                "properties": {
                    "image": {"type": "string", "minLength": 1},
                    "reason": {"type": "string", "minLength": 1},
                },
                "required": ["image", "reason"],
                "additionalProperties": False,
            },
        },
    },
)
