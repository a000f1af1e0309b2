"""catalog/accelerators.json: one sourced capability record per catalog accelerator, consistent with the catalog."""

from __future__ import annotations

from gpucloud.catalog import Catalog
from gpucloud.catalog.accelerators import accelerator, accelerators


def test_every_catalog_accelerator_has_a_sourced_record() -> None:
    records = accelerators()
    assert {s.accelerator for s in Catalog.load()} <= set(records)
    assert all(r.source and r.architecture for r in records.values())
    assert accelerator("H100") is records["H100"] and accelerator("nope") is None


def test_fp8_only_on_hopper_ada_blackwell_and_bf16_not_before_ampere() -> None:
    records = accelerators().values()
    assert {r.architecture for r in records if r.fp8} == {"Hopper", "Ada", "Blackwell"}
    assert {r.name for r in records if not r.bf16} == {"V100", "V100-32GB", "T4", "Radeon-Pro-V520"}
    # Dense FP8 is twice dense BF16 on every FP8 part the catalog gives both figures for.
    catalog = Catalog.load()
    for spec in catalog:
        rec = accelerator(spec.accelerator)
        if rec and rec.fp8_dense_tflops and spec.bf16_tflops:
            assert abs(rec.fp8_dense_tflops / spec.bf16_tflops - 2) < 0.03, spec.instance_type


def test_roles() -> None:
    by = accelerators()
    assert (by["Inferentia2"].training, by["Inferentia2"].serving) == (False, True)
    assert by["Trainium"].training and by["Trainium2"].training
    assert not by["Radeon-Pro-V520"].training and not by["Radeon-Pro-V520"].serving
    assert not any(by[n].quantized_cuda for n in ("Inferentia2", "Trainium", "Trainium2"))
