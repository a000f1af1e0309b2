"""Vendored release manifests are parsed once per process (plan --all plans several stacks that install them),
and every caller still gets objects of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpucloud.components.addons import manifest_objects


def test_manifest_parsed_once_and_copied_per_caller(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: A\nmetadata: {name: a}\n---\n# a comment-only document\n---\nkind: B\n")
    first = manifest_objects(manifest)
    assert first == [{"kind": "A", "metadata": {"name": "a"}}, {"kind": "B"}]
    first[0]["metadata"]["name"] = "changed"
    assert manifest_objects(manifest)[0]["metadata"]["name"] == "a"
    manifest.write_text("kind: C\n")  # a new file version (size and mtime) is parsed again
    assert manifest_objects(manifest) == [{"kind": "C"}]


def test_a_fresh_process_reads_the_parsed_manifest_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.components.addons.common as common

    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "cache"))
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: A\n")
    assert manifest_objects(manifest) == [{"kind": "A"}]
    # A new process: the in-process memo is empty, and YAML is not parsed again.
    monkeypatch.setattr(common, "_PARSED_MANIFESTS", {})
    monkeypatch.setattr(common.yaml, "load_all", lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed")))
    assert manifest_objects(manifest) == [{"kind": "A"}]
