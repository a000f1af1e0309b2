"""k8s-image-digest: images by tag (moving worse than version) on every pod-bearing kind, registered and
chart-rendered; digests pass, exemptions by glob, unknown images undecided; prod makes it mandatory."""

import json
from pathlib import Path

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import k8s
from gpucloud.policies.gpucloud_policies.registry import by_name
from gpucloud.policies.gpucloud_policies.security.k8s_image_digest import grade, tag_of

ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "ab" * 32


def deployment(name, *images, init=()):
    spec = {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)],
        "initContainers": [{"name": f"i{i}", "image": im} for i, im in enumerate(init)],
    }
    return Res(
        "kubernetes:apps/v1:Deployment",
        name,
        {"kind": "Deployment", "metadata": {"name": name, "namespace": "ml"}, "spec": {"template": {"spec": spec}}},
    )


@pytest.mark.parametrize(
    ("image", "tag", "expected"),
    [
        ("python", None, "moving"),
        ("python:latest", "latest", "moving"),
        ("ghcr.io/org/app:main", "main", "moving"),
        ("localhost:5000/app", None, "moving"),  # the port is not a tag
        ("localhost:5000/app:v1.2.3", "v1.2.3", "version"),
        ("public.ecr.aws/docker/library/python:3.12-slim", "3.12-slim", "version"),
        (f"python:3.12-slim@{DIGEST}", "3.12-slim@sha256", None),
        (f"registry.k8s.io/kueue/kueue@{DIGEST}", None, None),
    ],
)
def test_grade(image, tag, expected):
    if "@" not in image:
        assert tag_of(image) == tag
    assert grade(image) == expected


def test_tag_only_images_fail_moving_first_and_digests_pass():
    bad = deployment("bad", "app:1.0", init=["busybox"])
    good = deployment("good", f"app:1.0@{DIGEST}", init=[f"busybox@{DIGEST}"])
    [(name, message)] = stack_messages("k8s-image-digest", [bad, good])
    assert name == "bad"
    assert message.startswith(
        "bad: Deployment ml/bad runs images by tag, not digest: busybox (no tag, so the runtime pulls 'latest': "
        "worse than a version tag, it changes under the same reference); app:1.0 (version tag '1.0': the "
        "registry lets its owner re-push it). Fix: pin each image by digest"
    )


def test_exemptions_by_glob_and_unknown_images_undecided():
    bad = deployment("bad", "nvcr.io/nvidia/pytorch:25.01-py3")
    assert stack_flagged("k8s-image-digest", [bad], {"exemptions": [{"image": "nvcr.io/nvidia/*", "reason": "r"}]}) == (
        set()
    )
    with pytest.raises(UnknownValueError) as exc:
        stack_messages("k8s-image-digest", [deployment("computed", UNKNOWN), bad])
    assert "['Deployment ml/computed']" in exc.value.message


def test_chart_rendered_pods_are_read():
    release = Res("kubernetes:helm.sh/v3:Release", "addons", {"chart": "x"})
    owner = "urn:pulumi:test::test::kubernetes:helm.sh/v3:Release::addons"
    job = {
        "kind": "Job",
        "metadata": {"name": "hook", "namespace": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "bitnami/kubectl:latest"}]}}},
    }
    token = k8s.set_derived([(owner, "chart x@1.0", job)])
    try:
        [(name, message)] = stack_messages("k8s-image-digest", [release])
        assert (name, message.split(": bitnami")[0]) == (
            "addons",
            "addons: Job x/hook (from chart x@1.0) runs images by tag, not digest",
        )
    finally:
        k8s.reset_derived(token)


def test_mandatory_in_prod_advisory_elsewhere():
    assert by_name()["k8s-image-digest"].enforcement.value == "advisory"
    prod = json.loads((ROOT / "policies/configs/prod.json").read_text())
    assert prod["k8s-image-digest"]["enforcementLevel"] == "mandatory"
    for env in ("dev", "staging"):
        assert "k8s-image-digest" not in json.loads((ROOT / f"policies/configs/{env}.json").read_text())
    # Exemptions name exact images (no globs), so a new or bumped image in the shipped plan must be pinned or
    # reviewed again.
    assert all("*" not in e["image"] for e in prod["k8s-image-digest"]["exemptions"])


def test_prod_exempts_only_what_the_lock_cannot_pin():
    # prod's own exemptions, as the pack reads them: an image the lock now pins by digest (KEDA, sourced in
    # gpucloud/charts/images.json) has no exemption left, so running it by tag is flagged; a tag-only image the lock
    # still lists (with its reason) stays exempt, and the pinned reference passes.
    prod = json.loads((ROOT / "policies/configs/prod.json").read_text())["k8s-image-digest"]
    config = {"exemptions": prod["exemptions"]}
    keda = "ghcr.io/kedacore/keda:2.20.2"
    pinned = f"{keda}@sha256:fe74c7b8849586a67ad2201bcb89e7f5ac221ff90399ecaa8fd28427f1ef11e6"
    assert stack_flagged("k8s-image-digest", [deployment("keda", keda)], config) == {"keda"}
    assert stack_flagged("k8s-image-digest", [deployment("keda", pinned)], config) == set()
    exempt = "quay.io/prometheus-operator/prometheus-operator:v0.83.0"
    assert stack_flagged("k8s-image-digest", [deployment("operator", exempt)], config) == set()
