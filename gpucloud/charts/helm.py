"""Run the real Helm binary offline: `helm template` of a vendored chart directory with given values.

The binary comes from `make` (scripts/fetch_helm.py puts it next to the virtualenv's python), from $GPUCLOUD_HELM,
or from PATH. Helm's cache, config and data homes point at a scratch directory so a render writes nothing else
and never reaches a repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

HELM_ENV = "GPUCLOUD_HELM"
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class HelmError(Exception):
    """Helm is missing, or refused to render (template failure, `required` value missing)."""


def find_helm() -> Path | None:
    """The helm binary: $GPUCLOUD_HELM, then the one `make` installs beside this interpreter, then PATH."""
    explicit = os.environ.get(HELM_ENV)
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    beside = Path(sys.executable).parent / "helm"
    if beside.is_file():
        return beside
    found = shutil.which("helm")
    return Path(found) if found else None


def helm_template(
    chart_dir: str | Path,
    *,
    release: str,
    namespace: str,
    values: Mapping[str, Any] | None = None,
    kube_version: str = "1.34.0",
    include_crds: bool = False,
    api_versions: Iterable[str] = (),
    timeout_s: float = 60.0,
) -> list[dict[str, Any]]:
    """Render a chart directory with `helm template` and return its objects (empty documents dropped)."""
    helm = find_helm()
    if helm is None:
        raise HelmError(
            f"no helm binary: run `make` (it installs one into .venv/bin), put helm on PATH or set ${HELM_ENV}"
        )
    with tempfile.TemporaryDirectory(prefix="gpucloud-helm-") as scratch:
        values_file = Path(scratch) / "values.json"
        # JSON is YAML: Helm reads it as a values file, and no YAML quoting rule can change a value on the way.
        values_file.write_text(json.dumps(dict(values or {})))
        cmd = [
            str(helm),
            "template",
            release,
            str(chart_dir),
            "--namespace",
            namespace,
            "--kube-version",
            kube_version if kube_version.count(".") == 2 else f"{kube_version}.0",
            "--values",
            str(values_file),
        ]
        if include_crds:
            cmd.append("--include-crds")
        for api in api_versions:
            cmd += ["--api-versions", api]
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": scratch,
            "HELM_CACHE_HOME": f"{scratch}/cache",
            "HELM_CONFIG_HOME": f"{scratch}/config",
            "HELM_DATA_HOME": f"{scratch}/data",
        }
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise HelmError(f"helm template {release} timed out after {timeout_s:g} s") from None
    if done.returncode != 0:
        raise HelmError(done.stderr.strip() or f"helm template exited {done.returncode}")
    return [doc for doc in yaml.load_all(done.stdout, Loader=_YAML_LOADER) if isinstance(doc, dict)]
