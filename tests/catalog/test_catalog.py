"""gpucloud.catalog: figures match the reference table, names are checked against botocore, lookups behave."""

from __future__ import annotations

import json
import pickle
import re
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from gpucloud.catalog import (
    SCHEMA,
    Catalog,
    FamilyPricing,
    InstanceSpec,
    NotInCatalog,
    UnknownInstanceType,
    ec2_instance_types,
    ec2_regions,
    family_of,
    get_catalog,
    is_gpu_instance_type,
    is_valid_ec2_instance_type,
    validate_instance_type,
)


class Row(NamedTuple):
    accelerator: str
    accel_count: int
    mem_gib: float
    vcpu: int
    ram_gib: float
    network_gbps: float
    efa: int
    cards: int
    nvme_gb: int
    disks: int
    on_demand_usd: float | None
    capacity_block_usd: float | None


# Section 1 of the reference table, row by row.
REFERENCE_ROWS: dict[str, Row] = {
    "p3.2xlarge": Row("V100", 1, 16, 8, 61, 10, 0, 1, 0, 0, 3.06, None),
    "p3.8xlarge": Row("V100", 4, 16, 32, 244, 10, 0, 1, 0, 0, 12.24, None),
    "p3.16xlarge": Row("V100", 8, 16, 64, 488, 25, 0, 1, 0, 0, 24.48, None),
    "p3dn.24xlarge": Row("V100-32GB", 8, 32, 96, 768, 100, 1, 1, 1800, 2, 31.212, None),
    "p4d.24xlarge": Row("A100-40GB", 8, 40, 96, 1152, 400, 4, 4, 8000, 8, 21.957642, 14.75),
    "p4de.24xlarge": Row("A100-80GB", 8, 80, 96, 1152, 400, 4, 4, 8000, 8, 27.44705, None),
    "p5.4xlarge": Row("H100", 1, 80, 16, 256, 100, 1, 1, 3800, 1, 6.88, None),
    "p5.48xlarge": Row("H100", 8, 80, 192, 2048, 3200, 32, 32, 30400, 8, 55.04, 41.528),
    "p5e.48xlarge": Row("H200", 8, 141, 192, 2048, 3200, 32, 32, 30400, 8, None, 47.76),
    "p5en.48xlarge": Row("H200", 8, 141, 192, 2048, 3200, 16, 16, 30400, 8, 63.296, 54.92),
    "p6-b200.48xlarge": Row("B200", 8, 179.06, 192, 2048, 3200, 8, 8, 30400, 8, 113.9328, 98.84),
    "p6-b300.48xlarge": Row("B300", 8, 268.6, 192, 4096, 6400, 16, 17, 30400, 8, 142.416, 112.32),
    "g4dn.xlarge": Row("T4", 1, 16, 4, 16, 25, 0, 1, 125, 1, 0.526, None),
    "g4dn.12xlarge": Row("T4", 4, 16, 48, 192, 50, 1, 1, 900, 1, 3.912, None),
    "g4dn.metal": Row("T4", 8, 16, 96, 384, 100, 1, 1, 1800, 2, 7.824, None),
    "g4ad.xlarge": Row("Radeon-Pro-V520", 1, 8, 4, 16, 10, 0, 1, 150, 1, 0.37853, None),
    "g4ad.16xlarge": Row("Radeon-Pro-V520", 4, 8, 64, 256, 25, 0, 1, 0, 1, 3.468, None),
    "g5.xlarge": Row("A10G", 1, 22.35, 4, 16, 10, 0, 1, 250, 1, 1.006, None),
    "g5.12xlarge": Row("A10G", 4, 22.35, 48, 192, 40, 1, 1, 3800, 1, 5.672, None),
    "g5.48xlarge": Row("A10G", 8, 22.35, 192, 768, 100, 1, 1, 7600, 2, 16.288, None),
    "g6.xlarge": Row("L4", 1, 22.35, 4, 16, 10, 0, 1, 250, 1, 0.8048, None),
    "g6.12xlarge": Row("L4", 4, 22.35, 48, 192, 40, 1, 1, 3760, 4, 4.6016, None),
    "g6.48xlarge": Row("L4", 8, 22.35, 192, 768, 100, 1, 1, 7520, 8, 13.3504, None),
    "g6e.xlarge": Row("L40S", 1, 44.7, 4, 32, 20, 0, 1, 250, 1, 1.861, None),
    "g6e.12xlarge": Row("L40S", 4, 44.7, 48, 384, 100, 1, 1, 3800, 2, 10.49264, None),
    "g6e.48xlarge": Row("L40S", 8, 44.7, 192, 1536, 400, 4, 4, 7600, 4, 30.13118, None),
    "inf2.xlarge": Row("Inferentia2", 1, 32, 4, 16, 15, 0, 1, 0, 0, 0.7582, None),
    "inf2.48xlarge": Row("Inferentia2", 12, 32, 192, 768, 100, 0, 1, 0, 0, 12.98127, None),
    "trn1.32xlarge": Row("Trainium", 16, 32, 128, 512, 800, 8, 8, 7600, 4, 21.50, 9.532),
    "trn1n.32xlarge": Row("Trainium", 16, 32, 128, 512, 1600, 16, 16, 7600, 4, 24.78, None),
    "trn2.48xlarge": Row("Trainium2", 16, 96, 192, 2048, 3200, 16, 16, 7600, 4, None, 35.7608),
}

