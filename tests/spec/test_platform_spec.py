"""Stack spec validation: shipped stacks are valid; bad specs fail with every offending path and the fix."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from gpucloud import spec as spec_mod
from gpucloud.spec import PlatformSpec, SpecError, parse_platform

ROOT = Path(__file__).resolve().parents[2]
P = "gpucloud:platform"


def valid() -> dict[str, Any]:
    return {
        "name": "gpucloud-test",
        "environment": "dev",
        "region": "us-east-1",
        "availabilityZones": ["us-east-1a", "us-east-1b"],
        "tags": {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud"},
        "cluster": {"kubernetesVersion": "1.34"},
        "nodePools": [
            {
                "name": "infer",
                "workload": "inference",
                "instanceTypes": ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"],
                "minSize": 0,
                "desiredSize": 1,
                "maxSize": 4,
            }
        ],
        "budget": {"monthlyLimitUsd": 1000, "alertEmails": ["ops@example.com"]},
    }


def training_pool(**overrides: Any) -> dict[str, Any]:
    pool = {
        "name": "train",
        "workload": "training",
        "instanceTypes": ["p5.48xlarge"],
        "minSize": 0,
        "desiredSize": 1,
        "maxSize": 4,
        "availabilityZones": ["us-east-1a"],
        "efa": {"enabled": True},
    }
    pool.update(overrides)
    return pool


def issues_of(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as info:
        parse_platform(data)
    return {i.path: i.message for i in info.value.issues}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_stacks_are_valid(stack: str) -> None:
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    spec = parse_platform(doc["config"][P], aws_region=doc["config"]["aws:region"])
    assert spec.environment == stack
    assert spec.all_tags["Env"] == stack


def test_valid_spec_defaults() -> None:
    spec = parse_platform(valid())
    pool = spec.node_pools[0]
    assert pool.backend == "managed"
    assert pool.capacity.on_demand_percentage_above_base == 100
    assert pool.capacity.spot_percentage == 0
    assert spec.network.nat_gateways == "per-az"
    assert spec.cluster.endpoint_public_access is False


def mutate(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(valid())
    target: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    last = parts[-1]
    if last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return data


BAD_SPECS = [
    # (id, data, expected path, substring of the message)
    (
        "unknown-key",
        mutate("color", "blue"),
        f"{P}.color",
        "unknown key 'color'; allowed keys: addons, availabilityZones",
    ),
    ("unknown-nested-key", mutate("nodePools.0.gpus", 8), f"{P}.nodePools[0].gpus", "allowed keys:"),
    ("wrong-type", mutate("nodePools.0.maxSize", "many"), f"{P}.nodePools[0].maxSize", "valid integer"),
    (
        "unknown-instance-type",
        mutate("nodePools.0.instanceTypes", ["p5.48xlarg"]),
        f"{P}.nodePools[0].instanceTypes",
        "did you mean 'p5.48xlarge'",
    ),
    (
        "non-gpu-type",
        mutate("nodePools.0.instanceTypes", ["m5.large"]),
        f"{P}.nodePools[0].instanceTypes",
        "not a GPU/accelerator type",
    ),
    ("negative-size", mutate("nodePools.0.minSize", -1), f"{P}.nodePools[0].minSize", "greater than or equal to 0"),
    (
        "min-gt-max",
        mutate("nodePools.0.minSize", 5),
        f"{P}.nodePools[0].desiredSize",
        "minSize <= desiredSize <= maxSize (got 5 <= 1 <= 4)",
    ),
    ("unknown-region", mutate("region", "us-east-9"), f"{P}.region", "unknown AWS region 'us-east-9'"),
    (
        "unknown-workload",
        mutate("nodePools.0.workload", "gaming"),
        f"{P}.nodePools[0].workload",
        "'training', 'inference', 'hpc' or 'rendering'",
    ),
    ("empty-pools", mutate("nodePools", []), f"{P}.nodePools", "at least 1 item"),
    (
        "duplicate-pool-names",
        mutate("nodePools", [valid()["nodePools"][0], valid()["nodePools"][0]]),
        f"{P}.nodePools",
        "repeated: ['infer']",
    ),
    (
        "az-wrong-region",
        mutate("availabilityZones", ["us-west-2a"]),
        f"{P}.availabilityZones[0]",
        "not an AZ of us-east-1",
    ),
    ("missing-tag", mutate("tags", {"Team": "x"}), f"{P}.tags", "missing required cost-allocation tags"),
    (
        "od-percentage-range",
        mutate("nodePools.0.capacity", {"onDemandPercentageAboveBase": 120}),
        f"{P}.nodePools[0].capacity.onDemandPercentageAboveBase",
        "less than or equal to 100",
    ),
    ("unsupported-k8s", mutate("cluster.kubernetesVersion", "1.20"), f"{P}.cluster.kubernetesVersion", "'1.32'"),
    (
        "public-endpoint-no-cidrs",
        mutate("cluster.endpointPublicAccess", True),
        f"{P}.cluster.publicAccessCidrs",
        "explicit CIDR allow-list",
    ),
    ("bad-vpc-cidr", mutate("network", {"vpcCidr": "10.0.0.0/33"}), f"{P}.network.vpcCidr", "not an IPv4 network"),
    ("bad-nat-mode", mutate("network", {"natGateways": "two"}), f"{P}.network.natGateways", "'per-az'"),
    ("bad-email", mutate("budget.alertEmails", ["not-an-email"]), f"{P}.budget.alertEmails[0]", "pattern"),
    ("zero-budget", mutate("budget.monthlyLimitUsd", 0), f"{P}.budget.monthlyLimitUsd", "greater than 0"),
    ("missing-cluster", {k: v for k, v in valid().items() if k != "cluster"}, f"{P}.cluster", "required field"),
    ("bad-pool-name", mutate("nodePools.0.name", "Infer_Pool"), f"{P}.nodePools[0].name", "not a lowercase DNS label"),
    (
        "pool-az-outside-platform",
        mutate("nodePools.0.availabilityZones", ["us-east-1d"]),
        f"{P}.nodePools[0].availabilityZones",
        "not among the platform's availabilityZones",
    ),
]


@pytest.mark.parametrize(("data", "path", "message"), [b[1:] for b in BAD_SPECS], ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_names_path_and_fix(data: dict[str, Any], path: str, message: str) -> None:
    found = issues_of(data)
    assert path in found, f"expected an issue at {path}, got {found}"
    assert message in found[path]


def test_efa_across_two_azs() -> None:
    data = valid()
    data["nodePools"] = [training_pool(availabilityZones=["us-east-1a", "us-east-1b"])]
    found = issues_of(data)
    assert "exactly one explicit AZ" in found[f"{P}.nodePools[0].availabilityZones"]


def test_efa_without_az() -> None:
    data = valid()
    pool = training_pool()
    del pool["availabilityZones"]
    data["nodePools"] = [pool]
    assert "exactly one explicit AZ" in issues_of(data)[f"{P}.nodePools[0].availabilityZones"]


def test_efa_on_type_without_efa() -> None:
    data = valid()
    data["nodePools"] = [training_pool(instanceTypes=["g6e.xlarge"])]
    assert "types without EFA: ['g6e.xlarge']" in issues_of(data)[f"{P}.nodePools[0].efa.enabled"]


def test_mixed_gpu_shapes_in_one_pool() -> None:
    data = valid()
    data["nodePools"] = [training_pool(instanceTypes=["p5.48xlarge", "p4d.24xlarge"])]
    message = issues_of(data)[f"{P}.nodePools[0].instanceTypes"]
    assert "p5.48xlarge=8 accel/32 EFA" in message
    assert "p4d.24xlarge=8 accel/4 EFA" in message


def test_spot_on_type_without_spot(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from gpucloud import catalog

    real = catalog.get_catalog()

    class NoSpotForG6e:
        """The shipped catalog offers spot for every type it holds; this one withdraws it for g6e.xlarge."""

        def __contains__(self, name: str) -> bool:
            return name in real

        def get(self, name: str) -> catalog.InstanceSpec:
            spec = real.get(name)
            return dataclasses.replace(spec, spot=False) if name == "g6e.xlarge" else spec

        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

    monkeypatch.setattr(catalog, "get_catalog", lambda: NoSpotForG6e())
    data = mutate("nodePools.0.capacity", {"onDemandPercentageAboveBase": 40})
    found = issues_of(data)
    assert "['g6e.xlarge'] cannot run as spot" in found[f"{P}.nodePools[0].capacity.onDemandPercentageAboveBase"]
    # All on-demand needs no spot market, so the same pool passes.
    assert parse_platform(mutate("nodePools.0.capacity", {"onDemandPercentageAboveBase": 100})).node_pools[0]


def test_type_without_on_demand_needs_capacity_block() -> None:
    data = valid()
    data["nodePools"] = [training_pool(instanceTypes=["p5e.48xlarge"])]
    found = issues_of(data)
    assert "['p5e.48xlarge'] have no on-demand offering" in found[f"{P}.nodePools[0].instanceTypes"]


def test_reserved_count_above_max() -> None:
    data = valid()
    data["nodePools"] = [
        training_pool(
            capacity={"reserved": {"kind": "odcr", "count": 9, "capacityReservationIds": ["cr-0123456789abcdef0"]}}
        )
    ]
    found = issues_of(data)
    assert "9 reserved nodes exceed maxSize 4" in found[f"{P}.nodePools[0].capacity.reserved.count"]


def test_capacity_block_on_type_without_blocks() -> None:
    data = valid()
    data["nodePools"] = [
        {
            **valid()["nodePools"][0],
            "instanceTypes": ["g6e.12xlarge"],
            "availabilityZones": ["us-east-1a"],
            "capacity": {
                "reserved": {"kind": "capacity-block", "count": 1, "capacityReservationIds": ["cr-0123456789abcdef0"]}
            },
        }
    ]
    found = issues_of(data)
    assert "Capacity Blocks are not sold for ['g6e.12xlarge']" in found[f"{P}.nodePools[0].capacity.reserved.kind"]


def test_capacity_block_needs_one_id() -> None:
    data = valid()
    data["nodePools"] = [training_pool(capacity={"reserved": {"kind": "capacity-block", "count": 2}})]
    found = issues_of(data)
    assert "exactly one purchased block" in found[f"{P}.nodePools[0].capacity.reserved.capacityReservationIds"]


def test_bad_reservation_id() -> None:
    data = valid()
    data["nodePools"] = [
        training_pool(capacity={"reserved": {"kind": "odcr", "count": 1, "capacityReservationIds": ["res-1"]}})
    ]
    found = issues_of(data)
    assert (
        "not capacity reservation ids: ['res-1']" in found[f"{P}.nodePools[0].capacity.reserved.capacityReservationIds"]
    )


def test_every_problem_reported_at_once() -> None:
    data = mutate("region", "mars-1")
    data["nodePools"][0]["maxSize"] = -3
    data["color"] = 1
    found = issues_of(data)
    assert {f"{P}.region", f"{P}.nodePools[0].maxSize", f"{P}.color"} <= set(found)


def test_error_message_is_one_paragraph_listing_issues() -> None:
    with pytest.raises(SpecError) as info:
        parse_platform(mutate("nodePools.0.workload", "gaming"))
    text = str(info.value)
    assert text.startswith("invalid stack spec: 1 problem\n  - gpucloud:platform.nodePools[0].workload: ")


def test_region_mismatch_with_aws_region() -> None:
    with pytest.raises(SpecError) as info:
        parse_platform(valid(), aws_region="us-west-2")
    assert info.value.issues[0].path == "aws:region"
    assert "differs from gpucloud:platform.region 'us-east-1'" in info.value.issues[0].message


def test_not_an_object() -> None:
    with pytest.raises(SpecError) as info:
        parse_platform("[1, 2]")
    assert info.value.issues[0].message == "must be an object, got list"


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> None:
    if model in seen:
        return
    seen.add(model)
    for f in model.model_fields.values():
        for candidate in _nested(f.annotation):
            _models(candidate, seen)


def _nested(annotation: Any) -> list[type[BaseModel]]:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += _nested(arg)
    return out


def test_every_spec_field_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()
    _models(PlatformSpec, seen)
    for name in spec_mod.__all__:
        obj = getattr(spec_mod, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            _models(obj, seen)
    missing = [f"{m.__name__}.{n}" for m in seen for n, f in m.model_fields.items() if not f.description]
    assert missing == []
    assert len(seen) >= 10
