"""docs/advisor.md's `gpucloud recommend` example is the command's output, line for line (its figures, such as
the count of excluded types, were once written by hand and drifted from what the command prints)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gpucloud.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "advisor.md"
EXAMPLE = re.compile(r"Example \(`(?P<command>gpucloud recommend [^`]+)`\):\n\n```\n(?P<output>.*?)```", re.S)


def test_recommend_example_is_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    match = EXAMPLE.search(DOC.read_text(encoding="utf-8"))
    assert match is not None, "docs/advisor.md lost its `gpucloud recommend` example"
    argv = shlex.split(match["command"])[1:]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines() == match["output"].splitlines()