# Intermediate sizes from moto's DescribeInstanceTypes snapshot: (GPU, count, vCPU, RAM GiB, NVMe GB, EFA).
INTERMEDIATE_SIZES: dict[str, tuple[str, int, int, float, int, int]] = {
    "g4dn.2xlarge": ("T4", 1, 8, 32, 225, 0),
    "g4dn.4xlarge": ("T4", 1, 16, 64, 225, 0),
    "g4dn.8xlarge": ("T4", 1, 32, 128, 900, 1),
    "g4dn.16xlarge": ("T4", 1, 64, 256, 900, 1),
    "g5.2xlarge": ("A10G", 1, 8, 32, 450, 0),
    "g5.4xlarge": ("A10G", 1, 16, 64, 600, 0),
    "g5.8xlarge": ("A10G", 1, 32, 128, 900, 1),
    "g5.16xlarge": ("A10G", 1, 64, 256, 1900, 1),
    "g5.24xlarge": ("A10G", 4, 96, 384, 3800, 1),
    "g6.2xlarge": ("L4", 1, 8, 32, 450, 0),
    "g6.4xlarge": ("L4", 1, 16, 64, 600, 0),
    "g6.8xlarge": ("L4", 1, 32, 128, 900, 1),
    "g6.16xlarge": ("L4", 1, 64, 256, 1880, 1),
    "g6.24xlarge": ("L4", 4, 96, 384, 3760, 1),
    "g6e.2xlarge": ("L40S", 1, 8, 64, 450, 0),
    "g6e.4xlarge": ("L40S", 1, 16, 128, 600, 0),
    "g6e.8xlarge": ("L40S", 1, 32, 256, 900, 1),
    "g6e.16xlarge": ("L40S", 1, 64, 512, 1900, 1),
    "g6e.24xlarge": ("L40S", 4, 96, 768, 3800, 2),
}

# Sizes added for issue 14 (every size of every supported family): vCPU/RAM/count from moto's
# DescribeInstanceTypes records (inf2, trn1) or the Vantage-derived data set (g4ad: moto lacks it).
ADDED_SIZES: dict[str, tuple[str, int, int, float, str]] = {
    "inf2.8xlarge": ("Inferentia2", 1, 32, 128, "moto"),
    "inf2.24xlarge": ("Inferentia2", 6, 96, 384, "moto"),
    "trn1.2xlarge": ("Trainium", 1, 8, 32, "moto"),
    "g4ad.2xlarge": ("Radeon-Pro-V520", 1, 8, 32, "vantage"),
    "g4ad.4xlarge": ("Radeon-Pro-V520", 1, 16, 64, "vantage"),
    "g4ad.8xlarge": ("Radeon-Pro-V520", 2, 32, 128, "vantage"),
}

REQUIRED_FAMILIES = {
    "p3",
    "p3dn",
    "p4d",
    "p4de",
    "p5",
    "p5e",
    "p5en",
    "p6-b200",
    "p6-b300",
    "g4dn",
    "g4ad",
    "g5",
    "g6",
    "g6e",
    "inf2",
    "trn1",
    "trn1n",
    "trn2",
    # Issue 27: Blackwell RTX PRO (g7e, g7), memory-rich L4 (gr6, gr6f), fractional L4 (g6f), T4G + Graviton2 (g5g).
    "g7e",
    "g7",
    "gr6",
    "gr6f",
    "g6f",
    "g5g",
}

# The issue 27 families (tests/catalog/test_added_families.py checks their figures).
ISSUE_27_SIZES = 25

CAPACITY_BLOCK_TYPES = {
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.4xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "p6-b300.48xlarge",
    "trn1.32xlarge",
    "trn2.48xlarge",
}

