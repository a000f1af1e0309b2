"""Checkov's Kubernetes framework (pinned, scripts/checkov_venv.py) over every Kubernetes object of every shipped
plan: the objects the programs register and the ones the pinned charts render. Each finding Checkov may report is
in the reviewed table ``checkov_k8s_exceptions.EXCEPTIONS`` (check id, object glob, reason); anything else fails.

Checkov lives in its own virtualenv under ~/.cache/gpucloud, installed from PyPI on first use (minutes, once).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from gpucloud.conformance import run_conformance
from gpucloud.conformance.inventory import record_manifest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

from checkov_k8s_exceptions import EXCEPTIONS  # noqa: E402
from stackcopy import plan_stack  # noqa: E402

STACKS = [("dev", ROOT), ("staging", ROOT), ("prod", ROOT), ("dev", ROOT / "stacks" / "teams" / "vision")]


def _venv_module() -> Any:
    spec = importlib.util.spec_from_file_location("checkov_venv", ROOT / "scripts" / "checkov_venv.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(value: Any) -> Any:
    """Plan values as YAML can hold them (unknowns become their placeholder string)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def shipped_objects() -> dict[str, list[dict[str, Any]]]:
    """stack label -> every Kubernetes object of its plan, registered then rendered."""
    out: dict[str, list[dict[str, Any]]] = {}
    for stack, program in STACKS:
        plan = plan_stack(stack, program_dir=program)
        result = run_conformance(plan)
        registered = [m for m in (record_manifest(r) for r in plan.resources) if m is not None]
        label = stack if program == ROOT else f"{program.name}-{stack}"
        out[label] = [_plain(m) for m in registered] + [_plain(d.manifest) for d in result.derived]
    return out


def run_checkov(objects: dict[str, list[dict[str, Any]]], work: Path) -> list[tuple[str, str, str]]:
    """(check id, stack, resource) for every failed check; Checkov names a resource "Kind.namespace.name"."""
    for label, manifests in objects.items():
        (work / label).mkdir(parents=True)
        for i, manifest in enumerate(manifests):
            (work / label / f"{i:04d}.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    exe = _venv_module().checkov_bin()
    proc = subprocess.run(
        [str(exe), "-d", str(work), "--framework", "kubernetes", "-o", "json", "--quiet", "--compact"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.stdout.strip(), proc.stderr[-4000:]
    data = json.loads(proc.stdout)
    reports = data if isinstance(data, list) else [data]
    found = []
    for rep in reports:
        for check in (rep.get("results") or {}).get("failed_checks") or []:
            label = Path(str(check["file_path"]).lstrip("/")).parts[0]
            found.append((str(check["check_id"]), label, str(check["resource"])))
    return sorted(set(found))


def excepted(check_id: str, resource: str) -> bool:
    return any(e[0] == check_id and fnmatchcase(resource, e[1]) for e in EXCEPTIONS)


def test_checkov_finds_nothing_beyond_the_reviewed_exceptions(tmp_path: Path) -> None:
    found = run_checkov(shipped_objects(), tmp_path)
    assert found, "Checkov reported nothing at all: it did not read the objects"
    unexpected = [f for f in found if not excepted(f[0], f[2])]
    assert unexpected == []
    # Every exception still matches something, so the table never keeps a stale entry.
    stale = [e for e in EXCEPTIONS if not any(f[0] == e[0] and fnmatchcase(f[2], e[1]) for f in found)]
    assert stale == []


def test_every_exception_has_a_reason() -> None:
    assert all(len(e) == 3 and e[0].startswith("CKV") and e[1] and len(e[2]) > 10 for e in EXCEPTIONS)


def test_host_access_exceptions_name_their_objects() -> None:
    # A privileged pod nobody reviewed fails the test; the reviewed health gate does not.
    assert excepted("CKV_K8S_16", "DaemonSet.gpu-health.gpu-node-health")
    assert not excepted("CKV_K8S_16", "DaemonSet.ml.new-daemon")
    assert not excepted("CKV_K8S_99", "DaemonSet.gpu-health.gpu-node-health")
