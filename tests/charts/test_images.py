"""The image lock (gpucloud/charts/images.json) against the shipped plans: every image they deploy is locked, every
locked digest reaches the plan, and prod's reviewed tag-only exemptions are exactly the images the lock cannot pin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gpucloud.charts import images
from gpucloud.conformance import run_conformance
from gpucloud.conformance.inventory import record_manifest
from gpucloud.plan.engine import Project

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

from stackcopy import plan_stack  # noqa: E402

STACKS = ("dev", "staging", "prod")
# Images a stack's own config names (its private ECR): the owner pins them, not the lock.
STACK_OWNED = ("123456789012.dkr.ecr.",)


def _images(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        # The GPU Operator's ClusterPolicy names an operand by repository, image and version (a tag, or a digest
        # that the operator joins with `@`).
        repo, name, version = value.get("repository"), value.get("image"), value.get("version")
        if all(isinstance(v, str) and v for v in (repo, name, version)):
            out.add(f"{repo}/{name}{'@' if str(version).startswith('sha256:') else ':'}{version}")
        for key, item in value.items():
            if key == "image" and isinstance(item, str) and ("/" in item or ":" in item) and not repo:
                out.add(item)
            else:
                _images(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _images(item, out)


@pytest.fixture(scope="module")
def shipped() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for stack in STACKS:
        plan = plan_stack(stack)
        found: set[str] = set()
        for r in plan.resources:
            manifest = record_manifest(r)
            if manifest is not None:
                _images(manifest, found)
        for d in run_conformance(plan).derived:
            _images(d.manifest, found)
        out[stack] = found
    return out


def _locked(image: str) -> images.ImagePin | None:
    repository, tag, digest = images.split_ref(image)
    for pin in images.load():
        if pin.repository == repository and (pin.tag == tag or (tag is None and digest and pin.digest == digest)):
            return pin
    return images.find(repository, tag) if tag else None


def test_every_shipped_image_is_in_the_lock(shipped: dict[str, set[str]]) -> None:
    missing = sorted(
        f"{stack}: {image}"
        for stack, found in shipped.items()
        for image in found
        if not image.startswith(STACK_OWNED) and _locked(image) is None
    )
    assert missing == []


def test_every_locked_digest_reaches_the_plans(shipped: dict[str, set[str]]) -> None:
    every = set().union(*shipped.values())
    rendered = {images.split_ref(i)[:2]: images.split_ref(i)[2] for i in every}
    for pin in images.load():
        if pin.digest and (pin.repository, pin.tag) in rendered:
            assert rendered[(pin.repository, pin.tag)] == pin.digest, pin.ref
    # The digests sourced at vendoring time, by name, so a lost pin fails here.
    assert (
        "registry.k8s.io/metrics-server/metrics-server:v0.8.1@sha256:"
        "b2d2efaf5ac3b366ed0f839d2412a2c4279d4fc2a2a733f12c52133faed36c41" in shipped["prod"]
    )
    assert (
        "registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.4@sha256:"
        "7a38cf0f8480775baaee71ab519c7465fd1dfeac66c421f28f087786e631456e" in shipped["prod"]
    )
    assert (
        "nvcr.io/nvidia/k8s-device-plugin:v0.18.2@sha256:"
        "b5788e29e7ae5272de8de863ebe386d6611e608421a6ecc5b4e7d5952aba637f" in shipped["dev"]
    )
    # The GPU Operator's operands (ClusterPolicy version = the digest of NVIDIA's v26.3.0 OLM bundle).
    assert (
        "nvcr.io/nvidia/k8s-device-plugin@sha256:75eff5962176618e486da18d73eae57870369b69f186fc8d193973166d1cfad9"
        in shipped["prod"]
    )
    assert (
        "nvcr.io/nvidia/k8s/dcgm-exporter@sha256:b5d8813707469c5717ce27a5fefb933a29e8ba6cd2fd7d93ad3dcd6ae18579ef"
        in shipped["prod"]
    )
    # The standalone DCGM hostengine operand: the bundle's ubi9 build of DCGM 4.5.2 stands in for the chart's
    # ubuntu22.04 default (render.replaces), and gpucloud's own DCGM images (node health gate, acceptance Jobs)
    # default to the same build, pinned through pin_ref.
    dcgm = "sha256:d7558fa75ed7b703665cbc6ba6360ef4e53ecdefe65c1881c165d2ac816c674a"
    assert f"nvcr.io/nvidia/cloud-native/dcgm@{dcgm}" in shipped["prod"]
    assert f"nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubi9@{dcgm}" in shipped["prod"]
    # The standalone dcgm-exporter chart (dev, staging): the bundle's 4.5.3-4.8.2 build for the 4.8.1 chart.
    exporter = (
        "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless@sha256:"
        "60d3b00ac80b4ae77f94dae2f943685605585ad9e92fdccda3154d009ae317cc"
    )
    assert exporter in shipped["dev"] and exporter in shipped["staging"]
    dcgm_images = {
        i for found in shipped.values() for i in found if "/nvidia/cloud-native/dcgm" in i or "dcgm-exporter" in i
    }
    assert all(images.split_ref(i)[2] for i in dcgm_images), sorted(dcgm_images)
    # Pinned from public records of the tag@digest pair (multi-arch index digests, sources in the lock), rendered
    # through the charts' tag values: the KEDA chart's three images, the autoscaler, the load balancer controller.
    assert {
        "ghcr.io/kedacore/keda:2.20.2@sha256:fe74c7b8849586a67ad2201bcb89e7f5ac221ff90399ecaa8fd28427f1ef11e6",
        "ghcr.io/kedacore/keda-metrics-apiserver:2.20.2@sha256:"
        "27286536a8a775aeeee37a7e343f8ecebb27ebf680ee1181a4f99e82eefb253b",
        "ghcr.io/kedacore/keda-admission-webhooks:2.20.2@sha256:"
        "41f74102aba7959c6e8d08b433ab8a5fd6cae7c5646c78f7fe3de40a52df3439",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.0@sha256:"
        "2fc9433dd3b47baef0e68d6b1110b770a3c93db10c7bead4c5bc6cb21c72b875",
        "public.ecr.aws/eks/aws-load-balancer-controller:v3.5.0@sha256:"
        "298acdff5a571731276aaea3d5cc450a264e4ad710a5bddf3e518f68a3f9f6cb",
        # kube-prometheus-stack's `sha` values: the Alertmanager CR and the Grafana subchart's Deployment
        "quay.io/prometheus/alertmanager:v0.28.1@sha256:27c475db5fb156cab31d5c18a4251ac7ed567746a2483ff264516437a39b15ba",
        "docker.io/grafana/grafana:12.0.2@sha256:b5b59bfc7561634c2d7b136c4543d702ebcc94a3da477f21ff26f89ffd4214fa",
        # node-exporter's `digest` value and the Grafana test pod's tag
        "quay.io/prometheus/node-exporter:v1.9.1@sha256:d00a542e409ee618a4edc67da14dd48c5da66726bbd5537ab2af9c1dfc442c8a",
        "docker.io/bats/bats:v1.4.1@sha256:f9e5272f8ccd9a21554e461c596b08553d052af78e509b8dffbd80ba89a34164",
        "quay.io/kiwigrid/k8s-sidecar:1.30.5@sha256:b50fb46b5b3291fb82e85429781a27a5c36fe97f330908afe00652ee6c425459",
        # Kueue's controller: the digest its release issue recorded in staging, promoted to registry.k8s.io by digest
        "registry.k8s.io/kueue/kueue:v0.19.2@sha256:8a77be2df3d441d1a99b60eb1625c835b5f4feda5db02ece26818cf2a30c4d86",
    } <= shipped["prod"]
    # The GPU Operator's node-feature-discovery subchart in prod, and the device plugin's (alias nfd) in dev: their
    # templates read image.tag, which values.yaml leaves commented out.
    assert (
        "registry.k8s.io/nfd/node-feature-discovery:v0.18.3@sha256:"
        "f9ef2ebee55141a1758d3c0a87bb701f5db2adf6856f7218b11bc2bac7b63862" in shipped["prod"]
    )
    assert (
        "registry.k8s.io/nfd/node-feature-discovery:v0.17.3@sha256:"
        "5ad4e3ac1afcbeb9d096241b0352614e5e77ee1bfe0f37c45a8d7b4329599d11" in shipped["dev"]
    )
    # and none of them is still rendered by tag alone anywhere
    every = set().union(*shipped.values())
    for tag_only in (
        "ghcr.io/kedacore/keda:2.20.2",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.0",
        "docker.io/grafana/grafana:12.0.2",
        "quay.io/prometheus/alertmanager:v0.28.1",
    ):
        assert tag_only not in every


def test_prod_exemptions_are_exactly_the_unpinned_images(shipped: dict[str, set[str]]) -> None:
    config = json.loads((ROOT / "policies" / "configs" / "prod.json").read_text())
    exempt = {e["image"] for e in config["k8s-image-digest"]["exemptions"]}
    # The guardrail reads pod specs only; CR images (Prometheus, Alertmanager, ClusterPolicy operands) are not
    # pods, so an exemption is needed only for a tag-only image a pod of the prod plan runs.
    tag_only = {i for i in shipped["prod"] if images.split_ref(i)[2] is None}
    assert exempt <= tag_only
    for image in exempt - {i for i in exempt if i.startswith(STACK_OWNED)}:
        pin = _locked(image)
        assert pin is not None and pin.digest is None and pin.unpinned, image
    for pin in images.load():
        if pin.digest:
            assert not any(images.split_ref(e)[:2] == (pin.repository, pin.tag) for e in exempt), pin.ref


def test_no_stack_pulls_an_ecr_image_from_another_region(shipped: dict[str, set[str]]) -> None:
    # Issue 28 item 3: where AWS publishes regional registries (EKS's ECR accounts), pull from the stack's own.
    regions = {stack: str(Project(ROOT).config(stack)["aws:region"]) for stack in STACKS}
    assert regions == {"dev": "us-west-2", "staging": "us-east-1", "prod": "us-east-1"}
    assert any(".dkr.ecr.us-east-1." in i for i in shipped["prod"])  # the EFA plugin: the check has something
    for stack, found in shipped.items():
        for image in found:
            if ".dkr.ecr." in image:
                assert f".dkr.ecr.{regions[stack]}." in image, f"{stack}: {image}"


def test_a_regional_entry_matches_any_region_and_pin_ref_leaves_unlocked_images_alone() -> None:
    efa = "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"
    assert images.find(efa, "v0.5.8") is not None
    assert images.pin_ref("example.com/team/app:1.0") == "example.com/team/app:1.0"
    assert images.pin_ref("localhost:5000/app:1.0@sha256:" + "a" * 64).endswith("a" * 64)
    assert images.pin_ref("registry.k8s.io/metrics-server/metrics-server:v0.8.1").endswith(
        "@sha256:b2d2efaf5ac3b366ed0f839d2412a2c4279d4fc2a2a733f12c52133faed36c41"
    )
    assert images.split_ref("localhost:5000/app") == ("localhost:5000/app", None, None)


def test_chart_values_apply_only_to_the_chart_version_they_pin_and_never_replace_a_chosen_tag() -> None:
    pinned = "v0.8.1@sha256:b2d2efaf5ac3b366ed0f839d2412a2c4279d4fc2a2a733f12c52133faed36c41"
    assert images.chart_values("metrics-server", "3.13.1") == {"image": {"tag": pinned}}
    assert images.chart_values("metrics-server", "3.99.0") == {}
    base = {"image": {"repository": "r"}, "x": 1}
    assert images.pin_values("metrics-server", "3.13.1", base) == {"image": {"repository": "r", "tag": pinned}, "x": 1}
    assert base == {"image": {"repository": "r"}, "x": 1}  # not changed in place
    # The locked tag itself is pinned; another tag the release chose is left alone.
    assert images.pin_values("metrics-server", "3.13.1", {"image": {"tag": "v0.8.1"}}) == {"image": {"tag": pinned}}
    assert images.pin_values("metrics-server", "3.13.1", {"image": {"tag": "v0.7.2"}}) == {"image": {"tag": "v0.7.2"}}
    # One digest, several values: the device plugin image serves both devicePlugin and gfd.
    gpu = images.pin_values("gpu-operator", "v26.3.0", {})
    assert (
        gpu["devicePlugin"]["version"]
        == gpu["gfd"]["version"]
        == ("sha256:75eff5962176618e486da18d73eae57870369b69f186fc8d193973166d1cfad9")
    )
    # An entry that `replaces` the chart's default (the bundle's ubi9 DCGM for the chart's ubuntu22.04 tag) sets
    # the value where the release leaves it unset; a release that names the replaced default keeps it.
    dcgm = "sha256:d7558fa75ed7b703665cbc6ba6360ef4e53ecdefe65c1881c165d2ac816c674a"
    assert gpu["dcgm"]["version"] == dcgm
    assert (
        images.pin_values("gpu-operator", "v26.3.0", {"dcgm": {"version": "4.5.2-1-ubi9"}})["dcgm"]["version"] == dcgm
    )
    chosen = images.pin_values("gpu-operator", "v26.3.0", {"dcgm": {"version": "4.5.2-1-ubuntu22.04"}})
    assert chosen["dcgm"]["version"] == "4.5.2-1-ubuntu22.04"
    assert images.chart_values("dcgm-exporter", "4.8.1") == {
        "image": {
            "tag": "4.5.3-4.8.2-distroless@sha256:60d3b00ac80b4ae77f94dae2f943685605585ad9e92fdccda3154d009ae317cc"
        }
    }


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"repository": "r", "tag": "t", "digest": "sha256:abc"}, "is not sha256:<64 lowercase hex>"),
        ({"repository": "r", "tag": "t", "digest": "sha256:" + "a" * 64}, "needs its `source`"),
        ({"repository": "r", "tag": "t", "digest": None}, "needs `unpinned`"),
        ({"repository": "r", "tag": "t", "unpinned": "x", "render": {"form": "hex"}}, "needs `chart`, `version`"),
        (
            {"repository": "r", "tag": "t", "unpinned": "x", "render": {"form": "sha"}},
            "render.form 'sha' is not one of",
        ),
        (
            {"repository": "r", "tag": "t", "unpinned": "x", "render": {"form": "ref", "replaces": "u"}},
            "render.replaces names the chart's default tag",
        ),
        (
            {
                "repository": "r",
                "tag": "t",
                "unpinned": "x",
                "render": {"chart": "c", "version": "1", "value": "image.tag", "form": "tag@digest", "replaces": "t"},
            },
            "a tag other than 't'",
        ),
    ],
)
def test_bad_lock_entries_name_the_field(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(images.ImageLockError, match=message.replace("(", r"\(").replace(")", r"\)")):
        images.parse({"images": [entry]}, "lock.json")


def test_every_digest_in_the_lock_names_its_source() -> None:
    for pin in images.load():
        assert (pin.digest is None) == bool(pin.unpinned), pin.ref
        if pin.digest:
            assert pin.source and len(pin.source) > 20, pin.ref


def _chart_values_node(chart_dir: Path, parents: list[str]) -> tuple[dict[str, Any], str, Path, list[str]]:
    """The values mapping at `parents` as the chart renders it, the appVersion of the chart whose templates read
    it, that chart's directory and the path inside it: a path under a dependency's alias is the subchart's own
    values.yaml overlaid with what the parent sets there (kube-prometheus-stack sets nothing under
    `grafana.image`, so the subchart's defaults apply)."""
    import yaml

    meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    values = yaml.safe_load((chart_dir / "values.yaml").read_text()) or {}
    aliases = {d.get("alias") or d["name"]: d["name"] for d in meta.get("dependencies") or []}
    if parents and parents[0] in aliases and (chart_dir / "charts" / aliases[parents[0]]).is_dir():
        sub_node, app, sub_dir, sub_path = _chart_values_node(chart_dir / "charts" / aliases[parents[0]], parents[1:])
        override: Any = values.get(parents[0]) or {}
        for key in parents[1:]:
            override = override.get(key) or {} if isinstance(override, dict) else {}
        return {**sub_node, **override}, app, sub_dir, sub_path
    node = values
    for key in parents:
        node = node[key]
    return node, str(meta["appVersion"]), chart_dir, parents


def _templates_read(chart_dir: Path, path: list[str]) -> bool:
    """Whether a template of the chart reads `.Values.<path>` (a value its values.yaml leaves commented out, as
    node-feature-discovery does with `image.tag`)."""
    ref = ".Values." + ".".join(path)
    return any(ref in f.read_text() for f in (chart_dir / "templates").rglob("*") if f.is_file())


def test_every_rendered_pin_names_a_value_its_pinned_chart_has_with_the_locked_tag() -> None:
    # A chart upgrade that moves or renames the value, or changes its default tag, fails here instead of
    # silently pinning nothing (or pinning the old tag's digest under the new tag).
    from gpucloud.charts import lock as charts_lock

    checked = 0
    for pin in images.load():
        r = pin.render
        if not r or r.get("form") not in images.VALUE_FORMS:
            continue
        chart = charts_lock.pin(r["chart"], r["version"])
        for path in [r["value"]] if isinstance(r["value"], str) else r["value"]:
            *parents, leaf = path.split(".")
            node, app_version, owner, inner = _chart_values_node(chart.chart_dir, parents)
            assert leaf in node or _templates_read(owner, [*inner, leaf]), f"{chart.ref}: no value {path}"
            # The chart's default tag: the locked tag, or the one the entry `replaces` (another build of the same
            # component that the source pins for the same release).
            tag = r.get("replaces") or pin.tag
            if r["form"] == "digest" and leaf == "version":  # the GPU Operator: `version` holds the tag
                assert node[leaf] == tag, (path, node[leaf])
            elif r["form"] == "digest":  # node-exporter: `digest` beside `tag`, which defaults to v<appVersion>
                assert (node["tag"] or f"v{app_version}") == tag and not node[leaf], path
            elif r["form"] == "hex":  # `sha` beside `tag`; an empty tag falls back to the (sub)chart's appVersion
                assert (node["tag"] or app_version) == tag and not node[leaf], path
            else:  # `tag`: the locked tag itself, or empty so that the chart falls back to (v)<appVersion>
                default = node.get(leaf)  # absent where values.yaml leaves it commented out (NFD's image.tag)
                assert default == tag or (not default and tag.lstrip("v") == app_version.lstrip("v")), path
            checked += 1
    assert checked == 32


def _instance_types(value: Any) -> set[str]:
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            if key == "instanceType" and isinstance(item, str):
                found.add(item)
            elif key == "instanceTypes" and isinstance(item, list):
                found.update(str(t) for t in item)
            else:
                found |= _instance_types(item)
        return found
    if isinstance(value, list):
        return set().union(*(_instance_types(v) for v in value)) if value else set()
    return set()


def test_digests_not_known_to_be_indexes_run_only_where_the_shipped_stacks_have_no_arm64_nodes() -> None:
    # A digest the source does not show to be the multi-arch index (`index` null) may be one platform's manifest:
    # it still pulls on amd64 nodes but not on Graviton. The lock accepts such digests only while every node type
    # of the shipped stacks is x86_64; adding an arm64 pool fails here until those entries are confirmed.
    import yaml

    from gpucloud.fleet.labels import arch

    types: set[str] = set()
    for stack in STACKS:
        types |= _instance_types(yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()))
    assert {"p5.48xlarge", "g6e.12xlarge", "m7i.large"} <= types  # the walk reads the pools and the system group
    undecided = [p.ref for p in images.load() if p.digest and p.index is None]
    assert undecided  # OpenCost, Karpenter and the GPU Operator operands: their sources do not say
    assert {t: arch(t) for t in types if arch(t) != "amd64"} == {}
