"""`--shard I/N`: split a list of stacks over N CI runners, the same way on every runner.

Stacks are dealt round-robin in id order, so shard sizes differ by at most one and a runner's share does not
depend on the order the stacks were found in; each shard then plans its share in dependency order.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpucloud.plan.engine import PlanInputError
from gpucloud.stacks.discovery import StackInfo


class ShardError(PlanInputError):
    """A --shard value that is not I/N with 1 <= I <= N."""


def parse_shard(text: str) -> tuple[int, int]:
    """(index, count) from 'I/N', 1-based as CI matrices count."""
    index_text, sep, count_text = text.partition("/")
    if not sep or not index_text.strip().isdigit() or not count_text.strip().isdigit():
        raise ShardError(f"--shard '{text}': expected I/N with whole numbers, e.g. --shard 2/4 (the second of four)")
    index, count = int(index_text), int(count_text)
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard '{text}': I must be between 1 and N, and N at least 1 (e.g. 1/{max(count, 1)})")
    return index, count


def shard(stacks: Sequence[StackInfo], index: int, count: int) -> list[StackInfo]:
    """The stacks shard `index` of `count` plans, in the order given (dependency order)."""
    ranked = sorted(stacks, key=lambda s: s.id)
    mine = {s.id for s in ranked[index - 1 :: count]}
    return [s for s in stacks if s.id in mine]
