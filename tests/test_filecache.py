"""gpucloud.filecache: values derived from files are stored per input, read back by a later process while the
inputs' signature holds, and derived again (overwriting the one entry) when it changes."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from gpucloud import filecache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c" / "derived"


def test_memo_reads_back_while_the_signature_holds(cache: Path) -> None:
    calls: list[int] = []

    def derive() -> dict[str, tuple[int, ...]]:
        calls.append(1)
        return {"a": (1, 2)}

    assert filecache.memo("k", "n", ("sig", 1), derive) == {"a": (1, 2)}
    assert filecache.memo("k", "n", ("sig", 1), derive) == {"a": (1, 2)}
    assert len(calls) == 1
    assert filecache.memo("k", "n", ("sig", 2), derive) == {"a": (1, 2)}
    assert len(calls) == 2
    assert filecache.memo("k", "n", ("sig", 2), derive) == {"a": (1, 2)}  # the overwritten entry is read back
    assert len(calls) == 2
    # One entry per (kind, name), whatever the signature was, named by both and the Python and cache format.
    digest = hashlib.sha256(b"k\0n").hexdigest()[:32]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-f{filecache.FORMAT}"
    assert sorted(p.name for p in cache.iterdir()) == [f"k-{digest}-{tag}.marshal"]
    assert filecache.memo("k", "other", ("sig", 2), derive) == {"a": (1, 2)}
    assert len(calls) == 3


def test_a_corrupt_entry_is_a_miss(cache: Path) -> None:
    filecache.memo("k", "n", 1, lambda: "first")
    (entry,) = cache.glob("k-*.marshal")
    entry.write_bytes(b"\x00garbage")
    assert filecache.memo("k", "n", 1, lambda: "again") == "again"
    assert filecache.memo("k", "n", 1, lambda: "unused") == "again"


def test_an_unwritable_cache_still_derives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(blocker))
    assert filecache.memo("k", "n", 1, lambda: [1]) == [1]


def test_unmarshalable_values_are_returned_not_stored(cache: Path) -> None:
    sentinel = object()
    assert filecache.memo("k", "n", 1, lambda: sentinel) is sentinel
    assert not cache.exists() or list(cache.glob("*.marshal")) == []


def test_cache_dir_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUCLOUD_CACHE_DIR")
    assert filecache.cache_dir() == Path.home() / ".cache" / "gpucloud" / "derived"
