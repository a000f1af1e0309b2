"""A provider-shaped package on disk, loaded through the offline finder: the lazy loaders' tests build their own."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gpucloud.plan import lazy_sdk

MakeProvider = Callable[[str, dict[str, str]], Path]


@pytest.fixture
def provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeProvider]:
    """``provider(name, {relative path: text})`` writes the package under a temporary root, makes the finder
    treat it as a provider SDK (as pulumi_aws) and returns its directory; afterwards its modules are forgotten."""
    names: list[str] = []
    finder = lazy_sdk.LazyProviderFinder()
    sys.meta_path.insert(0, finder)
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name: str, files: dict[str, str]) -> Path:
        root = tmp_path / name
        for relative, text in {"__init__.py": "", **files}.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        monkeypatch.setattr(lazy_sdk, "PROVIDERS", (*lazy_sdk.PROVIDERS, name))
        names.append(name)
        return root

    try:
        yield make
    finally:
        sys.meta_path.remove(finder)
        for module in [m for m in sys.modules if m.partition(".")[0] in names]:
            del sys.modules[module]
