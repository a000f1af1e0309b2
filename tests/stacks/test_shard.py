"""--shard I/N: a deterministic partition of the stacks, balanced, in dependency order within a shard."""

from __future__ import annotations

import pytest

from gpucloud.plan.engine import PlanInputError
from gpucloud.stacks.discovery import StackInfo
from gpucloud.stacks.shard import ShardError, parse_shard, shard


def stacks(n: int) -> list[StackInfo]:
    return [StackInfo(f"p{i:02d}", "dev", f"d{i}", f"d{i}/Pulumi.dev.yaml") for i in range(n)]


@pytest.mark.parametrize(("text", "expected"), [("1/1", (1, 1)), ("2/4", (2, 4)), ("4/4", (4, 4)), (" 3 / 5 ", (3, 5))])
def test_parse_shard(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2", "--shard '2': expected I/N with whole numbers, e.g. --shard 2/4 (the second of four)"),
        ("a/4", "--shard 'a/4': expected I/N with whole numbers, e.g. --shard 2/4 (the second of four)"),
        ("1/b", "--shard '1/b': expected I/N with whole numbers, e.g. --shard 2/4 (the second of four)"),
        ("-1/4", "--shard '-1/4': expected I/N with whole numbers, e.g. --shard 2/4 (the second of four)"),
        ("0/4", "--shard '0/4': I must be between 1 and N, and N at least 1 (e.g. 1/4)"),
        ("5/4", "--shard '5/4': I must be between 1 and N, and N at least 1 (e.g. 1/4)"),
        ("0/0", "--shard '0/0': I must be between 1 and N, and N at least 1 (e.g. 1/1)"),
        ("1/0", "--shard '1/0': I must be between 1 and N, and N at least 1 (e.g. 1/1)"),
    ],
)
def test_bad_shards_say_what_is_expected(text: str, message: str) -> None:
    with pytest.raises(ShardError) as err:
        parse_shard(text)
    assert str(err.value) == message
    assert isinstance(err.value, PlanInputError)


@pytest.mark.parametrize(("n", "count"), [(23, 4), (4, 3), (2, 5), (7, 1)])
def test_shards_partition_the_stacks_evenly(n: int, count: int) -> None:
    all_stacks = stacks(n)
    shares = [shard(all_stacks, i, count) for i in range(1, count + 1)]
    ids = [s.id for share in shares for s in share]
    assert sorted(ids) == sorted(s.id for s in all_stacks)
    assert len(ids) == len(set(ids))
    sizes = [len(share) for share in shares]
    assert max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)


def test_shards_do_not_depend_on_the_order_stacks_were_found_in() -> None:
    forward, backward = stacks(9), list(reversed(stacks(9)))
    for i in (1, 2, 3):
        assert {s.id for s in shard(forward, i, 3)} == {s.id for s in shard(backward, i, 3)}
    assert [s.id for s in shard(forward, 1, 3)] == ["p00/dev", "p03/dev", "p06/dev"]
    assert [s.id for s in shard(forward, 3, 3)] == ["p02/dev", "p05/dev", "p08/dev"]


def test_a_shard_keeps_the_given_order() -> None:
    given = list(reversed(stacks(6)))
    assert [s.id for s in shard(given, 1, 2)] == ["p04/dev", "p02/dev", "p00/dev"]
