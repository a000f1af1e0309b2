"""`gpucloud plan` SIGKILLed at a write never leaves a broken `--out` file or cache entry: each file is the old one
whole or the new one whole (what gpucloud.fileio.write_atomic promises: temporary file in the same directory,
fsync, rename).

Each plan runs in a forked child of the test process (imports already warm, so a child costs the plan, not the
interpreter start) whose gpucloud.fileio calls `os` and `tempfile` through a proxy that counts every step of a
write (mkstemp, write, fchmod, fsync, close, replace, and the directory's open/fsync/close) and SIGKILLs the
process before step N. A first child only counts, and its files are the reference:
- `--out` (a small raw program, so that the many kills stay quick): killed before every step of its write, the
  file holds the old text or the reference output, and nothing else;
- caches (the dev platform on a cold cache: rendered charts, chart models, verdicts, derived facts): killed
  before the payload, before the rename and after it, each time in the first entry of another cache (a cold
  dev plan takes long, so three kills, not every step: the steps are the same helper's as --out's); every entry
  left loads and matches the reference's.
"""

from __future__ import annotations

import io
import json
import marshal
import os
import signal
import tempfile
import time
import types
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import gpucloud.fileio as fileio
from gpucloud.cli import main

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "fixtures" / "raw_program"
STEPS = ("open", "write", "fchmod", "fsync", "close", "replace")
OLD = "an older plan, still whole\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _child(argv: list[str], cache: Path, kill_at: int, log: Path) -> None:
    """In the forked child: route fileio's os/tempfile calls through counters, plan, exit (or be killed)."""
    os.environ["GPUCLOUD_CACHE_DIR"] = str(cache)
    # Helm's scratch directories of this child go beside its cache, not into the system temp dir.
    scratch = cache.parent / f"{cache.name}-scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    tempfile.tempdir = str(scratch)
    count = 0
    target = [""]

    def step(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            if name == "mkstemp":
                name_part = str(kwargs.get("prefix", ""))[1:].rsplit(".", 2)[0]  # ".<name>.<pid>."
                target[0] = f"{Path(str(kwargs.get('dir', ''))).name}/{name_part}"
            with log.open("a") as fh:
                fh.write(f"{count} {name} {target[0]}\n")
            if count == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)

        return wrapped

    proxy = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    for name in STEPS:
        setattr(proxy, name, step(name, getattr(os, name)))
    fileio.os = proxy  # type: ignore[assignment]
    fileio.tempfile = types.SimpleNamespace(  # type: ignore[assignment]
        mkstemp=step("mkstemp", tempfile.mkstemp),
        TemporaryDirectory=tempfile.TemporaryDirectory,
        gettempdir=tempfile.gettempdir,
    )
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = main(argv)
    os._exit(code)


def run_plan(program: Path, stack: str, cache: Path, out: Path, kill_at: int, log: Path) -> int:
    """The child's exit status: its exit code, or -9 when it was killed."""
    argv = ["plan", "--program", str(program), "--stack", stack, "--format", "json", "--out", str(out)]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            _child(argv, cache, kill_at, log)
        finally:
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def steps_of(log: Path) -> list[tuple[int, str, str]]:
    rows = [line.split(" ", 2) for line in log.read_text().splitlines()]
    return [(int(n), name, what) for n, name, what in rows]


def entries(directory: Path) -> dict[str, Any]:
    """Every cache entry, loaded as gpucloud loads it (a truncated marshal or JSON file does not load) and
    reduced to what must not change between two runs: marshal's bytes vary with reference counts, a chart render
    with the certificates and passwords its templates generate (genCA, randAlphaNum), and the verdicts with the
    renders they digest; so a render counts by its objects' identities, anything else by its type. Temporary
    files of interrupted writes are not entries: their names start with '.'."""
    out: dict[str, Any] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            data = path.read_bytes()
            value = marshal.loads(data) if path.suffix == ".marshal" else json.loads(data)
            if isinstance(value, dict) and set(value) == {"objects", "error"}:
                value = [(o["apiVersion"], o["kind"], o["metadata"].get("name")) for o in value["objects"]]
            else:
                value = type(value).__name__
            out[str(path.relative_to(directory))] = value
    return out


