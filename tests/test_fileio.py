"""gpucloud.fileio: atomic writes (the old file stays whole on any failure), text decoding with one message, and
the cleaning of what killed processes left (only this user's, owner gone, old enough)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpucloud import fileio
from gpucloud.charts import helm


def dead_pid() -> int:
    """The PID of a process that has exited (and been reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old")
    target.chmod(0o640)
    fileio.write_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.txt"
    fileio.write_atomic(fresh, b"\x00\x01")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.txt", "plan.json"]


def test_a_full_disk_leaves_the_old_file_whole_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.txt"
    target.write_text("the old plan")

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "write", full)
    with pytest.raises(OSError, match="No space left on device"):
        fileio.write_atomic(target, "x" * 100_000)
    monkeypatch.undo()
    assert target.read_text() == "the old plan"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    # A cache write swallows it: a cache is an optimisation.
    monkeypatch.setattr(fileio.os, "write", full)
    assert fileio.write_cache_atomic(tmp_path / "sub" / "entry.marshal", b"data") is False


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a\x00b", "f is a binary file (NUL byte at offset 1), not text; give a text file"),
        (b"caf\xe9", "f is not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"),
        ("x".encode("utf-16"), "f is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"),
    ],
)
def test_decode_text_names_the_problem(data: bytes, message: str) -> None:
    with pytest.raises(ValueError) as err:
        fileio.decode_text(data, "f", ValueError)
    assert str(err.value) == message


def test_decode_text_accepts_utf8_with_a_bom() -> None:
    assert fileio.decode_text("\ufeffname: p".encode(), "f", ValueError) == "name: p"


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_clean_stale_removes_only_dead_and_old_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileio.tempfile, "gettempdir", lambda: str(tmp_path))
    gone, alive = dead_pid(), os.getppid()
    old = fileio.STALE_AFTER_S + 60
    dead_old = tmp_path / f"gpucloud-helm-{gone}-abc123"
    dead_young = tmp_path / f"gpucloud-helm-{gone}-young1"
    alive_old = tmp_path / f"gpucloud-helm-{alive}-alive1"
    unowned_old = tmp_path / "gpucloud-helm-x1y2z3"
    unowned_ancient = tmp_path / "gpucloud-helm-q9r8s7"
    foreign = tmp_path / f"other-helm-{gone}-abc"
    for d in (dead_old, dead_young, alive_old, unowned_old, unowned_ancient, foreign):
        d.mkdir()
        (d / "values.json").write_text("{}")
    for d in (dead_old, alive_old, unowned_old, foreign):
        _age(d, old)
    _age(unowned_ancient, fileio.UNOWNED_STALE_AFTER_S + 60)
    cache = tmp_path / "cache"
    cache.mkdir()
    tmp_dead = cache / f".entry.marshal.{gone}.k2j3h4.tmp"
    tmp_alive = cache / f".entry.marshal.{alive}.a1b2c3.tmp"
    entry = cache / "entry.marshal"
    for f in (tmp_dead, tmp_alive, entry):
        f.write_bytes(b"x")
        _age(f, old)
    removed = fileio.clean_stale([cache])
    assert sorted(p.name for p in removed) == sorted([dead_old.name, unowned_ancient.name, tmp_dead.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["cache", dead_young.name, alive_old.name, unowned_old.name, foreign.name]
    )
    assert sorted(p.name for p in cache.iterdir()) == sorted([tmp_alive.name, entry.name])


@pytest.mark.skipif(helm.find_helm() is None, reason="no helm binary")
def test_helm_scratch_directories_carry_the_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = fileio.scratch_dir

    def spy(prefix: str) -> object:
        scratch = real(prefix)
        seen.append(Path(scratch.name).name)
        return scratch

    monkeypatch.setattr(helm, "scratch_dir", spy)
    with pytest.raises(helm.HelmError):
        helm.helm_template("/nonexistent-chart", release="r", namespace="n")
    assert len(seen) == 1
    assert seen[0].startswith(f"gpucloud-helm-{os.getpid()}-")
    assert not (Path(fileio.tempfile.gettempdir()) / seen[0]).exists()
