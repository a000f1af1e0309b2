"""gpucloud.fleet.selection: attribute-based instance requirements and NodePool requirements against the
catalog's facts, bound by bound (p5.48xlarge: 192 vCPU, 2,048 GiB, 8 x H100 80 GB, NVIDIA; g5.xlarge: 4 vCPU,
16 GiB, 1 x A10G; inf2.xlarge: 1 Inferentia2, AWS; g4ad.xlarge: 1 x Radeon Pro V520, AMD — the catalog's data)."""

from __future__ import annotations

from typing import Any

from gpucloud.catalog import Catalog, get_catalog
from gpucloud.fleet import labels as L
from gpucloud.fleet import selection as S

CAT = get_catalog()
P5, G5, INF2, G4AD = (CAT.find(t) for t in ("p5.48xlarge", "g5.xlarge", "inf2.xlarge", "g4ad.xlarge"))


def admits(req: dict[str, Any]) -> list[bool]:
    assert P5 and G5 and INF2 and G4AD
    return [S.abs_admits(req, s) for s in (P5, G5, INF2, G4AD)]


def test_ranges_are_inclusive_and_open_where_a_side_is_missing() -> None:
    assert admits({"acceleratorCount": {"min": 8}}) == [True, False, False, False]
    assert admits({"acceleratorCount": {"min": 1, "max": 1}}) == [False, True, True, True]
    assert admits({"acceleratorCount": {"max": 7}}) == [False, True, True, True]
    assert admits({"acceleratorCount": {}}) == [True, True, True, True]
    # 8 x 80 GiB = 655,360 MiB on p5; 1 x 32 GiB = 32,768 MiB on inf2.
    assert admits({"acceleratorTotalMemoryMib": {"min": 655360}}) == [True, False, False, False]
    assert admits({"acceleratorTotalMemoryMib": {"min": 32768, "max": 32768}}) == [False, False, True, False]
    assert admits({"vcpuCount": {"min": 192, "max": 192}}) == [True, False, False, False]
    assert admits({"vcpuCount": {"max": 4}}) == [False, True, True, True]
    assert admits({"memoryMib": {"min": 16384, "max": 16384}}) == [False, True, True, True]
    assert admits({"memoryMib": {"min": 2097152}}) == [True, False, False, False]


def test_manufacturers_names_kinds_and_type_patterns() -> None:
    assert admits({"acceleratorManufacturers": ["nvidia"]}) == [True, True, False, False]
    assert admits({"acceleratorManufacturers": ["amazon-web-services"]}) == [False, False, True, False]
    assert admits({"acceleratorManufacturers": ["amd"]}) == [False, False, False, True]
    assert admits({"acceleratorNames": ["H100"]}) == [True, False, False, False]
    assert admits({"acceleratorNames": ["a10g", "inferentia2"]}) == [False, True, True, False]
    assert admits({"acceleratorTypes": ["inference"]}) == [False, False, True, False]
    assert admits({"acceleratorTypes": ["gpu"]}) == [True, True, False, True]
    assert admits({"allowedInstanceTypes": ["p5.*", "inf2.xlarge"]}) == [True, False, True, False]
    assert admits({"excludedInstanceTypes": ["g*"]}) == [True, False, True, False]
    assert admits({"allowedInstanceTypes": ["g*"], "excludedInstanceTypes": ["g4ad.*"]}) == [False, True, False, False]
    assert admits({}) == [True, True, True, True]
    assert "p5.48xlarge" in S.abs_types(CAT, {"acceleratorNames": ["h100"]})
    assert "g5.xlarge" not in S.abs_types(CAT, {"acceleratorNames": ["h100"]})


def test_nodepool_requirements() -> None:
    assert S.requirement({"key": "beta.kubernetes.io/instance-type", "operator": "In", "values": ["a", 1]}) == (
        L.INSTANCE_TYPE, "In", ["a"],
    )  # fmt: skip
    assert S.requirement({"key": "k"}) is None and S.requirement({"operator": "In"}) is None
    assert S.requirement("k In x") is None
    listed = S.explicit_types([(L.INSTANCE_TYPE, "In", ["a", "b"]), (L.INSTANCE_TYPE, "In", ["b", "c"])])
    assert listed == ["b"]
    assert S.explicit_types([(L.INSTANCE_TYPE, "NotIn", ["a"])]) is None
    reqs = [
        {"key": L.INSTANCE_TYPE, "operator": "In", "values": ["p5.48xlarge", "g5.xlarge", "p5.48xlarge", "m5.large"]},
        {"key": L.INSTANCE_GPU_COUNT, "operator": "Gt", "values": ["4"]},
    ]
    assert S.nodepool_types(CAT, reqs) == (("p5.48xlarge",), False)
    # m5.large is outside the catalog: an undecided CPU requirement admits it, its family label decides.
    cpu = [{"key": L.INSTANCE_TYPE, "operator": "In", "values": ["m5.large"]},
           {"key": L.INSTANCE_CPU, "operator": "Gt", "values": ["64"]},
           {"key": L.ZONE, "operator": "In", "values": ["nowhere-1a"]}]  # fmt: skip
    assert S.nodepool_types(CAT, cpu) == (("m5.large",), False)
    family = [*cpu[:1], {"key": L.INSTANCE_FAMILY, "operator": "In", "values": ["c5"]}]
    assert S.nodepool_types(CAT, family) == ((), False)
    assert S.nodepool_types(CAT, "not a list") == (tuple(s.instance_type for s in CAT), True)
    gpu_named = [{"key": L.INSTANCE_GPU_NAME, "operator": "In", "values": ["h100"]}]
    types, open_ = S.nodepool_types(CAT, gpu_named)
    assert "p5.48xlarge" in types and "g5.xlarge" not in types and open_ is False
    fams = [{"key": L.INSTANCE_FAMILY, "operator": "In", "values": ["p5", "g5"]}]
    assert S.nodepool_types(CAT, fams)[1] is False
    other_fams = [{"key": L.INSTANCE_FAMILY, "operator": "In", "values": ["p5", "m5"]}]
    assert S.nodepool_types(CAT, other_fams)[1] is True
    not_in = [{"key": L.INSTANCE_GPU_NAME, "operator": "DoesNotExist"}]
    assert S.nodepool_types(CAT, not_in)[1] is True