def test_out_killed_at_every_step_is_old_or_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.plan  # noqa: F401  (warm imports: each forked child then only plans)

    cache, log = tmp_path / "cache", tmp_path / "ref.log"
    reference_out = tmp_path / "out.json"
    assert run_plan(RAW, "test", cache, reference_out, 0, log) == 0
    expected = reference_out.read_text()
    json.loads(expected)
    # A second counting run on the now warm cache: its steps are the ones the kills below count.
    reference_out.unlink()
    warm_log = tmp_path / "warm.log"
    assert run_plan(RAW, "test", cache, reference_out, 0, warm_log) == 0
    out_steps = [n for n, _name, what in steps_of(warm_log) if what == f"{tmp_path.name}/out.json"]
    names = [name for _n, name, what in steps_of(warm_log) if what == f"{tmp_path.name}/out.json"]
    # mkstemp, write, fchmod, fsync, close, replace, then the directory's open, fsync, close.
    assert names == ["mkstemp", "write", "fchmod", "fsync", "close", "replace", "open", "fsync", "close"]
    for n in out_steps:
        reference_out.write_text(OLD)
        assert run_plan(RAW, "test", cache, reference_out, n, tmp_path / f"kill-{n}.log") == -signal.SIGKILL
        index = n - out_steps[0]
        # Before the rename the old file is all there is; from the rename on, the new one, whole.
        assert reference_out.read_text() == (OLD if index <= names.index("replace") else expected), (
            f"killed before step {n} ({names[index]})"
        )
    # A killed write leaves at most its temporary file, which the next start removes once its owner is gone.
    leftovers = sorted(p.name for p in tmp_path.glob(".out.json.*.tmp"))
    assert len(leftovers) == 5
    later = time.time() + fileio.STALE_AFTER_S + 1
    monkeypatch.setattr(fileio.tempfile, "gettempdir", lambda: str(tmp_path / "cache-scratch"))
    assert len(fileio.clean_stale([tmp_path], now=later)) == 5
    assert sorted(p.name for p in tmp_path.glob(".out.json.*.tmp")) == []


def test_caches_killed_at_each_kind_of_step_stay_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.plan
    import gpucloud.report  # noqa: F401

    reference_cache, log = tmp_path / "ref-cache", tmp_path / "ref.log"
    assert run_plan(ROOT, "dev", reference_cache, tmp_path / "ref.json", 0, log) == 0
    reference = entries(reference_cache)
    by_cache: dict[str, list[list[tuple[int, str]]]] = {}
    current: list[tuple[int, str]] = []
    for n, name, what in steps_of(log):
        if name == "mkstemp":
            current = []
            by_cache.setdefault(what.split("/")[0], []).append(current)
        current.append((n, name))
    del by_cache[tmp_path.name]  # the --out file: the other test
    # Rendered charts and chart models (helm) and verdicts (derived SDK facts too, unless this process already
    # holds them): every cache the plan writes.
    assert {"helm", "verdicts"} <= set(by_cache), sorted(by_cache)
    caches = sorted(by_cache)
    # Before the payload, before the rename, and after it (the directory's fsync).
    for index, kind in enumerate(("write", "replace", "open")):
        write = by_cache[caches[index % len(caches)]][0]  # the first entry of that cache: the kill comes early
        kill_at = next(n for n, name in write if name == kind)
        cache = tmp_path / f"cache-{index}"
        status = run_plan(ROOT, "dev", cache, tmp_path / f"out-{index}.json", kill_at, tmp_path / f"k{index}.log")
        assert status == -signal.SIGKILL
        for name, value in entries(cache).items():
            assert value == reference[name], f"killed before step {kill_at} ({kind}): cache entry {name} is broken"
        # Helm renders run in parallel: a kill can leak the scratch directory of a render in flight. The next
        # start removes every one whose owner is gone (here: once old enough, as it would be ten minutes on).
        scratch = tmp_path / f"cache-{index}-scratch"
        monkeypatch.setattr(fileio.tempfile, "gettempdir", lambda scratch=scratch: str(scratch))
        fileio.clean_stale([], now=time.time() + fileio.STALE_AFTER_S + 1)
        assert [p.name for p in scratch.iterdir() if p.name.startswith("gpucloud-helm-")] == []
