"""`gpucloud images show|refresh`: the image lock (gpucloud/charts/images.json), pinned digests and their sources."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_AWS_UNAVAILABLE, EXIT_OK, CliError
from gpucloud.cli.io import write_output


def register(sub: Any) -> None:
    p = sub.add_parser(
        "images",
        help="show or refresh the image lock (digests of every image gpucloud deploys)",
        description="The image lock: every container image the shipped plans deploy, by tag and digest, with the "
        "source of each digest (gpucloud/charts/images.json). See docs/charts.md.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    s = actions.add_parser("show", help="print each locked image, its digest or why it has none")
    s.add_argument("--format", choices=("text", "json"), default="text")
    s.set_defaults(func=run_show)
    r = actions.add_parser(
        "refresh",
        help="resolve each locked tag to its digest at its registry and rewrite the lock",
        description="For each locked image, ask its registry (OCI distribution API, anonymous token auth) for the "
        "digest of its tag, and write the lock back atomically once all have answered. A registry that cannot be "
        "reached exits 6 and leaves the lock as it was.",
    )
    r.add_argument("--only", nargs="+", default=None, metavar="IMAGE", help="only these repositories or repo:tag")
    r.add_argument("--lock", default=None, metavar="FILE", help="the lock to read (default: the packaged one)")
    r.add_argument("--out", default=None, metavar="FILE", help="write here (default: the lock that was read)")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_refresh)


def run_show(args: argparse.Namespace) -> int:
    from gpucloud.charts import images

    try:
        pins = images.load()
    except images.ImageLockError as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        out = [
            {
                "image": f"{p.repository}:{p.tag}",
                "digest": p.digest,
                "index": p.index,
                "source": p.source,
                "unpinned": p.unpinned,
            }
            for p in pins
        ]
        write_output(json.dumps({"file": str(images.IMAGES_FILE), "images": out}, indent=2) + "\n", None)
        return EXIT_OK
    pinned = sum(1 for p in pins if p.digest)
    lines = [f"Image lock {images.IMAGES_FILE}: {pinned} of {len(pins)} images pinned by digest."]
    for p in pins:
        lines.append(f"  {p.ref}" if p.digest else f"  {p.repository}:{p.tag}  (tag only: {p.unpinned})")
    write_output("\n".join(lines) + "\n", None)
    return EXIT_OK


def run_refresh(args: argparse.Namespace, client: Any = None) -> int:
    from gpucloud.charts import images
    from gpucloud.charts.images_refresh import refresh
    from gpucloud.charts.registry import Client, RegistryUnavailable, TagNotFound

    source = Path(args.lock) if args.lock else images.IMAGES_FILE
    target = Path(args.out) if args.out else source
    try:
        result = refresh(source, target, client if client is not None else Client(), only=args.only)
    except images.ImageLockError as exc:
        raise CliError(str(exc)) from None
    except TagNotFound as exc:
        raise CliError(f"{exc}; fix the tag in {source} (the lock was not changed)") from None
    except RegistryUnavailable as exc:
        raise CliError(
            f"registry unavailable: {exc}; the lock was not changed, run again later", EXIT_AWS_UNAVAILABLE
        ) from None
    if args.format == "json":
        write_output(json.dumps(result, indent=2) + "\n", None)
        return EXIT_OK
    lines = [f"Refreshed {result['file']}: {len(result['changed'])} changed, {result['unchanged']} unchanged."]
    lines += [f"  {c['image']}: {c['old'] or '(tag only)'} -> {c['new']}" for c in result["changed"]]
    lines += [f"  skipped {s['image']}: {s['why']}" for s in result["skipped"]]
    write_output("\n".join(lines) + "\n", None)
    return EXIT_OK
