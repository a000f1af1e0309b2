"""Independent checkers in virtualenvs of their own, created on first use (Checkov, parliament).

Such tools pin dependencies gpucloud's environment does not want (Checkov: boto3, networkx and pydantic ranges;
parliament imports ``pkg_resources``, which the setuptools gpucloud pins no longer ships), so each lives in a
virtualenv under ~/.cache/gpucloud (or the path its environment variable names), installed from PyPI once. A
marker file written after ``pip install`` succeeds tells a finished install from one interrupted half way; the
marker holds the requirement list, so changing a pin installs afresh.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

_DONE = ".gpucloud-installed"


def venv_path(name: str, env_var: str) -> Path:
    """Where the virtualenv ``name`` lives: ``$env_var`` when set, else ~/.cache/gpucloud/<name>."""
    return Path(os.environ.get(env_var) or Path.home() / ".cache" / "gpucloud" / name)


def ensure_venv(venv: Path, requirements: list[str]) -> Path:
    """``venv`` with exactly ``requirements`` installed (pip pins), creating it first when missing or half made."""
    wanted = "\n".join(requirements) + "\n"
    marker = venv / _DONE
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
        return venv
    print(f"creating {venv} with {' '.join(requirements)} (once) ...", file=sys.stderr)
    if venv.exists() and not (venv / "bin" / "pip").is_file():
        shutil.rmtree(venv)
    if not (venv / "bin" / "pip").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *requirements], check=True)
    tmp = venv / f"{_DONE}.tmp"
    tmp.write_text(wanted, encoding="utf-8")
    os.replace(tmp, marker)
    return venv
