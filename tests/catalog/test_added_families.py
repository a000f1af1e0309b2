"""Issue 27 catalog gaps: g7e, g7, gr6, gr6f, g6f and g5g with sourced specs and prices.

Specs: moto 5.2.5 instance_types.json.gz (DescribeInstanceTypes records). Prices: the Vantage-derived data set
tsaol/aws-gpu (2026-01-21), which the price snapshot is built from; g5g and gr6 in us-east-1 agree with AWS's own
pricing-page data (b0.p.awsstatic.com meteredUnitMaps ec2, as committed in lamngockhuong/aws-price 508fb45,
2025-11): g5g.xlarge 0.42, gr6.4xlarge 1.5392. g7 is in neither price source.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from gpucloud.catalog import get_catalog
from gpucloud.prices.book import get_price_book


class Spec(NamedTuple):
    accelerator: str
    gpus: int
    mem_gib: float
    vcpu: int
    ram_gib: float
    network_gbps: float
    efa: int
    nvme_gb: int
    cpu: str
    on_demand_usd: float | None


EXPECTED: dict[str, Spec] = {
    # g7e: NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GiB (98,304 MiB), Intel.
    "g7e.2xlarge": Spec("RTX-PRO-6000-Server", 1, 96, 8, 64, 50, 0, 1900, "intel", 3.36312),
    "g7e.8xlarge": Spec("RTX-PRO-6000-Server", 1, 96, 32, 256, 100, 1, 1900, "intel", 5.26824),
    "g7e.12xlarge": Spec("RTX-PRO-6000-Server", 2, 96, 48, 512, 400, 1, 3800, "intel", 8.28608),
    "g7e.48xlarge": Spec("RTX-PRO-6000-Server", 8, 96, 192, 2048, 1600, 4, 15200, "intel", 33.14432),
    # g7: RTX PRO 4500 (32 GiB), not the RTX PRO 6000; unpriced.
    "g7.2xlarge": Spec("RTX-PRO-4500-Server", 1, 32, 8, 32, 60, 0, 440, "intel", None),
    "g7.48xlarge": Spec("RTX-PRO-4500-Server", 8, 32, 192, 768, 700, 2, 7600, "intel", None),
    # gr6: the memory-rich G6 on AMD x86_64 (not Graviton).
    "gr6.4xlarge": Spec("L4", 1, 22.35, 16, 128, 25, 0, 600, "amd", 1.5392),
    "gr6.8xlarge": Spec("L4", 1, 22.35, 32, 256, 25, 1, 900, "amd", 2.4464),
    "gr6f.4xlarge": Spec("L4-1/2", 1, 11.18, 16, 128, 25, 0, 450, "amd", 1.066),
    # g6f: fractional L4 (GpuPartitionSize 0.125 / 0.25 / 0.5).
    "g6f.large": Spec("L4-1/8", 1, 2.79, 2, 8, 10, 0, 100, "amd", 0.202),
    "g6f.2xlarge": Spec("L4-1/4", 1, 5.59, 8, 32, 10, 0, 200, "amd", 0.475),
    "g6f.4xlarge": Spec("L4-1/2", 1, 11.18, 16, 64, 25, 0, 450, "amd", 0.95),
    # g5g: NVIDIA T4G with Graviton2 (arm64), EBS only.
    "g5g.xlarge": Spec("T4G", 1, 16, 4, 8, 10, 0, 0, "aws", 0.42),
    "g5g.metal": Spec("T4G", 2, 16, 64, 128, 25, 0, 0, "aws", 2.744),
}


@pytest.mark.parametrize(("name", "want"), sorted(EXPECTED.items()))
def test_added_family_figures(name: str, want: Spec) -> None:
    spec = get_catalog().get(name)
    got = Spec(
        spec.accelerator,
        spec.accelerator_count,
        spec.accelerator_memory_gib,
        spec.vcpu,
        spec.memory_gib,
        spec.network_gbps,
        spec.efa_interfaces,
        spec.local_nvme_gb,
        spec.cpu_manufacturer or "",
        spec.on_demand_usd,
    )
    assert got == want
    assert spec.spec_source == "moto" and "moto 5.2.5" in spec.notes
    if want.on_demand_usd is None:
        assert (spec.price_source, spec.price_date) == (None, None)
        assert "Unpriced: the type is in neither price source" in spec.notes
    else:
        assert (spec.price_source, spec.price_date) == ("vantage", "2026-01-21")


def test_every_size_of_the_added_families_is_present() -> None:
    names = {s.instance_type for s in get_catalog() if s.family in {"g7e", "g7", "gr6", "gr6f", "g6f", "g5g"}}
    assert len(names) == 25
    assert {n for n in names if n.startswith("g6f.")} == {"g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge"}


def test_regional_prices_come_from_the_snapshot_and_g7_is_unpriced_everywhere() -> None:
    book = get_price_book()

    def usd(name: str, region: str) -> float | None:
        fig = book.rates(name, region).on_demand
        return fig.usd if fig else None

    # tsaol/aws-gpu g5g_instances.js: eu-central-1 0.5254, ap-northeast-1 0.5669.
    assert usd("g5g.xlarge", "eu-central-1") == 0.5254
    assert usd("g5g.xlarge", "ap-northeast-1") == 0.5669
    # g7e_instances.js prices us-east-1 and us-east-2 only.
    assert usd("g7e.2xlarge", "us-east-2") == 3.36312
    assert usd("g7e.2xlarge", "eu-central-1") is None
    assert usd("g7.2xlarge", "us-east-1") is None


def test_no_new_family_is_sold_as_capacity_blocks() -> None:
    # DescribeInstanceTypes SupportedUsageClasses: on-demand and spot only for every added size.
    added = [s for s in get_catalog() if s.family in {"g7e", "g7", "gr6", "gr6f", "g6f", "g5g"}]
    assert not any(s.capacity_block for s in added)
    assert all(s.on_demand and s.spot for s in added)
