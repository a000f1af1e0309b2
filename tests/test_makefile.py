"""The first `make` shows progress: no step of the install is silent, and `make plan` plans with the stack's
policy config."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def recipe(target_prefix: str) -> list[str]:
    match = re.search(rf"^{re.escape(target_prefix)}[^\n]*\n((?:\t[^\n]*\n)+)", MAKEFILE, re.M)
    assert match is not None, target_prefix
    return [line.strip() for line in match.group(1).splitlines()]


def test_install_steps_announce_themselves_and_pip_is_not_quiet() -> None:
    steps = recipe("$(STAMP):")
    pip = [line for line in steps if " -m pip " in line]
    assert len(pip) == 2
    assert not [line for line in pip if re.search(r"\s(--quiet|-q+)(\s|$)", line)]
    announced = [line for line in steps if line.startswith('@echo "==> [')]
    assert [a.split("]")[0] for a in announced] == [
        '@echo "==> [1/4',
        '@echo "==> [2/4',
        '@echo "==> [3/4',
        '@echo "==> [4/4',
    ]
    # Each announcement comes right before the work it announces.
    for i, line in enumerate(steps[:-1]):
        if line.startswith("@echo"):
            assert not steps[i + 1].startswith("@echo")


def test_make_plan_leaves_the_policy_config_to_the_stack() -> None:
    assert recipe("plan:") == ["$(VENV)/bin/gpucloud plan --stack $(STACK)"]
    assert recipe("plan-all:") == ["$(VENV)/bin/gpucloud plan --all"]
