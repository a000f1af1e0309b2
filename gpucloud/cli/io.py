"""Reading JSON inputs and writing outputs for sub-commands, with one clear error per bad file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpucloud.cli.errors import CliError
from gpucloud.fileio import decode_text


def read_text_file(path: str | Path, what: str) -> str:
    """A user-named text file's content, or one CliError naming the file, the problem and the fix."""
    p = Path(path)
    if p.is_dir():
        raise CliError(f"{what} {path} is a directory, not a file; give the path of a file inside it")
    if not p.exists():
        raise CliError(f"{what} file {path} does not exist")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {what} file {path}: {exc.strerror}; check its permissions") from None
    return decode_text(data, f"{what} file {path}", CliError)


def read_json(path: str, what: str) -> Any:
    text = read_text_file(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} file {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None


def write_output(text: str, out: str | None) -> None:
    """stdout, or --out FILE written atomically (the old file stays whole until the new one is complete)."""
    from gpucloud.fileio import clean_stale_tmp, write_atomic

    if out is None or out == "-":
        sys.stdout.write(text)
        return
    target = Path(out)
    if target.is_dir():
        raise CliError(f"cannot write --out {out}: it is a directory; give a file path, e.g. --out {out}/plan.txt")
    clean_stale_tmp(target)
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise CliError(f"cannot write --out {out}: {exc.strerror}; the previous file, if any, is unchanged") from None


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
