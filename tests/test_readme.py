"""The README says what the tools really do: its command synopses match the parsers, its example outputs are
what the commands print today, and its real-CLI steps work on a new backend."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gpucloud.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the ``` blocks, de-indented (a block inside a list item is indented)."""
    blocks = []
    for match in re.finditer(r"^( *)```[a-z]*\n(.*?)^\1```", text, re.S | re.M):
        indent = len(match.group(1))
        blocks.append("".join(line[indent:] + "\n" for line in match.group(2).splitlines()))
    return blocks


def block_starting(prefix: str) -> str:
    (block,) = [b for b in fenced_blocks(README) if b.startswith(prefix)]
    return block


def options(command: str) -> set[str]:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return {o for a in sub._actions for o in a.option_strings if o.startswith("--") and o != "--help"}


def test_synopsis_lists_every_option_of_plan_and_stacks() -> None:
    synopsis = block_starting("gpucloud plan [")
    lines = synopsis.splitlines()
    plan_text = "\n".join(line for line in lines if not line.startswith("gpucloud stacks"))
    stacks_text = next(line for line in lines if line.startswith("gpucloud stacks"))
    assert set(re.findall(r"--[a-z-]+", plan_text)) == options("plan")
    assert set(re.findall(r"--[a-z-]+", stacks_text)) == options("stacks")


def test_stacks_example_is_the_real_output(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    block = block_starting("$ gpucloud stacks\n")
    monkeypatch.chdir(ROOT)
    assert main(["stacks"]) == 0
    assert capsys.readouterr().out == block.removeprefix("$ gpucloud stacks\n")


def test_spec_error_example_is_the_real_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the README describes it: region us-east-9 and the first pool's desiredSize 5 in stacks/Pulumi.dev.yaml.
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    platform = doc["config"]["gpucloud:platform"]
    platform["region"] = "us-east-9"
    platform["nodePools"][0]["desiredSize"] = 5
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "Pulumi.yaml").write_text(
        yaml.safe_dump(
            {"name": "gpucloud", "runtime": "python", "main": str(ROOT / "__main__.py"), "stackConfigDir": "stacks"}
        )
    )
    monkeypatch.chdir(tmp_path)
    assert main(["plan"]) == 2
    assert capsys.readouterr().err == block_starting("gpucloud: error: invalid stack 'dev'")


def test_real_cli_steps_create_the_stack_on_a_new_backend() -> None:
    # `pulumi stack select NAME` fails on a backend that has no such stack yet; `--create` (or `stack init`) works.
    lines = [line.strip() for block in fenced_blocks(README) for line in block.splitlines()]
    selects = [line for line in lines if line.startswith("pulumi stack select")]
    assert selects, "the README shows how to select a stack"
    assert all("--create" in line for line in selects), selects
