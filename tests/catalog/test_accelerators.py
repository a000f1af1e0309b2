"""catalog/accelerators.json: one sourced capability record per catalog accelerator, consistent with the catalog."""

from __future__ import annotations

from gpucloud.catalog import Catalog
from gpucloud.catalog.accelerators import accelerator, accelerators


def test_every_catalog_accelerator_has_a_sourced_record() -> None:
    records = accelerators()
    assert {s.accelerator for s in Catalog.load()} <= set(records)
    assert all(r.source and r.architecture for r in records.values())
    assert accelerator("H100") is records["H100"] and accelerator("nope") is None


def test_fp8_only_on_hopper_ada_blackwell_and_trainium2_and_bf16_not_before_ampere() -> None:
    records = accelerators().values()
    assert {r.architecture for r in records if r.fp8 and r.architecture != "Neuron"} == {"Hopper", "Ada", "Blackwell"}
    # Among Neuron chips only Trainium2 is counted with FP8 (trainium2.rst: 1,287 dense FP8 TFLOPS per device).
    assert {r.name for r in records if r.fp8 and r.architecture == "Neuron"} == {"Trainium2"}
    assert {r.name for r in records if not r.bf16} == {"V100", "V100-32GB", "T4", "T4G", "Radeon-Pro-V520"}
    # Dense FP8 is twice dense BF16 on every FP8 part the catalog gives both figures for.
    catalog = Catalog.load()
    for spec in catalog:
        rec = accelerator(spec.accelerator)
        if rec and rec.fp8_dense_tflops and spec.bf16_tflops:
            # Trainium2: 1,287 FP8 against 655 BF16 (trainium2.rst), 1.965x.
            assert abs(rec.fp8_dense_tflops / spec.bf16_tflops - 2) < 0.04, spec.instance_type


def test_roles() -> None:
    by = accelerators()
    assert (by["Inferentia2"].training, by["Inferentia2"].serving) == (False, True)
    assert by["Trainium"].training and by["Trainium2"].training
    assert not by["Radeon-Pro-V520"].training and not by["Radeon-Pro-V520"].serving
    assert not any(by[n].quantized_cuda for n in ("Inferentia2", "Trainium", "Trainium2"))


def test_trainium2_fp8_from_the_neuron_docs() -> None:
    # aws-neuron/aws-neuron-sdk general/arch/neuron-hardware/trainium2.rst: "1,287 FP8 TFLOPS" dense per device.
    trn2 = accelerators()["Trainium2"]
    assert (trn2.fp8, trn2.fp8_dense_tflops) == (True, 1287)
    assert "trainium2.rst" in trn2.source


def test_b300_dense_figures_from_nvidia_hgx_b300() -> None:
    # NVIDIA HGX B300, per 8 GPUs: FP8 72 PFLOPS and FP16/BF16 36 PFLOPS with sparsity, FP64 10 TFLOPS.
    spec = Catalog.load().get("p6-b300.48xlarge")
    assert (spec.bf16_tflops, spec.fp16_tflops, spec.fp64_tflops) == (2250, 2250, 1.25)
    assert accelerators()["B300"].fp8_dense_tflops == 4500
    assert spec.memory_bandwidth_gbps is None  # not in the sources: B300 serving stays excluded


def test_a10g_fp64_is_one_64th_of_fp32() -> None:
    # NVIDIA A10 datasheet: FP32 31.2 TFLOPS; NVIDIA GA102 whitepaper: "The FP64 TFLOP rate is 1/64th the TFLOP rate
    # of FP32 operations". 31.2 / 64 = 0.4875 (the catalog had 0.98, the 1/32 figure).
    g5 = [s for s in Catalog.load() if s.accelerator == "A10G"]
    assert len(g5) == 8 and {s.fp64_tflops for s in g5} == {0.4875}
    assert all("GA102 whitepaper" in s.notes for s in g5)
