"""Reading JSON inputs and writing outputs for sub-commands, with one clear error per bad file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import CliError


def read_json(path: str, what: str) -> Any:
    p = Path(path)
    if not p.is_file():
        raise CliError(f"{what} file {path} does not exist")
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} file {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None


def write_output(text: str, out: str | None) -> None:
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text)
    except OSError as exc:
        raise CliError(f"cannot write --out {out}: {exc.strerror}") from None


NOT_A_TERMINAL_WIDTH = 80
MIN_WIDTH = 40


def output_width(requested: int | None, to_file: bool = False) -> int:
    """Columns for text output: --width when given, the terminal's width on a terminal, else 80."""
    import shutil

    if requested is not None:
        return requested
    if not to_file and sys.stdout.isatty():
        return max(MIN_WIDTH, shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns)
    return NOT_A_TERMINAL_WIDTH


def width_arg(value: str) -> int:
    """argparse type of --width: an integer of at least 40 columns."""
    import argparse

    try:
        width = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a number of columns, e.g. --width 100") from None
    if width < MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"{width} columns is too narrow; use --width {MIN_WIDTH} or more")
    return width