EFA_ONLY_TYPES = {
    "p5.4xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "p6-b300.48xlarge",
    "g6e.48xlarge",
    "trn1.32xlarge",
    "trn1n.32xlarge",
    "trn2.48xlarge",
}

AWS_PRICE_LIST_DATE = "2026-07-28"
VANTAGE_DATE = "2026-01-21"
CAPACITY_BLOCK_DATE = "2026-08-01"
MOTO_PRICE_NOTE = "price not in shipped catalog; run gpucloud prices refresh"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return get_catalog()


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    text = resources.files("gpucloud.catalog").joinpath("instances.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


# --- figures -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "row"), sorted(REFERENCE_ROWS.items()))
def test_reference_row_figures(catalog: Catalog, name: str, row: Row) -> None:
    spec = catalog.get(name)
    actual = Row(
        spec.accelerator,
        spec.accelerator_count,
        spec.accelerator_memory_gib,
        spec.vcpu,
        spec.memory_gib,
        spec.network_gbps,
        spec.efa_interfaces,
        spec.network_cards,
        spec.local_nvme_gb,
        spec.local_nvme_disks,
        spec.on_demand_usd,
        spec.capacity_block_usd,
    )
    assert actual == row
    assert spec.spec_source == "reference"


@pytest.mark.parametrize(("name", "expected"), sorted(INTERMEDIATE_SIZES.items()))
def test_intermediate_sizes_from_moto_are_marked_and_unpriced(
    catalog: Catalog, name: str, expected: tuple[str, int, int, float, int, int]
) -> None:
    spec = catalog.get(name)
    assert (
        spec.accelerator,
        spec.accelerator_count,
        spec.vcpu,
        spec.memory_gib,
        spec.local_nvme_gb,
        spec.efa_interfaces,
    ) == expected
    assert spec.spec_source == "moto"
    assert spec.on_demand_usd is None
    assert spec.price_source is None
    assert spec.price_date is None
    assert MOTO_PRICE_NOTE in spec.notes.lower()


def test_p5_48xlarge_full_record(catalog: Catalog) -> None:
    spec = catalog.get("p5.48xlarge")
    assert spec.family == "p5"
    assert (spec.accelerator, spec.manufacturer, spec.accelerator_kind) == ("H100", "nvidia", "gpu")
    assert spec.accelerator_count == 8
    assert spec.accelerator_memory_gib == 80
    assert spec.total_accelerator_memory_gib == 640
    assert spec.memory_bandwidth_gbps == 3350
    assert spec.efa_interfaces == 32
    assert spec.efa_generation == 2
    assert spec.efa_supported is True
    assert spec.efa_only_supported is True
    assert spec.has_instance_store is True
    assert spec.interconnect == "NVSwitch, 900 GB/s"
    assert (spec.bf16_tflops, spec.fp16_tflops, spec.int8_tops) == (989, 989, 1979)
    assert (spec.fp64_tflops, spec.fp64_tensor_tflops) == (34, 67)
    assert spec.on_demand_usd == 55.04
    assert spec.price_source == "aws-price-list"
    assert spec.price_date == AWS_PRICE_LIST_DATE
    assert spec.capacity_block_usd == 41.528
    assert spec.capacity_block_price_date == CAPACITY_BLOCK_DATE
    assert (spec.on_demand, spec.spot, spec.capacity_block) == (True, True, True)
    assert spec.deprecated is False
    assert spec.spot_usd is None


def test_efa_counts(catalog: Catalog) -> None:
    assert catalog.get("p5en.48xlarge").efa_interfaces == 16
    assert catalog.get("p5en.48xlarge").efa_generation == 3
    assert catalog.get("p4d.24xlarge").efa_interfaces == 4
    assert catalog.get("p4d.24xlarge").efa_generation == 1
    assert catalog.get("g6e.48xlarge").efa_interfaces == 4
    assert catalog.get("p6-b200.48xlarge").efa_generation == 4
    assert catalog.get("p6-b300.48xlarge").network_cards == 17
    assert catalog.get("p6-b300.48xlarge").efa_interfaces == 16


def test_inf2_48xlarge_has_no_efa(catalog: Catalog) -> None:
    spec = catalog.get("inf2.48xlarge")
    assert spec.efa_interfaces == 0
    assert spec.efa_supported is False
    assert spec.efa_generation is None
    assert spec.efa_only_supported is False
    assert spec.has_instance_store is False
    assert spec.is_gpu is False
    assert (spec.manufacturer, spec.accelerator_kind) == ("aws", "neuron")


def test_p5e_has_no_on_demand_sku(catalog: Catalog) -> None:
    spec = catalog.get("p5e.48xlarge")
    assert spec.on_demand is False
    assert spec.on_demand_usd is None
    assert spec.price_source is None
    assert spec.price_date is None
    assert spec.capacity_block is True
    assert spec.capacity_block_usd == 47.76


def test_trn2_memory_and_market(catalog: Catalog) -> None:
    spec = catalog.get("trn2.48xlarge")
    assert spec.accelerator_memory_gib == 96
    assert spec.total_accelerator_memory_gib == 1536
    assert spec.memory_bandwidth_gbps == 2900
    assert spec.bf16_tflops == 655
    assert spec.int8_tops is None
    assert spec.on_demand is False
    assert spec.on_demand_usd is None
    assert spec.capacity_block_usd == 35.7608


def test_no_bf16_on_v100_and_t4(catalog: Catalog) -> None:
    for name in ("p3.2xlarge", "p3dn.24xlarge", "g4dn.xlarge"):
        assert catalog.get(name).bf16_tflops is None, name
    assert catalog.get("p3.2xlarge").fp16_tflops == 125
    assert catalog.get("g4dn.xlarge").fp16_tflops == 65
    assert catalog.get("g4dn.xlarge").int8_tops == 130


def test_burst_network_flag(catalog: Catalog) -> None:
    burst = {s.instance_type for s in catalog if s.network_burst and s.spec_source == "reference"}
    assert burst == {"p3.2xlarge", "g4dn.xlarge", "g4ad.xlarge", "g5.xlarge", "g6.xlarge", "g6e.xlarge", "inf2.xlarge"}
    assert catalog.get("p3.2xlarge").network_gbps == 10


def test_price_sources_and_dates(catalog: Catalog) -> None:
    assert catalog.get("p3.2xlarge").price_source == "vantage"
    assert catalog.get("p3.2xlarge").price_date == VANTAGE_DATE
    assert catalog.get("g6e.48xlarge").price_source == "aws-price-list"
    assert catalog.get("g6e.48xlarge").price_date == AWS_PRICE_LIST_DATE
    assert catalog.get("trn1.32xlarge").price_date == AWS_PRICE_LIST_DATE
    # The p4d block rate predates the page's 2025-01-01 update; its exact date is unknown.
    assert catalog.get("p4d.24xlarge").capacity_block_source == "aws-capacity-blocks-pre2025"
    assert catalog.get("p4d.24xlarge").capacity_block_price_date is None
    assert catalog.price_date == VANTAGE_DATE


def test_market_availability(catalog: Catalog) -> None:
    assert {s.instance_type for s in catalog if s.capacity_block} == CAPACITY_BLOCK_TYPES
    assert {s.instance_type for s in catalog if not s.on_demand} == {"p5e.48xlarge", "trn2.48xlarge"}
    assert {s.instance_type for s in catalog if not s.spot} == set()
    assert {s.instance_type for s in catalog if s.deprecated} == {
        "p3.2xlarge",
        "p3.8xlarge",
        "p3.16xlarge",
        "p3dn.24xlarge",
    }


def test_efa_only_supported_set(catalog: Catalog) -> None:
    assert {s.instance_type for s in catalog if s.efa_only_supported} == EFA_ONLY_TYPES


def test_accelerator_manufacturers(catalog: Catalog) -> None:
    assert catalog.get("g4ad.xlarge").manufacturer == "amd"
    assert catalog.get("trn1.32xlarge").manufacturer == "aws"
    assert catalog.get("g6.xlarge").manufacturer == "nvidia"


def test_compute_figures_shared_across_family_sizes(catalog: Catalog) -> None:
    for family in ("g4dn", "g5", "g6", "g6e"):
        specs = [s for s in catalog if s.family == family]
        shapes = {(s.accelerator_memory_gib, s.bf16_tflops, s.fp16_tflops, s.int8_tops, s.fp64_tflops) for s in specs}
        assert len(shapes) == 1, family


def test_excluded_types_raise_not_in_catalog_with_reason(catalog: Catalog) -> None:
    assert set(catalog.excluded) == {"p6e-gb200.36xlarge", "trn2.3xlarge", "trn2u.48xlarge"}
    with pytest.raises(NotInCatalog, match="UltraServers") as info:
        catalog.get("p6e-gb200.36xlarge")
    assert info.value.reason is not None
    assert "no spot" in info.value.reason


# --- family pricing ----------------------------------------------------------------------------------------


def test_family_pricing_figures(catalog: Catalog) -> None:
    p5 = catalog.family_pricing("p5.48xlarge")
    assert (p5.spot_discount_low, p5.spot_discount_high, p5.spot_discount) == (0.45, 0.62, 0.535)
    assert p5.spot_interruption_bucket == 3
    assert (p5.reserved_1y_low, p5.reserved_1y_high, p5.reserved_1y) == (0.35, 0.43, 0.39)
    assert (p5.reserved_3y_low, p5.reserved_3y_high, p5.reserved_3y) == (0.55, 0.72, 0.635)

    g4dn = catalog.family_pricing("g4dn")
    assert (g4dn.spot_discount_low, g4dn.spot_discount_high, g4dn.spot_discount) == (0.62, 0.66, 0.64)
    assert g4dn.spot_interruption_bucket == 1
    assert g4dn.reserved_1y == 0.371
    assert g4dn.reserved_3y == 0.60

    assert catalog.family_pricing("g6").reserved_1y == 0.349
    assert catalog.family_pricing("trn1n").reserved_1y == 0.385
    assert catalog.family_pricing("p3dn").reserved_1y == 0.384
    assert catalog.family_pricing("p4de").reserved_1y == 0.366
    assert catalog.family_pricing("p5en").spot_discount == 0.57
    # Families without spot data use the rule of thumb for current training nodes.
    b200 = catalog.family_pricing("p6-b200")
    assert (b200.spot_discount_low, b200.spot_discount_high, b200.spot_discount) == (0.45, 0.60, 0.525)


def test_family_pricing_covers_required_families(catalog: Catalog) -> None:
    assert set(catalog.families) == REQUIRED_FAMILIES
    for pricing in catalog.families.values():
        assert isinstance(pricing, FamilyPricing)
        assert 0 < pricing.spot_discount_low <= pricing.spot_discount <= pricing.spot_discount_high < 1
        assert 0 < pricing.reserved_1y_low <= pricing.reserved_1y <= pricing.reserved_1y_high < 1
        assert 0 < pricing.reserved_3y_low <= pricing.reserved_3y <= pricing.reserved_3y_high < 1
        assert pricing.reserved_1y < pricing.reserved_3y
        assert pricing.spot_interruption_bucket in range(5)
        assert "planning assumption" in pricing.notes


def test_family_pricing_unknown_family_raises_not_in_catalog(catalog: Catalog) -> None:
    with pytest.raises(NotInCatalog, match="'m5'"):
        catalog.family_pricing("m5.large")
    with pytest.raises(UnknownInstanceType):
        catalog.family_pricing("p5.48xlarg")


# --- lookups and errors ------------------------------------------------------------------------------------


def test_unknown_name_suggests_the_close_match(catalog: Catalog) -> None:
    with pytest.raises(UnknownInstanceType) as info:
        catalog.get("p5.48xlarg")
    assert info.value.instance_type == "p5.48xlarg"
    assert info.value.suggestions[0] == "p5.48xlarge"
    assert str(info.value).startswith("unknown instance type 'p5.48xlarg' (did you mean 'p5.48xlarge'")
    assert isinstance(info.value, ValueError)


def test_unknown_instance_type_message_forms() -> None:
    assert str(UnknownInstanceType("zz.top")) == "unknown instance type 'zz.top'"
    assert str(UnknownInstanceType("p5.48xlarg", ["p5.48xlarge"])) == (
        "unknown instance type 'p5.48xlarg' (did you mean 'p5.48xlarge'?)"
    )
    copy = pickle.loads(pickle.dumps(UnknownInstanceType("p5.48xlarg", ["p5.48xlarge"])))
    assert copy.suggestions == ["p5.48xlarge"]


def test_valid_non_catalog_type_raises_not_in_catalog(catalog: Catalog) -> None:
    with pytest.raises(NotInCatalog) as info:
        catalog.get("m5.large")
    assert info.value.instance_type == "m5.large"
    assert str(info.value).startswith("'m5.large' is not in the gpucloud catalog")
    assert isinstance(info.value, KeyError)
    assert pickle.loads(pickle.dumps(info.value)).instance_type == "m5.large"


def test_find_contains_iter_len(catalog: Catalog) -> None:
    assert catalog.find("g6e.12xlarge") is catalog.get("g6e.12xlarge")
    assert catalog.find("m5.large") is None
    assert catalog.find("p5.48xlarg") is None
    assert "p5.48xlarge" in catalog
    assert "m5.large" not in catalog
    assert 42 not in catalog
    names = [s.instance_type for s in catalog]
    assert names == sorted(names)
    listed = len(REFERENCE_ROWS) + len(INTERMEDIATE_SIZES) + len(ADDED_SIZES) + ISSUE_27_SIZES
    assert len(catalog) == len(names) == listed == 81


@pytest.mark.parametrize(("name", "expected"), sorted(ADDED_SIZES.items()))
def test_added_sizes_specs(catalog: Catalog, name: str, expected: tuple[str, int, int, float, str]) -> None:
    spec = catalog.get(name)
    assert (spec.accelerator, spec.accelerator_count, spec.vcpu, spec.memory_gib, spec.spec_source) == expected


def test_every_ec2_size_of_every_catalog_family_is_in_the_catalog_or_excluded(catalog: Catalog) -> None:
    from gpucloud.catalog import ec2_instance_types

    families = {s.family for s in catalog}
    missing = sorted(
        t
        for t in ec2_instance_types()
        if t.partition(".")[0] in families and t not in catalog and t not in catalog.excluded
    )
    assert missing == []
    assert all(isinstance(s, InstanceSpec) for s in catalog)


@pytest.mark.parametrize(
    ("instance_type", "family"),
    [
        ("p6-b200.48xlarge", "p6-b200"),
        ("p6-b300.48xlarge", "p6-b300"),
        ("g6e.12xlarge", "g6e"),
        ("p3dn.24xlarge", "p3dn"),
        ("p5en.48xlarge", "p5en"),
        ("trn1n.32xlarge", "trn1n"),
        ("g4dn.metal", "g4dn"),
    ],
)
def test_family_of(catalog: Catalog, instance_type: str, family: str) -> None:
    assert catalog.family_of(instance_type) == family
    assert family_of(instance_type) == family
    if instance_type in catalog:
        assert catalog.get(instance_type).family == family


def test_family_of_rejects_names_without_size() -> None:
    with pytest.raises(ValueError, match=re.escape("family.size")):
        family_of("p5")


def test_same_gpu_shape(catalog: Catalog) -> None:
    assert catalog.same_gpu_shape("g6e.12xlarge") == ["g6e.12xlarge", "g6e.24xlarge"]
    assert catalog.same_gpu_shape("g6e.xlarge") == [
        "g6e.16xlarge",
        "g6e.2xlarge",
        "g6e.4xlarge",
        "g6e.8xlarge",
        "g6e.xlarge",
    ]
    assert catalog.same_gpu_shape("p5.48xlarge") == ["p5.48xlarge"]
    assert catalog.same_gpu_shape("p5en.48xlarge") == ["p5e.48xlarge", "p5en.48xlarge"]
    assert catalog.same_gpu_shape("trn1.32xlarge") == ["trn1.32xlarge", "trn1n.32xlarge"]


# --- price overrides ---------------------------------------------------------------------------------------


def test_with_prices_overrides_a_copy(catalog: Catalog) -> None:
    updated = catalog.with_prices(
        {
            "p5.48xlarge": {
                "on_demand_usd": 50.0,
                "spot_usd": 24.5,
                "price_date": "2026-09-01",
                "price_source": "cache",
            },
            "p5e.48xlarge": {"on_demand_usd": 60.0, "price_date": "2026-09-01"},
            "g6e.2xlarge": {"spot_usd": 0.9, "price_date": "2026-09-02"},
        }
    )
    p5 = updated.get("p5.48xlarge")
    assert (p5.on_demand_usd, p5.spot_usd, p5.price_date, p5.price_source) == (50.0, 24.5, "2026-09-01", "cache")
    assert p5.spot_price_date == "2026-09-01"
    assert p5.capacity_block_usd == 41.528
    p5e = updated.get("p5e.48xlarge")
    assert (p5e.on_demand_usd, p5e.on_demand, p5e.price_source) == (60.0, True, "override")
    g6e = updated.get("g6e.2xlarge")
    assert (g6e.on_demand_usd, g6e.spot_usd, g6e.spot_price_date) == (None, 0.9, "2026-09-02")
    # The original stays untouched.
    assert catalog.get("p5.48xlarge").on_demand_usd == 55.04
    assert catalog.get("p5.48xlarge").spot_usd is None
    assert catalog.get("p5e.48xlarge").on_demand is False
    assert updated.price_date == VANTAGE_DATE
    assert len(updated) == len(catalog)


@pytest.mark.parametrize(
    ("override", "error"),
    [
        ({"on_demand_usd": 50.0}, "price_date"),
        ({"on_demand_usd": -1.0, "price_date": "2026-09-01"}, "positive"),
        ({"on_demand_usd": "50", "price_date": "2026-09-01"}, "positive"),
        ({"spot_usd": 1.0, "price_date": "yesterday"}, "ISO date"),
        ({"reserved_usd": 1.0, "price_date": "2026-09-01"}, "unknown keys"),
        ({"price_date": "2026-09-01"}, "on_demand_usd and/or spot_usd"),
    ],
)
def test_with_prices_rejects_bad_overrides(catalog: Catalog, override: dict[str, float | str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        catalog.with_prices({"p5.48xlarge": override})


def test_with_prices_rejects_unknown_types(catalog: Catalog) -> None:
    with pytest.raises(UnknownInstanceType):
        catalog.with_prices({"p5.48xlarg": {"on_demand_usd": 1.0, "price_date": "2026-09-01"}})
    with pytest.raises(NotInCatalog):
        catalog.with_prices({"m5.large": {"on_demand_usd": 1.0, "price_date": "2026-09-01"}})


# --- botocore helpers --------------------------------------------------------------------------------------


def test_botocore_instance_types_and_validation() -> None:
    names = ec2_instance_types()
    assert "p5.48xlarge" in names
    assert "p5.48xlarg" not in names
    assert is_valid_ec2_instance_type("m5.large") is True
    assert is_valid_ec2_instance_type("p5.48xlarg") is False
    assert validate_instance_type("g6e.12xlarge") == "g6e.12xlarge"
    with pytest.raises(UnknownInstanceType, match=re.escape("did you mean 'g6e.12xlarge'")):
        validate_instance_type("g6e.12xlarg")


def test_instance_types_read_from_the_model_file_equal_botocores_own_model() -> None:
    import botocore.session

    shape = botocore.session.get_session().get_service_model("ec2").shape_for("InstanceType")
    assert ec2_instance_types() == frozenset(shape.enum)
    assert len(ec2_instance_types()) > 1000


def test_instance_types_fall_back_to_parsing_the_whole_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpucloud.catalog as catalog_module

    expected = ec2_instance_types()
    # A botocore that lays the shape out differently: the fast pattern misses, the full parse still answers.
    monkeypatch.setattr(catalog_module, "_INSTANCE_TYPE_ENUM", re.compile(r"(?!)"))
    ec2_instance_types.cache_clear()
    try:
        assert ec2_instance_types() == expected
    finally:
        ec2_instance_types.cache_clear()


def test_ec2_regions_span_partitions() -> None:
    regions = ec2_regions()
    assert {"us-east-1", "us-west-2", "cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1"} <= regions
    assert "us-east-7" not in regions


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("p5.48xlarge", True),
        ("inf2.xlarge", True),
        ("g5g.xlarge", True),
        ("dl1.24xlarge", True),
        ("gr6.4xlarge", True),
        ("p6e-gb200.36xlarge", True),
        ("m5.large", False),
        ("i4i.large", False),
        ("p5.48xlarg", False),
    ],
)
def test_is_gpu_instance_type(name: str, expected: bool) -> None:
    assert is_gpu_instance_type(name) is expected


# --- data file invariants ----------------------------------------------------------------------------------


def test_json_header(raw: dict[str, Any]) -> None:
    assert raw["schema"] == SCHEMA == "gpucloud.catalog/v1"
    assert raw["price_region"] == "us-east-1"
    assert raw["currency"] == "USD"
    assert {"aws-price-list", "vantage", "aws-capacity-blocks", "moto"} <= set(raw["sources"])
    assert raw["sources"]["aws-price-list"]["as_of"] == AWS_PRICE_LIST_DATE
    assert raw["sources"]["vantage"]["as_of"] == VANTAGE_DATE
    assert raw["sources"]["aws-capacity-blocks"]["as_of"] == CAPACITY_BLOCK_DATE


def test_json_invariants(raw: dict[str, Any]) -> None:
    botocore_names = ec2_instance_types()
    sources = raw["sources"]
    for name, record in raw["instances"].items():
        assert record["family"] in raw["families"], name
        assert name.split(".")[0] == record["family"], name
        assert name in botocore_names, name
        assert record["accelerator_kind"] in {"gpu", "neuron"}, name
        assert record["manufacturer"] in {"nvidia", "amd", "aws"}, name
        assert record["accelerator_count"] > 0, name
        assert record["vcpu"] > 0 and record["memory_gib"] > 0 and record["network_gbps"] > 0, name
        assert record["network_cards"] >= 1, name
        assert (record["efa_generation"] is None) or record["efa_interfaces"] > 0, name
        if record["efa_interfaces"] == 0:
            assert record["efa_only_supported"] is False, name
        od = record["on_demand_usd"]
        if od is not None:
            assert od > 0, name
            assert record["on_demand"] is True, name
            assert record["price_source"] in sources, name
            assert record["price_date"] == sources[record["price_source"]]["as_of"], name
            date.fromisoformat(record["price_date"])
        else:
            assert record["price_source"] is None and record["price_date"] is None, name
        cb = record["capacity_block_usd"]
        if cb is not None:
            assert cb > 0, name
            assert record["capacity_block"] is True, name
            assert record["capacity_block_source"] in sources, name
            assert record["capacity_block_price_date"] == sources[record["capacity_block_source"]]["as_of"], name
        assert record["spec_source"] in sources, name


def test_every_excluded_name_is_a_valid_ec2_type_outside_the_catalog(raw: dict[str, Any]) -> None:
    for name in raw["excluded"]:
        assert name in ec2_instance_types(), name
        assert name not in raw["instances"], name


def test_load_from_path_matches_default(tmp_path: Any, raw: dict[str, Any]) -> None:
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    loaded = Catalog.load(path)
    assert [s.instance_type for s in loaded] == [s.instance_type for s in get_catalog()]
    assert loaded.get("p5.48xlarge") == get_catalog().get("p5.48xlarge")


def test_loader_rejects_bad_records(raw: dict[str, Any]) -> None:
    bad_type = json.loads(json.dumps(raw))
    bad_type["instances"]["p5.48xlarge"]["vcpu"] = "192"
    with pytest.raises(ValueError, match=r"instances\['p5.48xlarge'\].vcpu"):
        Catalog.from_dict(bad_type)
    extra_key = json.loads(json.dumps(raw))
    extra_key["instances"]["p5.48xlarge"]["gpu_count"] = 8
    with pytest.raises(ValueError, match="unknown keys"):
        Catalog.from_dict(extra_key)
    orphan = json.loads(json.dumps(raw))
    del orphan["families"]["p5"]
    with pytest.raises(ValueError, match="without family pricing"):
        Catalog.from_dict(orphan)
    wrong_schema = dict(raw, schema="gpucloud.catalog/v0")
    with pytest.raises(ValueError, match="schema"):
        Catalog.from_dict(wrong_schema)


def test_get_catalog_is_cached() -> None:
    assert get_catalog() is get_catalog()


def test_catalog_is_a_leaf_that_ignores_the_price_cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import ast

    source = resources.files("gpucloud.catalog").joinpath("__init__.py").read_text(encoding="utf-8")
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any(str(name).startswith("gpucloud") for name in imported)
    cache = tmp_path / "prices.json"
    cache.write_text(
        json.dumps(
            {"schema": "gpucloud.prices/v1", "regions": {"us-east-1": {"p5.48xlarge": {"on_demand_usd": 1.0,
                                                                                       "price_date": "2026-11-01"}}}}
        )
    )  # fmt: skip
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_catalog.cache_clear()
    try:
        assert get_catalog().get("p5.48xlarge").on_demand_usd == 55.04
    finally:
        get_catalog.cache_clear()


def test_every_size_matches_describe_instance_types_in_moto(catalog: Catalog) -> None:
    """vCPU, memory and accelerator count of every catalog type moto knows, against its DescribeInstanceTypes
    records (moto 5.2.5 instance_types.json.gz, captured from the EC2 API)."""
    import gzip

    import moto

    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    records: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    checked = 0
    for spec in catalog:
        record = records.get(spec.instance_type)
        if record is None:
            continue  # p3.* and g4ad.*: not in moto (reference section 6.7)
        devices = (record.get("GpuInfo") or {}).get("Gpus") or (record.get("NeuronInfo") or {}).get("NeuronDevices")
        # A fractional GPU (g6f, gr6f) reports Count 0 and LogicalGpuCount 1: one vGPU device to the node.
        count = sum(d["Count"] or d.get("LogicalGpuCount", 0) for d in devices or [])
        assert (spec.vcpu, spec.memory_gib, spec.accelerator_count) == (
            record["VCpuInfo"]["DefaultVCpus"],
            record["MemoryInfo"]["SizeInMiB"] / 1024,
            count,
        ), spec.instance_type
        checked += 1
    assert checked == 48 + ISSUE_27_SIZES
