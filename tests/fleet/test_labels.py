"""gpucloud.fleet.labels: the well-known labels a node of a type carries and node-selector matching. The
p5.48xlarge and inf2.xlarge values are those of the karpenter-provider-aws instance-types reference
(website/content/en/docs/reference/instance-types.md): cpu 192, memory 2097152 (MiB), gpu-memory 81920 (MiB),
local-nvme 30400, hypervisor nitro."""

from __future__ import annotations

from gpucloud.catalog import InstanceSpec, get_catalog
from gpucloud.fleet import labels as L

CAT = get_catalog()


def spec(t: str) -> InstanceSpec:
    s = CAT.find(t)
    assert s is not None
    return s


def test_instance_labels_of_a_gpu_and_a_neuron_type() -> None:
    assert L.instance_labels(spec("p5.48xlarge")) == {
        L.INSTANCE_TYPE: "p5.48xlarge",
        L.ARCH: "amd64",
        L.INSTANCE_CATEGORY: "p",
        L.INSTANCE_GENERATION: "5",
        L.INSTANCE_FAMILY: "p5",
        L.INSTANCE_SIZE: "48xlarge",
        L.INSTANCE_CPU: "192",
        L.INSTANCE_MEMORY: "2097152",
        L.INSTANCE_HYPERVISOR: "nitro",
        L.INSTANCE_CPU_MANUFACTURER: "amd",
        L.INSTANCE_LOCAL_NVME: "30400",
        L.INSTANCE_GPU_NAME: "h100",
        L.INSTANCE_GPU_MANUFACTURER: "nvidia",
        L.INSTANCE_GPU_COUNT: "8",
        L.INSTANCE_GPU_MEMORY: "81920",
    }
    inf2 = L.instance_labels(spec("inf2.xlarge"))
    assert {k: v for k, v in inf2.items() if "accelerator" in k or "gpu" in k} == {
        L.INSTANCE_ACCELERATOR_NAME: "inferentia2",
        L.INSTANCE_ACCELERATOR_MANUFACTURER: "aws",
        L.INSTANCE_ACCELERATOR_COUNT: "1",
    }
    assert L.INSTANCE_LOCAL_NVME not in inf2
    assert L.instance_labels(spec("g4dn.metal"))[L.INSTANCE_HYPERVISOR] == ""
    assert L.instance_labels(spec("g4ad.xlarge"))[L.INSTANCE_GPU_NAME] == "radeon-pro-v520"


def test_accelerator_resources_and_labels() -> None:
    assert [L.accelerator_resource(spec(t)) for t in ("p5.48xlarge", "inf2.xlarge", "g4ad.xlarge")] == [
        L.NVIDIA_GPU, L.NEURON, L.AMD_GPU,
    ]  # fmt: skip
    assert L.accelerator_label(spec("p4d.24xlarge")) == "a100"


def test_type_labels_from_the_name() -> None:
    assert L.type_labels("m7g.large")[L.ARCH] == "arm64" and L.type_labels("g5g.xlarge")[L.ARCH] == "arm64"
    assert L.type_labels("g5.xlarge")[L.ARCH] == "amd64"
    assert L.type_labels("u-6tb1.metal") == {
        L.INSTANCE_TYPE: "u-6tb1.metal",
        L.ARCH: "amd64",
        L.INSTANCE_CATEGORY: "u",
        L.INSTANCE_GENERATION: "1",
        L.INSTANCE_FAMILY: "u-6tb1",
        L.INSTANCE_SIZE: "metal",
    }
    assert L.type_labels("odd") == {L.INSTANCE_TYPE: "odd", L.ARCH: "amd64"}


def test_requirement_matches_every_operator() -> None:
    have = {L.INSTANCE_GPU_COUNT: "8", L.ZONE: "us-east-1a"}
    m = L.requirement_matches
    assert m(have, L.ZONE_BETA, "In", ["us-east-1a"]) and not m(have, L.ZONE, "In", ["us-east-1b"])
    assert not m(have, L.ARCH, "In", ["amd64"])
    assert m(have, L.ARCH, "NotIn", ["amd64"]) and not m(have, L.ZONE, "NotIn", ["us-east-1a"])
    assert m(have, L.ZONE, "NotIn", ["us-east-1b"])
    assert m(have, L.ZONE, "Exists", []) and not m(have, L.ARCH, "Exists", [])
    assert m(have, L.ARCH, "DoesNotExist", []) and not m(have, L.ZONE, "DoesNotExist", [])
    gc = L.INSTANCE_GPU_COUNT
    assert [m(have, gc, op, ["8"]) for op in ("Gt", "Lt", "Gte", "Lte")] == [False, False, True, True]
    assert [m(have, gc, op, ["7"]) for op in ("Gt", "Lt", "Gte", "Lte")] == [True, False, True, False]
    assert [m(have, gc, op, ["9"]) for op in ("Gt", "Lt", "Gte", "Lte")] == [False, True, False, True]
    assert m(have, gc, "Gt", ["x"]) and m(have, gc, "Gt", ["1", "2"]) and m(have, gc, "Gt", [])
    assert not m(have, L.ARCH, "Gt", ["1"]) and not m({gc: "many"}, gc, "Gt", ["1"])
    assert m(have, gc, "Sometimes", ["1"])
    assert L.normalize_labels({L.ZONE_BETA: "b", L.ZONE: "a", "x": "y"}) == {L.ZONE: "a", "x": "y"}
    assert L.normalize_labels({L.ARCH_BETA: "arm64"}) == {L.ARCH: "arm64"}
