"""An on-disk memo of what is derived from files nobody here changes between runs (vendored manifests, the
installed provider SDKs), so that a fresh `gpucloud plan` process reads the result back instead of parsing again.

An entry is one marshal file per (kind, name) under $GPUCLOUD_CACHE_DIR/derived (else ~/.cache/gpucloud/derived),
holding the signature of the inputs it was derived from: a changed input is a miss and overwrites the entry, so
the directory holds at most one entry per input and never grows with edits. marshal's format can change between
Python versions, so the version is part of the entry's name, and an entry that does not load is a miss too.
A cache is an optimisation: an unreadable or read-only directory only means the value is derived again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

from gpucloud.fileio import write_cache_atomic

CACHE_ENV = "GPUCLOUD_CACHE_DIR"
# Bump when a cached form changes, so an old entry is never read as the new form.
FORMAT = 1

T = TypeVar("T")


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV)
    return (Path(base) if base else Path.home() / ".cache" / "gpucloud") / "derived"


def _entry(kind: str, name: str) -> Path:
    digest = hashlib.sha256(f"{kind}\0{name}".encode()).hexdigest()[:32]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-f{FORMAT}"
    return cache_dir() / f"{kind}-{digest}-{tag}.marshal"


def memo(kind: str, name: str, signature: Hashable, derive: Callable[[], T]) -> T:
    """`derive()`, or its value as stored by an earlier process for the same `signature` (marshal-able values only:
    dicts, lists, str, numbers, code objects)."""
    entry = _entry(kind, name)
    try:
        stored_signature, value = marshal.loads(entry.read_bytes())
        if stored_signature == signature:
            return value
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = derive()
    _store(entry, signature, value)
    return value


def _store(entry: Path, signature: Any, value: Any) -> None:
    try:
        data = marshal.dumps((signature, value))
    except ValueError:  # something marshal cannot store: derived again next time
        return
    # Written aside, then renamed over the entry: a process reading it at the same moment (`plan --all` workers)
    # sees the old entry or the new one, never half of one.
    write_cache_atomic(entry, data)