def test_quantities_and_limits() -> None:
    cases = {"8": 8.0, "1000m": 1.0, "2Gi": 2.0 * 2**30, "1k": 1000.0, " 3 ": 3.0, 4: 4.0, 2.5: 2.5, "1Ki": 1024.0}
    assert {k: S.quantity(k) for k in cases} == cases
    bad = ["-1", "-2Gi", "xGi", "x", "nan", "inf", True, None, -3, float("inf")]
    assert [S.quantity(v) for v in bad] == [None] * len(bad)
    assert P5 is not None and G5 is not None
    assert S.limit_nodes({"nvidia.com/gpu": 16}, P5) == 2
    assert S.limit_nodes({"nvidia.com/gpu": 17, "cpu": "384"}, P5) == 2
    assert S.limit_nodes({"cpu": 383}, P5) == 1
    assert S.limit_nodes({"memory": "4096Gi"}, P5) == 2
    assert S.limit_nodes({"aws.amazon.com/neuron": 1, "pods": 10, "cpu": "x"}, P5) is None
    assert S.limit_nodes({"cpu": 8}, None) is None
    assert S.limit_nodes({"nvidia.com/gpu": 3}, G5) == 3


def test_any_accelerator_requirement_closes_the_pool_to_types_outside_the_catalog() -> None:
    # A type outside the catalog has no accelerator labels, so any positive accelerator requirement excludes it.
    for op, values in (("Exists", []), ("Gt", ["0"]), ("Lt", ["9"]), ("Gte", ["1"]), ("Lte", ["8"])):
        assert S.nodepool_types(CAT, [{"key": L.INSTANCE_GPU_COUNT, "operator": op, "values": values}])[1] is False
    every_family = sorted({s.family for s in CAT})
    assert S.nodepool_types(CAT, [{"key": L.INSTANCE_FAMILY, "operator": "In", "values": every_family}])[1] is False


def test_abs_types_reads_the_requirement_once_with_the_same_answers() -> None:
    """abs_types reads the requirement once for the whole catalog: each type's answer is abs_admits', an unknown
    value raises as it would on the first type, and an empty catalog reads nothing."""
    import pytest
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

    reqs: list[dict[str, Any]] = [
        {"acceleratorCount": {"min": 1, "max": 8}, "acceleratorNames": ["H100", "a10g"]},
        {"vcpuCount": {"min": 4}, "memoryMib": {"max": 65536}, "acceleratorManufacturers": ["nvidia"]},
        {"acceleratorTypes": ["inference"], "excludedInstanceTypes": ["inf2.*"]},
        {"allowedInstanceTypes": ["p5*", "g5.*"], "acceleratorTotalMemoryMib": {"min": 24576}},
        {},
    ]
    for req in reqs:
        expected = tuple(s.instance_type for s in CAT if S.abs_admits(req, s))
        assert S.abs_types(CAT, req) == expected == S.abs_types(CAT, unknown_checking_proxy(req))
    unknown = unknown_checking_proxy({"acceleratorCount": {"min": UNKNOWN_STRING_VALUE}})
    with pytest.raises(UnknownValueError):
        S.abs_types(CAT, unknown)
    assert S.abs_types([], unknown) == ()  # type: ignore[arg-type]


def test_abs_types_answers_a_requirement_once_per_catalog(monkeypatch: Any) -> None:
    """The same requirement (however spelt: a dict, a proxy) against the same catalog is scanned once; another
    catalog gets its own answer."""
    scans: list[object] = []
    matcher = S._abs_matcher

    def counting(params: Any) -> Any:
        scans.append(params)
        return matcher(params)

    monkeypatch.setattr(S, "_ABS_TYPES", {})
    monkeypatch.setattr(S, "_abs_matcher", counting)
    req = {"acceleratorCount": {"min": 1, "max": 8}, "acceleratorManufacturers": ["nvidia"]}
    first = S.abs_types(CAT, req)
    assert S.abs_types(CAT, dict(req)) == first and len(scans) == 1
    assert "p5.48xlarge" in first
    small = Catalog([CAT.get("g6e.xlarge")], [CAT.family_pricing("g6e")])
    assert S.abs_types(small, req) == ("g6e.xlarge",) and len(scans) == 2
