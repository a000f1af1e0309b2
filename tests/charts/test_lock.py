"""The charts lock against the vendored chart sources: one version per chart, Chart.yaml and digest agree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gpucloud.charts.lock import REPO_ROOT, LockError, compute_digest, load_lock, pin

VENDOR_CHARTS = REPO_ROOT / "vendor" / "upstream" / "charts"
LOCK = load_lock()


@pytest.mark.parametrize("name", sorted(LOCK.charts))
def test_lock_entry_matches_vendored_chart(name: str) -> None:
    p = LOCK.charts[name]
    assert p.path == f"vendor/upstream/charts/{p.name}-{p.version}"
    chart = yaml.safe_load((p.chart_dir / "Chart.yaml").read_text())
    assert (chart["name"], str(chart["version"]), str(chart.get("appVersion", ""))) == (
        p.name,
        p.version,
        p.app_version,
    )
    assert compute_digest(p.chart_dir) == p.digest, f"{p.path} changed: update its digest in the lock with the upgrade"


@pytest.mark.parametrize("name", sorted(LOCK.artifacts))
def test_lock_artifact_matches_vendored_copy(name: str) -> None:
    a = LOCK.artifacts[name]
    assert compute_digest(a.artifact_dir) == a.digest


def test_every_vendored_chart_is_pinned_once() -> None:
    vendored = sorted(d.name for d in VENDOR_CHARTS.iterdir() if d.is_dir())
    pinned = sorted(f"{p.name}-{p.version}" for p in LOCK.charts.values())
    assert vendored == pinned


def test_cluster_autoscaler_pinned_at_the_ca_1_34_chart() -> None:
    ca = pin("cluster-autoscaler")
    assert (ca.version, ca.app_version) == ("9.53.0", "1.34.2")


def test_nth_is_pinned_at_its_oci_url() -> None:
    nth = pin("aws-node-termination-handler")
    assert nth.release_chart == "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
    assert nth.repository_opts is None
    dp = pin("nvidia-device-plugin")
    assert (dp.release_chart, dp.repository_opts) == (
        "nvidia-device-plugin",
        {"repo": "https://nvidia.github.io/k8s-device-plugin"},
    )


def test_version_not_in_lock_names_the_pinned_one() -> None:
    with pytest.raises(LockError, match=r"version '9\.46\.6' is not pinned; the lock pins 9\.53\.0"):
        pin("cluster-autoscaler", "9.46.6")
    with pytest.raises(LockError, match="chart 'nginx' is not in the charts lock"):
        pin("nginx")


def test_digest_changes_with_any_byte_and_any_rename(tmp_path: Path) -> None:
    src = LOCK.charts["aws-efa-k8s-device-plugin"].chart_dir
    copy = tmp_path / "c"
    shutil.copytree(src, copy)
    assert compute_digest(copy) == LOCK.charts["aws-efa-k8s-device-plugin"].digest
    values = copy / "values.yaml"
    values.write_bytes(values.read_bytes() + b"\n")
    edited = compute_digest(copy)
    assert edited != LOCK.charts["aws-efa-k8s-device-plugin"].digest
    values.rename(copy / "values2.yaml")
    assert compute_digest(copy) not in (edited, LOCK.charts["aws-efa-k8s-device-plugin"].digest)


def test_lock_with_two_versions_of_one_chart_is_refused(tmp_path: Path) -> None:
    entry = {"name": "x", "version": "1", "repository": "https://e", "path": "p", "digest": "sha256:0"}
    lock = tmp_path / "lock.yaml"
    lock.write_text(yaml.safe_dump({"charts": [entry, {**entry, "version": "2"}]}))
    with pytest.raises(LockError, match="chart x is pinned twice"):
        load_lock(str(lock))
