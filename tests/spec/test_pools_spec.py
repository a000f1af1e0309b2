"""Node pool spec rules: each bad input is rejected with its field path and a fix."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpucloud.spec import SpecError, parse_platform

BASE: dict[str, Any] = {
    "name": "t",
    "environment": "dev",
    "region": "us-east-1",
    "availabilityZones": ["us-east-1a", "us-east-1b"],
    "tags": {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud"},
    "cluster": {"kubernetesVersion": "1.34"},
    "budget": {"monthlyLimitUsd": 1000, "alertEmails": ["a@example.com"]},
}
POOL: dict[str, Any] = {
    "name": "p",
    "workload": "training",
    "instanceTypes": ["p5.48xlarge"],
    "minSize": 0,
    "desiredSize": 0,
    "maxSize": 4,
}


def platform(**pool: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["nodePools"] = [{**POOL, **pool}]
    return data


def issues(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as err:
        parse_platform(data)
    return {i.path: i.message for i in err.value.issues}


P = "gpucloud:platform.nodePools[0]"


def test_valid_pool_parses() -> None:
    spec = parse_platform(platform())
    assert spec.node_pools[0].instance_types == ["p5.48xlarge"]


def test_efa_on_type_without_efa() -> None:
    found = issues(platform(instanceTypes=["g6e.2xlarge"], availabilityZones=["us-east-1a"], efa={"enabled": True}))
    assert list(found) == [f"{P}.efa.enabled"]
    assert "g6e.2xlarge" in found[f"{P}.efa.enabled"]


def test_efa_across_azs() -> None:
    found = issues(platform(availabilityZones=["us-east-1a", "us-east-1b"], efa={"enabled": True}))
    assert list(found) == [f"{P}.availabilityZones"]
    assert "exactly one explicit AZ" in found[f"{P}.availabilityZones"]


def test_efa_without_az() -> None:
    assert list(issues(platform(efa={"enabled": True}))) == [f"{P}.availabilityZones"]


def test_different_gpu_counts() -> None:
    found = issues(platform(instanceTypes=["g6e.12xlarge", "g6e.48xlarge"], capacity={}))
    assert list(found) == [f"{P}.instanceTypes"]
    assert "same accelerator count and EFA interface count" in found[f"{P}.instanceTypes"]


def test_different_efa_interface_counts() -> None:
    # Both carry 4 L40S; the 24xlarge has 2 EFA interfaces, the 12xlarge 1.
    found = issues(platform(instanceTypes=["g6e.12xlarge", "g6e.24xlarge"]))
    assert list(found) == [f"{P}.instanceTypes"]
    assert "g6e.24xlarge=4 accel/2 EFA" in found[f"{P}.instanceTypes"]


def test_spot_on_type_without_spot(monkeypatch: pytest.MonkeyPatch) -> None:
    # The shipped catalog sells every type as spot; p6e-gb200 / trn2u are not spot-capable but not in it,
    # so mark p5.48xlarge as such in a copy of the catalog.
    import dataclasses

    from gpucloud import catalog

    real = catalog.get_catalog()
    patched = catalog.Catalog(
        [dataclasses.replace(s, spot=False) if s.instance_type == "p5.48xlarge" else s for s in real],
        real.families.values(),
    )
    monkeypatch.setattr(catalog, "get_catalog", lambda: patched)
    found = issues(platform(capacity={"onDemandPercentageAboveBase": 0}))
    assert list(found) == [f"{P}.capacity.onDemandPercentageAboveBase"]
    assert "['p5.48xlarge'] cannot run as spot" in found[f"{P}.capacity.onDemandPercentageAboveBase"]


def test_capacity_block_on_unlisted_type() -> None:
    found = issues(
        platform(
            instanceTypes=["g6e.12xlarge"],
            availabilityZones=["us-east-1a"],
            capacity={
                "reserved": {"kind": "capacity-block", "count": 2, "capacityReservationIds": ["cr-0123456789abcdef0"]}
            },
        )
    )
    assert list(found) == [f"{P}.capacity.reserved.kind"]
    assert "not sold for ['g6e.12xlarge']" in found[f"{P}.capacity.reserved.kind"]


@pytest.mark.parametrize("pct", [-1, 101])
def test_on_demand_percentage_outside_range(pct: int) -> None:
    assert list(issues(platform(capacity={"onDemandPercentageAboveBase": pct}))) == [
        f"{P}.capacity.onDemandPercentageAboveBase"
    ]


def test_reserved_count_above_max() -> None:
    found = issues(
        platform(
            capacity={"reserved": {"kind": "odcr", "count": 5, "capacityReservationIds": ["cr-0123456789abcdef0"]}}
        )
    )
    assert f"{P}.capacity.reserved.count" in found
    assert "exceed maxSize 4" in found[f"{P}.capacity.reserved.count"]


def test_unknown_instance_type() -> None:
    found = issues(platform(instanceTypes=["p5.48xlarg"]))
    assert list(found) == [f"{P}.instanceTypes"]
    assert "did you mean 'p5.48xlarge'" in found[f"{P}.instanceTypes"]


def test_spot_diversity_requires_three_types_with_candidates() -> None:
    found = issues(
        platform(workload="inference", instanceTypes=["g6e.xlarge"], capacity={"onDemandPercentageAboveBase": 0})
    )
    assert list(found) == [f"{P}.instanceTypes"]
    assert "at least 3 instance types" in found[f"{P}.instanceTypes"]
    assert "['g6e.2xlarge', 'g6e.4xlarge']" in found[f"{P}.instanceTypes"]


def test_spot_diversity_passes_with_three() -> None:
    spec = parse_platform(
        platform(
            instanceTypes=["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"], capacity={"onDemandPercentageAboveBase": 0}
        )
    )
    assert spec.node_pools[0].spot_candidates == ["g6e.2xlarge", "g6e.4xlarge", "g6e.xlarge"]


def test_spot_diversity_waived_when_catalog_has_one_shape() -> None:
    # Only p5.48xlarge carries 8 H100 with 32 EFA interfaces: one type is all the catalog offers.
    spec = parse_platform(platform(capacity={"onDemandPercentageAboveBase": 50}))
    assert spec.node_pools[0].spot_candidates == ["p5.48xlarge"]


def test_spot_diversity_not_required_without_spot() -> None:
    spec = parse_platform(platform(instanceTypes=["g6e.xlarge"]))
    assert spec.node_pools[0].spot_nodes_possible is False


def test_capacity_block_on_self_managed() -> None:
    found = issues(
        platform(
            backend="self-managed",
            availabilityZones=["us-east-1a"],
            capacity={
                "reserved": {"kind": "capacity-block", "count": 2, "capacityReservationIds": ["cr-0123456789abcdef0"]}
            },
        )
    )
    assert list(found) == [f"{P}.backend"]


def test_karpenter_rejects_resource_group() -> None:
    found = issues(
        platform(
            backend="karpenter",
            capacity={
                "reserved": {
                    "kind": "odcr",
                    "count": 1,
                    "resourceGroupArn": "arn:aws:resource-groups:us-east-1:123456789012:group/gpu",
                }
            },
        )
    )
    assert list(found) == [f"{P}.capacity.reserved.resourceGroupArn"]


def test_amd_gpu_needs_explicit_ami() -> None:
    found = issues(platform(workload="rendering", instanceTypes=["g4ad.xlarge"]))
    assert list(found) == [f"{P}.ami.id"]
    spec = parse_platform(
        platform(workload="rendering", instanceTypes=["g4ad.xlarge"], ami={"id": "ami-0123456789abcdef0"})
    )
    assert spec.node_pools[0].ami.id == "ami-0123456789abcdef0"


def test_bottlerocket_on_neuron() -> None:
    found = issues(platform(instanceTypes=["trn1.32xlarge"], ami={"family": "bottlerocket"}))
    assert list(found) == [f"{P}.ami.family"]


def test_karpenter_settings_validated() -> None:
    found = issues(platform(karpenter={"consolidateAfter": "ten minutes"}))
    assert list(found) == [f"{P}.karpenter.consolidateAfter"]


def test_needs_interruption_handling() -> None:
    spec = parse_platform(platform())
    assert spec.node_pools[0].needs_interruption_handling is False
    spec = parse_platform(platform(backend="karpenter"))
    assert spec.node_pools[0].needs_interruption_handling is True
    spec = parse_platform(platform(capacity={"onDemandPercentageAboveBase": 0}))
    assert spec.node_pools[0].needs_interruption_handling is True
