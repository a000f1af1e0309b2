"""Checkov's own virtualenv, created on first use: shared by scripts/bench_checkov.py and the Kubernetes checker
test (tests/independent/test_checkov_k8s.py).

Checkov pins dependencies gpucloud's environment does not want (boto3, networkx, pydantic ranges), so it lives in
a virtualenv of its own under ~/.cache/gpucloud (or $GPUCLOUD_CHECKOV_VENV), installed from PyPI once
(scripts/tool_venv.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_venv import ensure_venv, venv_path

CHECKOV_VERSION = "3.3.30"
DEFAULT_VENV = venv_path(f"checkov-{CHECKOV_VERSION}", "GPUCLOUD_CHECKOV_VENV")


def checkov_bin(venv: Path = DEFAULT_VENV) -> Path:
    """The checkov executable of ``venv``, creating the virtualenv and installing the pinned Checkov first."""
    return ensure_venv(venv, [f"checkov=={CHECKOV_VERSION}"]) / "bin" / "checkov"
