"""The charts lock against the vendored chart sources: one version per chart, Chart.yaml and digest agree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gpucloud.charts.lock import (
    REPO_ROOT,
    LockError,
    artifact,
    check_version,
    compute_digest,
    load_lock,
    pin,
    pinned_version,
)

VENDOR_CHARTS = REPO_ROOT / "vendor" / "upstream" / "charts"
LOCK = load_lock()


@pytest.mark.parametrize("ref", sorted(p.ref for p in LOCK.all_pins()))
def test_lock_entry_matches_vendored_chart(ref: str) -> None:
    name, version = ref.split("@")
    p = LOCK.versions[name][version]
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
    pinned = sorted(f"{p.name}-{p.version}" for p in LOCK.all_pins())
    assert vendored == pinned


def test_cluster_autoscaler_pinned_at_the_ca_1_34_and_1_35_charts() -> None:
    ca = pin("cluster-autoscaler")
    assert (ca.version, ca.app_version) == ("9.53.0", "1.34.2")
    newer = pin("cluster-autoscaler", "9.59.0")
    assert (newer.version, newer.app_version, newer.path) == (
        "9.59.0",
        "1.35.0",
        "vendor/upstream/charts/cluster-autoscaler-9.59.0",
    )
    with pytest.raises(LockError, match=r"the lock pins 9\.53\.0 and 9\.59\.0"):
        pin("cluster-autoscaler", "9.58.0")


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


def test_lock_with_one_version_of_one_chart_twice_is_refused(tmp_path: Path) -> None:
    entry = {"name": "x", "version": "1", "repository": "https://e", "path": "p", "digest": "sha256:0"}
    lock = tmp_path / "lock.yaml"
    lock.write_text(yaml.safe_dump({"charts": [entry, {**entry, "path": "q"}]}))
    with pytest.raises(LockError, match="chart x 1 is pinned twice"):
        load_lock(str(lock))


def test_lock_with_two_versions_of_one_chart_keeps_both_and_the_first_is_the_default(tmp_path: Path) -> None:
    entry = {"name": "x", "version": "1", "repository": "https://e", "path": "p", "digest": "sha256:0"}
    lock = tmp_path / "lock.yaml"
    lock.write_text(yaml.safe_dump({"charts": [entry, {**entry, "version": "2", "path": "q"}]}))
    loaded = load_lock(str(lock))
    assert (loaded.pin("x").version, loaded.pin("x", "2").path, loaded.pin("x", "v1").path) == ("1", "q", "p")
    assert [p.ref for p in loaded.all_pins()] == ["x@1", "x@2"]


def test_repository_matching_ignores_trailing_slashes_and_spaces() -> None:
    keda = LOCK.charts["keda"]
    assert keda.matches_repository(" https://kedacore.github.io/charts/ ")
    assert not keda.matches_repository("https://kedacore.github.io/charts/x")
    assert not keda.matches_repository(None)
    assert (keda.release_chart, keda.repository_opts) == ("keda", {"repo": "https://kedacore.github.io/charts"})


def test_oci_charts_are_found_by_their_url() -> None:
    nth = LOCK.by_repository("oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler/")
    assert nth is not None and nth.name == "aws-node-termination-handler"
    # An https repository is not a chart's address: only OCI pins answer by URL.
    assert LOCK.by_repository("https://kedacore.github.io/charts") is None
    assert LOCK.by_repository("oci://public.ecr.aws/aws-ec2/helm/other") is None


def test_pin_without_version_and_with_the_pinned_one() -> None:
    assert pin("keda").version == "2.20.2"
    assert pin("keda", "2.20.2").ref == "keda@2.20.2"


def test_version_checks_and_artifacts() -> None:
    assert check_version("keda", "2.20.2") is None
    assert check_version("keda", "2.17.2") == (
        "chart keda version '2.17.2' is not pinned; the lock pins 2.20.2 (upgrading is a lock change plus the "
        "vendored copy)"
    )
    assert pinned_version("cluster-autoscaler") == "9.53.0"
    mpi = artifact("mpi-operator")
    assert (mpi.version, mpi.kind, mpi.ref) == ("v0.8.0", "manifest", "mpi-operator@v0.8.0")
    assert (mpi.artifact_dir / "mpi-operator.yaml").is_file()
    with pytest.raises(LockError, match="artifact 'kubeflow' is not in the charts lock"):
        artifact("kubeflow")


@pytest.mark.parametrize("missing", ["name", "version", "repository", "path", "digest"])
def test_lock_entry_without_a_field_is_refused(tmp_path: Path, missing: str) -> None:
    entry = {"name": "x", "version": "1", "repository": "https://e", "path": "p", "digest": "sha256:0"}
    lock = tmp_path / "lock.yaml"
    lock.write_text(yaml.safe_dump({"charts": [{k: v for k, v in entry.items() if k != missing}]}))
    with pytest.raises(LockError, match=rf"entry 0 has no `{missing}`$"):
        load_lock(str(lock))


def test_unreadable_or_malformed_lock(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="cannot read the charts lock"):
        load_lock(str(tmp_path / "absent.yaml"))
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n")
    with pytest.raises(LockError, match="expected a mapping with `charts` and `artifacts`"):
        load_lock(str(bad))


def test_digest_refuses_symlinks_and_non_directories(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    with pytest.raises(LockError, match=r"link\.yaml is a symlink; vendored charts hold plain files only"):
        compute_digest(tmp_path)
    with pytest.raises(LockError, match="is not a directory"):
        compute_digest(tmp_path / "real.yaml")


def test_digest_frames_path_size_and_bytes(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_bytes(b"xy")
    (tmp_path / "a.txt").write_bytes(b"z")
    h = hashlib.sha256()
    for rel, data in ((b"a.txt", b"z"), (b"sub/b.txt", b"xy")):
        h.update(rel + b"\0" + str(len(data)).encode() + b"\0" + data)
    assert compute_digest(tmp_path) == f"sha256:{h.hexdigest()}"
