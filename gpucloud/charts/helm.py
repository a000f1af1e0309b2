"""Run the real Helm binary offline: `helm template` of a vendored chart directory with given values.

The binary comes from $GPUCLOUD_HELM, from `make` (which puts it next to the virtualenv's python), from the per-user
tool cache where gpucloud fetches it on first use (gpucloud/tools.py), or from PATH. Helm's cache, config and data
homes point at a scratch directory so a render writes nothing else and never reaches a repository.

`render_pinned` renders a chart of the charts lock through an on-disk cache keyed by the chart's digest, the values,
the release name, the namespace, the Kubernetes version and the helm binary: a plan renders each release once per
change, not once per run. Cache directory: $GPUCLOUD_CACHE_DIR/helm, else ~/.cache/gpucloud/helm.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpucloud.charts.lock import ChartPin
from gpucloud.fileio import scratch_dir, write_cache_atomic

HELM_ENV = "GPUCLOUD_HELM"
CACHE_ENV = "GPUCLOUD_CACHE_DIR"
# Bump when the cached form changes, so an old cache entry is never read as the new form.
RENDER_CACHE_FORMAT = 2
# A render is stored with marshal, not JSON: kube-prometheus-stack's 3 MB render loads in about half the time,
# and that load is most of what the Helm check costs once everything is cached. marshal's format can change
# between Python versions, so an entry that does not load is a cache miss, like a missing one.
RENDER_SUFFIX = ".marshal"


class _ManifestLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML as the API server reads it: timestamps stay strings, and YAML 1.1's `=` (in CRD enums) is a string."""


_ManifestLoader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)
_ManifestLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def parse_manifests(text: str) -> list[dict[str, Any]]:
    """The objects of a multi-document YAML stream (empty documents dropped).

    yaml-rs when installed (a 4.8 MB render parses in a third of the time), PyYAML otherwise or when yaml-rs
    refuses a document; tests/charts check that both give the same objects for the pinned charts.
    """
    try:
        import yaml_rs

        docs = yaml_rs.loads(text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins)
        loaded: list[Any] = docs if isinstance(docs, list) and ("\n---" in text or text.startswith("---")) else [docs]
    except Exception:  # any refusal (or absence) of the fast parser falls back to PyYAML
        loaded = list(yaml.load_all(text, Loader=_ManifestLoader))
    return [doc for doc in loaded if isinstance(doc, dict)]


class HelmError(Exception):
    """Helm is missing, or refused to render (template failure, `required` value missing)."""


def find_helm() -> Path | None:
    """The helm binary: $GPUCLOUD_HELM, the one `make` installs beside this interpreter, the per-user tool cache,
    PATH; else the pinned, checksum-verified download into that cache on first use (gpucloud/tools.py)."""
    from gpucloud import tools

    return tools.find("helm", HELM_ENV)


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
            f"no helm binary: run `gpucloud tools install` (pinned, checksum-verified), put helm on PATH or set "
            f"${HELM_ENV}"
        )
    # Named with our PID so that the next gpucloud start can remove it if this process is killed mid-render.
    with scratch_dir("gpucloud-helm-") as scratch:
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
            # A render is a short-lived process: collecting garbage less often saves ~10% of its CPU for ~30 MB.
            "GOGC": "400",
        }
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise HelmError(f"helm template {release} timed out after {timeout_s:g} s") from None
    if done.returncode != 0:
        raise HelmError(done.stderr.strip() or f"helm template exited {done.returncode}")
    return parse_manifests(done.stdout)


@dataclass(frozen=True)
class Rendered:
    """The outcome of rendering one release: its objects, or Helm's error message."""

    objects: list[dict[str, Any]]
    error: str | None
    cached: bool


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV)
    return (Path(base) / "helm") if base else Path.home() / ".cache" / "gpucloud" / "helm"


def _helm_identity(helm: Path) -> str:
    st = helm.stat()
    return f"{helm.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def render_key(
    pin: ChartPin, *, release: str, namespace: str, values: Mapping[str, Any], kube_version: str, include_crds: bool
) -> str:
    """The cache key of a render: everything that can change Helm's output."""
    helm = find_helm()
    material = {
        "format": RENDER_CACHE_FORMAT,
        "chart": pin.ref,
        "digest": pin.digest,
        "values": values,
        "release": release,
        "namespace": namespace,
        "kube": kube_version,
        "crds": include_crds,
        "helm": _helm_identity(helm) if helm else None,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def render_pinned(
    pin: ChartPin,
    *,
    release: str,
    namespace: str,
    values: Mapping[str, Any] | None = None,
    kube_version: str = "1.34",
    include_crds: bool = True,
    use_cache: bool = True,
) -> Rendered:
    """Render a locked chart's vendored copy, through the on-disk cache (HelmError only when helm is missing)."""
    plain = dict(values or {})
    key = render_key(
        pin, release=release, namespace=namespace, values=plain, kube_version=kube_version, include_crds=include_crds
    )
    entry = cache_dir() / f"{key}{RENDER_SUFFIX}"
    if use_cache:
        try:
            raw = marshal.loads(entry.read_bytes())
            return Rendered(list(raw.get("objects") or []), raw.get("error"), cached=True)
        except (OSError, ValueError, EOFError, TypeError, AttributeError):
            pass
    if find_helm() is None:
        raise HelmError(
            f"no helm binary: run `gpucloud tools install` (pinned, checksum-verified), put helm on PATH or set "
            f"${HELM_ENV}"
        )
    try:
        objects = helm_template(
            pin.chart_dir,
            release=release,
            namespace=namespace,
            values=plain,
            kube_version=kube_version,
            include_crds=include_crds,
        )
        result = Rendered(objects, None, cached=False)
    except HelmError as exc:
        result = Rendered([], str(exc), cached=False)
    if use_cache:
        try:
            data = marshal.dumps({"objects": result.objects, "error": result.error})
        except ValueError:  # an object marshal cannot store (YAML never yields one): not cached
            data = b""
        if data:
            write_atomic(entry, data)
        prune_cache(entry.parent)
    return result


CACHE_KEEP = 400  # entries; a prod plan writes about ten, the biggest (kube-prometheus-stack) about 3 MB


def prune_cache(directory: Path, keep: int = CACHE_KEEP) -> None:
    """Drop the least recently written entries beyond `keep`, so the cache cannot grow without bound."""
    try:
        # Renders of the JSON format (RENDER_CACHE_FORMAT 1) are never read again.
        for legacy in directory.glob("*.json"):
            if not legacy.name.startswith("model-"):
                legacy.unlink(missing_ok=True)
        renders = [p for p in directory.glob(f"*{RENDER_SUFFIX}") if not p.name.startswith("model-")]
        entries = sorted(renders, key=lambda p: p.stat().st_mtime_ns)
        for old in entries[: max(0, len(entries) - keep)]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def write_atomic(path: Path, text: str | bytes) -> None:
    # A cache is an optimisation: a read-only home or a full disk must not fail the plan.
    write_cache_atomic(path, text)
