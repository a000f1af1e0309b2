"""Advisor fixtures: every test starts with an empty plan-advice optimiser memo.

The memo (gpucloud.advisor.plan_advice._MEMO) keeps each optimiser answer for the life of its price book, which
is the process's cached one; without this a test could be answered from another test's rates and never reach
the code that reads its own.
"""

from __future__ import annotations

import pytest

from gpucloud.advisor import plan_advice


@pytest.fixture(autouse=True)
def _fresh_mix_memo() -> None:
    plan_advice._MEMO.clear()
