"""The on-demand / reserved / spot split arithmetic and how it maps to managed node groups."""

from __future__ import annotations

import pytest
from nodepool_fixtures import pool

from gpucloud.components.nodepools import Sizes, Split, capacity_types, managed_groups, plan_capacity, split_size

CR = "cr-0123456789abcdef0"


def test_issue_example_max_10_base_2_quarter_on_demand() -> None:
    assert split_size(10, reserved=0, base=2, on_demand_percentage=25) == Split(reserved=0, on_demand=4, spot=6)


@pytest.mark.parametrize(
    ("total", "reserved", "base", "pct", "expected"),
    [
        (0, 2, 1, 50, Split(0, 0, 0)),
        (1, 2, 1, 50, Split(1, 0, 0)),  # reserved first
        (3, 2, 1, 50, Split(2, 1, 0)),  # then the base
        (4, 2, 1, 50, Split(2, 2, 0)),  # 1 above base, 50% rounds on-demand up
        (5, 2, 1, 50, Split(2, 2, 1)),
        (7, 0, 0, 0, Split(0, 0, 7)),  # all spot
        (7, 0, 0, 100, Split(0, 7, 0)),  # all on-demand
        (4, 0, 5, 0, Split(0, 4, 0)),  # base larger than the size
        (9, 0, 1, 33, Split(0, 4, 5)),  # 8 above base * 33% = 2.64 -> 3
    ],
)
def test_split_size(total: int, reserved: int, base: int, pct: int, expected: Split) -> None:
    got = split_size(total, reserved, base, pct)
    assert got == expected
    assert got.total == total


def test_split_is_monotone() -> None:
    # min <= desired <= max must hold for every node group cut from the split.
    for pct in (0, 10, 25, 50, 99, 100):
        prev = split_size(0, 3, 2, pct)
        for n in range(1, 40):
            cur = split_size(n, 3, 2, pct)
            assert cur.reserved >= prev.reserved and cur.on_demand >= prev.on_demand and cur.spot >= prev.spot
            prev = cur


def test_plan_splits_each_size() -> None:
    p = pool(minSize=1, desiredSize=3, maxSize=10, capacity={"onDemandBase": 2, "onDemandPercentageAboveBase": 25})
    plan = plan_capacity(p)
    assert plan.part("on_demand") == Sizes(1, 3, 4)
    assert plan.part("spot") == Sizes(0, 0, 6)


def test_managed_groups_on_demand_and_spot() -> None:
    p = pool(maxSize=10, desiredSize=3, capacity={"onDemandBase": 2, "onDemandPercentageAboveBase": 25})
    groups = [(g.role, g.capacity_type, g.sizes, g.targets_reservation) for g in managed_groups(p)]
    # The on-demand base (2) is the on-demand group's floor, whatever the pool's minSize.
    assert groups == [("on-demand", "ON_DEMAND", Sizes(2, 3, 4), False), ("spot", "SPOT", Sizes(0, 0, 6), False)]


def test_managed_groups_all_spot() -> None:
    p = pool(capacity={"onDemandPercentageAboveBase": 0})
    assert [(g.role, g.capacity_type, g.sizes) for g in managed_groups(p)] == [("spot", "SPOT", Sizes(0, 1, 4))]


def test_odcr_open_rides_on_on_demand_group() -> None:
    p = pool(
        instanceTypes=["p5.48xlarge"],
        maxSize=6,
        desiredSize=2,
        capacity={
            "onDemandBase": 1,
            "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR], "preference": "open"},
        },
    )
    groups = [(g.role, g.capacity_type, g.sizes, g.targets_reservation) for g in managed_groups(p)]
    assert groups == [("on-demand", "ON_DEMAND", Sizes(1, 2, 6), True)]


def test_odcr_only_gets_its_own_group() -> None:
    p = pool(
        instanceTypes=["p5.48xlarge"],
        maxSize=6,
        desiredSize=3,
        capacity={"onDemandBase": 1, "reserved": {"kind": "odcr", "count": 2, "capacityReservationIds": [CR]}},
    )
    groups = [(g.role, g.capacity_type, g.sizes, g.targets_reservation) for g in managed_groups(p)]
    assert groups == [
        ("reserved", "ON_DEMAND", Sizes(0, 2, 2), True),
        ("on-demand", "ON_DEMAND", Sizes(1, 1, 4), False),
    ]


def test_capacity_block_group_plus_spot() -> None:
    p = pool(
        instanceTypes=["p5.48xlarge"],
        availabilityZones=["us-east-1a"],
        maxSize=6,
        desiredSize=4,
        capacity={
            "onDemandPercentageAboveBase": 0,
            "reserved": {"kind": "capacity-block", "count": 4, "capacityReservationIds": [CR]},
        },
    )
    groups = [(g.role, g.capacity_type, g.sizes) for g in managed_groups(p)]
    assert groups == [("capacity-block", "CAPACITY_BLOCK", Sizes(0, 4, 4)), ("spot", "SPOT", Sizes(0, 0, 2))]
    assert capacity_types(p) == ["reserved", "spot"]


def test_capacity_types_order() -> None:
    assert capacity_types(pool(capacity={"onDemandBase": 1, "onDemandPercentageAboveBase": 50})) == [
        "spot",
        "on-demand",
    ]
    assert capacity_types(pool()) == ["on-demand"]
