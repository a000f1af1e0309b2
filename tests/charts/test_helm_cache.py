"""The render cache stays bounded: the least recently written renders go first, chart values trees stay."""

from __future__ import annotations

import os
from pathlib import Path

from gpucloud.charts.helm import prune_cache


def test_prune_keeps_the_newest_renders_and_every_values_tree(tmp_path: Path) -> None:
    for i in range(5):
        entry = tmp_path / f"{i:064x}.marshal"
        entry.write_text("{}")
        os.utime(entry, ns=(i * 10**9, i * 10**9))
    (tmp_path / "model-sha256-abc-m1.json").write_text("{}")
    os.utime(tmp_path / "model-sha256-abc-m1.json", ns=(0, 0))
    (tmp_path / f"{9:064x}.json").write_text("{}")
    (tmp_path / "model-sha256-abc-m2-defaults.marshal").write_bytes(b"")
    os.utime(
        tmp_path / "model-sha256-abc-m2-defaults.marshal", ns=(0, 0)
    )  # a render in the old JSON form: never read again
    prune_cache(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"{3:064x}.marshal",
        f"{4:064x}.marshal",
        "model-sha256-abc-m1.json",
        "model-sha256-abc-m2-defaults.marshal",
    ]
