"""`gpucloud pack path` and `gpucloud pack export DIR`: the policy pack for `pulumi preview` and `pulumi policy
publish` from any repository (gpucloud/pack.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_OK, CliError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "pack",
        help="where the installed policy pack is, or a standalone copy to publish",
        description="The gpucloud-guardrails CrossGuard pack. `path` prints the installed pack's directory, for "
        '`pulumi preview --policy-pack "$(gpucloud pack path)" --policy-pack-config '
        '"$(gpucloud pack path)/configs/dev.json"`; `export DIR` writes a standalone pack directory '
        "(requirements pinning this gpucloud) for `pulumi policy publish`.",
    )
    actions = p.add_subparsers(dest="pack_command", metavar="ACTION")
    actions.required = True
    path = actions.add_parser("path", help="print the installed pack's directory")
    path.set_defaults(func=run_path)
    export = actions.add_parser("export", help="write a standalone pack directory for `pulumi policy publish`")
    export.add_argument("dir", help="a new or empty directory")
    export.set_defaults(func=run_export)


def _pack_dir() -> Path:
    from gpucloud.guard.packs import pack_dir

    return pack_dir()


def run_path(args: argparse.Namespace) -> int:
    from gpucloud.pack import virtualenv_mismatch

    directory = _pack_dir()
    if not (directory / "PulumiPolicy.yaml").is_file():
        raise CliError(
            f"no policy pack at {directory} (GPUCLOUD_POLICY_PACK names a directory without PulumiPolicy.yaml)"
        )
    why = virtualenv_mismatch(directory)
    if why is not None:
        print(f"gpucloud: warning: {why}", file=sys.stderr)
    print(directory)
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    from gpucloud.pack import PackExportError, export_pack

    try:
        written = export_pack(Path(args.dir), _pack_dir())
    except PackExportError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write the pack into {args.dir}: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    print(f"publish it with: cd {args.dir} && pulumi policy publish [ORG]", file=sys.stderr)
    return EXIT_OK
