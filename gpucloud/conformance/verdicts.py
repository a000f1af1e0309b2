"""Remembered "valid" verdicts of pure per-resource checks, so a repeated plan does not re-derive them.

A check whose findings for one resource are a pure function of that resource's recorded inputs, the versions of
what it validates against (provider SDKs, botocore models) and its own code can skip a resource it found clean
before: the verdict cannot have changed. Only "no findings" is remembered; a resource with findings is checked,
and reported, on every run. The key material names every version and hashes the check's source files, so an
upgrade or a code change starts a fresh store. A store that cannot be read or written costs time, never a result.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FORMAT = 1
KEEP = 20_000  # digests kept across runs; beyond that only the last run's survive


class VerdictStore:
    def __init__(self, path: Path | None, valid: set[bytes]) -> None:
        self.path = path
        self.valid = valid
        self.passed: set[bytes] = set()

    @classmethod
    def load(cls, name: str, material: Iterable[str], code: Iterable[Path]) -> VerdictStore:
        from gpucloud.charts.helm import cache_dir

        try:
            hashes = [hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in code]
        except OSError:
            return cls(None, set())
        key = hashlib.sha256(":".join([str(FORMAT), *material, *hashes]).encode()).hexdigest()[:32]
        path = cache_dir().parent / "verdicts" / f"{name}-{key}.marshal"
        try:
            loaded = marshal.loads(path.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            loaded = set()
        return cls(path, loaded if isinstance(loaded, set) else set())

    @staticmethod
    def digest(*parts: Any) -> bytes | None:
        try:
            # Version 2: no back-references, so equal values serialise alike; types stay distinct (1, 1.0, True).
            data = marshal.dumps(parts, 2)
        except ValueError:  # something marshal cannot write: checked every time
            return None
        return hashlib.blake2b(data, digest_size=16).digest()

    def known_valid(self, digest: bytes | None) -> bool:
        return digest is not None and digest in self.valid

    def record(self, digest: bytes | None, findings: list[Any]) -> None:
        if digest is not None and not findings:
            self.passed.add(digest)

    def save(self) -> None:
        if self.path is None or self.passed <= self.valid:
            return
        from gpucloud.charts.helm import write_atomic

        keep = self.valid | self.passed
        write_atomic(self.path, marshal.dumps(keep if len(keep) <= KEEP else self.passed))
