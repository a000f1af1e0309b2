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
