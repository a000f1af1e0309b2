"""How gpucloud reads the text files a user names, and the one way it writes a file.

Reading: `decode_text` turns bytes into text or into one message saying where the first bad byte is (a binary
file, or one saved in another encoding, is bad input, never an internal error).

Writing: a temporary file in the target's directory, fsync, rename over the target.

A reader (or a process killed at any step, or a full disk) then sees the old file whole or the new one whole,
never a truncated one: `os.replace` is atomic on POSIX within one file system, which is why the temporary file
sits in the target's own directory and not in /tmp. The directory is fsynced after the rename so that the new
name survives a power loss too. Stdlib only: every layer (CLI, caches, charts, prices) may import it.

Temporary files are named ``.<target name>.<pid>.<random>.tmp``; a process killed between creating one and the
rename leaves it behind, and `clean_stale` (run at each CLI start) removes those whose process is gone.
Also here: the same rule for gpucloud's scratch directories in the system temp dir (``gpucloud-helm-<pid>-*``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

# A leftover is only removed once it is this old: a process that just started writing owns a young one, and a
# PID reused by an unrelated process is not mistaken for the owner of an old one (the owner check runs first).
STALE_AFTER_S = 600.0
# Scratch directories named without a PID (as gpucloud 0.1.0 named them): only their age can tell.
UNOWNED_STALE_AFTER_S = 24 * 3600.0
SCRATCH_PREFIXES = ("gpucloud-helm-",)

_TMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp$")
_SCRATCH_NAME = re.compile(r"^(?P<prefix>gpucloud-[a-z]+-)(?:(?P<pid>\d+)-)?[A-Za-z0-9_]+$")


def decode_text(data: bytes, where: str, error: type[Exception]) -> str:
    """UTF-8 text (a BOM allowed), or `error` saying where the first bad byte is: a binary file, or one saved in
    another encoding, is bad input, not an internal error."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise error(f"{where} is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        raise error(f"{where} is a binary file (NUL byte at offset {nul}), not text; give a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from None


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    encoding: str = "utf-8",
    mode: int | None = None,
    parents: bool = False,
) -> Path:
    """Replace `path` with `data` atomically; raises OSError (the old file, if any, is left as it was).

    The new file gets `mode` (e.g. 0o755 for a binary), else the old file's permission bits, or the usual ones for
    a new file (0666 less the umask), not mkstemp's 0600. `parents` creates the missing directories first.
    """
    target = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    directory = target.parent
    if parents:
        directory.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(target) if mode is None else mode
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp")
    try:
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
    except BaseException:
        # Also on KeyboardInterrupt: the target is untouched, the half-written temporary file must go.
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(directory)
    return target


def write_cache_atomic(path: str | os.PathLike[str], data: str | bytes) -> bool:
    """`write_atomic` for a cache entry, whose loss only costs the next run a recomputation: creates the
    directory, and a read-only home or a full disk returns False instead of failing the command."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError:
        return False
    return True


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename itself has happened
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (one of another user counts: it is not ours to judge)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def scratch_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A TemporaryDirectory named ``<prefix><pid>-<random>`` so that `clean_stale` can tell when its owner died."""
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-")


def _stale(path: Path, pid: int | None, now: float, uid: int) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    if st.st_uid != uid:
        return False
    age = now - st.st_mtime
    if pid is None:
        return age > UNOWNED_STALE_AFTER_S
    return pid != os.getpid() and age > STALE_AFTER_S and not pid_alive(pid)


def clean_stale_tmp(target: Path) -> list[Path]:
    """Remove `write_atomic`'s leftovers for this one target (a killed earlier write of the same --out file)."""
    return _clean_tmp_files(target.parent, now=time.time(), uid=os.getuid(), name=target.name)


def _clean_tmp_files(directory: Path, *, now: float, uid: int, name: str | None = None) -> list[Path]:
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(".") and e.name.endswith(".tmp")]
    except OSError:
        return removed
    for entry in entries:
        match = _TMP_NAME.match(entry.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        path = Path(entry.path)
        if entry.is_file(follow_symlinks=False) and _stale(path, int(match["pid"]), now, uid):
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                pass
    return removed


def clean_stale(directories: list[Path] | None = None, now: float | None = None) -> list[Path]:
    """Remove what killed gpucloud processes left: scratch directories in the system temp dir and temporary
    files of `write_atomic` in `directories` (the caches). Only entries of this user, whose owning process is
    gone and that are old enough; everything else, and any error, is left alone. Returns what was removed."""
    now = time.time() if now is None else now
    uid = os.getuid()
    removed: list[Path] = []
    temp_root = Path(tempfile.gettempdir())
    try:
        entries = [e for e in os.scandir(temp_root) if e.name.startswith(SCRATCH_PREFIXES)]
    except OSError:
        entries = []
    for entry in entries:
        match = _SCRATCH_NAME.match(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        pid = int(match["pid"]) if match["pid"] else None
        path = Path(entry.path)
        if _stale(path, pid, now, uid):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                removed.append(path)
    for directory in directories or []:
        removed += _clean_tmp_files(directory, now=now, uid=uid)
    return removed
