"""Checkov's own virtualenv, created on first use: shared by scripts/bench_checkov.py and the Kubernetes checker
test (tests/independent/test_checkov_k8s.py).

Checkov pins dependencies gpucloud's environment does not want (boto3, networkx, pydantic ranges), so it lives in
a virtualenv of its own under ~/.cache/gpucloud (or $GPUCLOUD_CHECKOV_VENV), installed from PyPI once. A marker
file written after `pip install` succeeds tells a finished install from one interrupted half way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOV_VERSION = "3.3.30"
DEFAULT_VENV = Path(
    os.environ.get("GPUCLOUD_CHECKOV_VENV", Path.home() / ".cache" / "gpucloud" / f"checkov-{CHECKOV_VERSION}")
)
_DONE = ".gpucloud-installed"


def checkov_bin(venv: Path = DEFAULT_VENV) -> Path:
    """The checkov executable of ``venv``, creating the virtualenv and installing the pinned Checkov first."""
    exe = venv / "bin" / "checkov"
    if exe.is_file() and (venv / _DONE).is_file():
        return exe
    print(f"creating {venv} with checkov=={CHECKOV_VERSION} (once) ...", file=sys.stderr)
    if venv.exists() and not (venv / _DONE).is_file() and not (venv / "bin" / "pip").is_file():
        shutil.rmtree(venv)
    if not (venv / "bin" / "pip").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"checkov=={CHECKOV_VERSION}"], check=True)
    tmp = venv / f"{_DONE}.tmp"
    tmp.write_text(CHECKOV_VERSION + "\n")
    os.replace(tmp, venv / _DONE)
    return exe
