"""Karpenter NodePools: the ceiling from ``limits`` resolved to instance counts of the types the fleet layer says
the requirements admit; the expected cost from the pool's stated expected size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from gpucloud import fleet
from gpucloud.catalog import InstanceSpec
from gpucloud.cost.pricer import InstanceRates, Pricer, prices
from gpucloud.fleet import BlockDevice, selection
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.prices import rates

Admitted = Mapping[str, tuple[InstanceSpec | None, InstanceRates]]

# What Karpenter launches an EC2NodeClass without blockDeviceMappings with: the AMI family's
# DefaultBlockDeviceMappings (aws/karpenter-provider-aws v1.12.1 pkg/providers/amifamily: resolver.go DefaultEBS is
# 20Gi gp3 encrypted; al2.go and al2023.go map it to /dev/xvda; bottlerocket.go adds a 4Gi copy on /dev/xvda for the
# OS and puts DefaultEBS on /dev/xvdb; windows.go a 50Gi copy on /dev/sda1; custom.go returns nil, so EC2 uses the
# AMI's mappings). Keys: the family lower-cased, as an alias spells it.
_DEFAULT_EBS = BlockDevice(device_name="/dev/xvda", size_gib=20, volume_type="gp3", encrypted=True)
_WINDOWS = (replace(_DEFAULT_EBS, device_name="/dev/sda1", size_gib=50),)
DEFAULT_BLOCK_DEVICES: Final[Mapping[str, tuple[BlockDevice, ...]]] = {
    "al2": (_DEFAULT_EBS,),
    "al2023": (_DEFAULT_EBS,),
    "bottlerocket": (replace(_DEFAULT_EBS, size_gib=4), replace(_DEFAULT_EBS, device_name="/dev/xvdb")),
    "windows2019": _WINDOWS,
    "windows2022": _WINDOWS,
    "windows2025": _WINDOWS,
}


def _market_rate(found: InstanceRates, market: str) -> float | None:
    # Karpenter markets: spot, or on-demand (its "reserved" capacity type bills ODCRs at On-Demand rates).
    return found.spot if market == "spot" else found.on_demand


@prices(*T.KARPENTER_NODEPOOLS)
def karpenter_node_pool(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    """The nodes (below), then their volumes: the EC2NodeClass's blockDeviceMappings (or, without them, the AMI
    family's default that Karpenter applies) x the node count bounds."""
    _nodes(pricer, r)
    _volumes(pricer, r)


def _volumes(pricer: Pricer, r: Mapping[str, Any]) -> None:
    pool = pricer.pool(r)
    if pool.node_class is None or "instance_types" in pool.unknown or not pricer.options.root_volumes:
        return
    expected = pool.counts.desired or 0
    # The most nodes the limits allow is reached with the smallest admitted type; unbounded: only the expected.
    bounds = [selection.limit_nodes(pool.limits, pricer.catalog.find(t)) for t in pool.instance_types]
    most = max((n for n in bounds if n is not None), default=expected) if bounds and None not in bounds else expected
    sized = [d for d in pool.block_devices if d.size_gib]
    if pool.block_devices:
        pricer.root_volumes(r, sized, expected, max(most, expected), "node volumes")
        return
    family = pool.ami_family.lower()
    defaults = DEFAULT_BLOCK_DEVICES.get(family)
    if defaults is None:
        why = (
            "the Custom family has none: EC2 uses the AMI's own block device mappings, whose sizes the plan "
            "does not show"
            if family == "custom"
            else f"the AMI family ({pool.ami_family or 'not stated'}) is not one whose default gpucloud knows"
        )
        pricer.skip(
            r,
            f"billed, not priced: {r.get('name')} nodes' volumes follow the AMI family's default block device mapping "
            f"(EC2NodeClass {pool.node_class} sets no blockDeviceMappings) and {why}",
            "GiB-month",
        )
        return
    for device in defaults:
        label = f"node volumes {device.device_name} (Karpenter's {pool.ami_family} default)"
        pricer.root_volumes(r, [device], expected, max(most, expected), label)


def _nodes(pricer: Pricer, r: Mapping[str, Any]) -> None:
    """Ceiling from `limits` resolved to instance counts of the admitted types; expected from the spec."""
    pool = pricer.pool(r)
    if "instance_types" in pool.unknown:
        pricer.skip(r, "spec.template.spec.requirements is unknown at preview")
        return
    admitted, notes = _admitted(pricer, pool)
    name = str(r.get("name"))
    if not admitted:
        pricer.skip(r, f"Karpenter NodePool admits no instance type gpucloud can price in {pricer.region}: {notes}")
        return
    markets = list(dict.fromkeys("on-demand" if m == fleet.RESERVED else m for m in _ordered(pool.markets)))
    ceiling_rate = "on-demand" if "on-demand" in markets else markets[0]
    expected_market = "spot" if "spot" in markets else ceiling_rate
    best: tuple[float, str, int] | None = None
    unbounded_types: list[str] = []
    for itype, (spec_, found) in admitted.items():
        usd = _market_rate(found, ceiling_rate)
        if usd is None:
            continue
        n = selection.limit_nodes(pool.limits, spec_)
        if n is None:
            unbounded_types.append(itype)
            continue
        if best is None or n * usd > best[0] * best[2]:
            best = (usd, itype, n)
    gpu_pool = any(s is not None and s.accelerator_count > 0 for s, _ in admitted.values())
    if unbounded_types:
        kind = "GPU NodePool" if gpu_pool else "NodePool"
        reason = (
            f"UNBOUNDED CEILING: Karpenter {kind} {name} sets no limits that bound "
            f"{', '.join(sorted(unbounded_types)[:5])}{' ...' if len(unbounded_types) > 5 else ''}"
            f"{' (gpucloud holds no vCPU/memory figures for non-catalog types)' if pool.limits else ''}: "
            "it can launch nodes without end; set spec.limits (cpu, memory, nvidia.com/gpu)"
        )
        pricer.unbounded.append({"urn": str(r.get("urn")), "reason": reason})
        pricer.warnings.append(reason)
    expected = pool.counts.desired
    if expected is None:
        expected = 0
        pricer.warnings.append(
            f"{name}: Karpenter launches nodes for pending pods only and the NodePool states no expected size "
            f"(spec.replicas or the {L.EXPECTED_NODES} annotation): expected cost 0, ceiling from limits"
        )
    cheapest: tuple[float, str] | None = None
    for itype, (_, found) in admitted.items():
        usd = _market_rate(found, expected_market)
        if usd is not None and (cheapest is None or usd < cheapest[0]):
            cheapest = (usd, itype)
    if best is not None and cheapest is not None and (cheapest[1], expected_market) == (best[1], ceiling_rate):
        _item(pricer, r, best[1], ceiling_rate, min(expected, best[2]), best[2], admitted)
        return
    if cheapest is not None and expected:
        # Karpenter's price-capacity-optimized choice: spot when the pool allows it, the cheapest admitted type.
        _item(pricer, r, cheapest[1], expected_market, expected, 0, admitted)
    if best is not None:
        _item(pricer, r, best[1], ceiling_rate, 0, best[2], admitted)
    elif not unbounded_types:
        pricer.skip(r, f"no {ceiling_rate} rate for any admitted type in {pricer.region}: {notes}")


def _ordered(markets: Sequence[str]) -> list[str]:
    # The order Karpenter's capacity types are read in: spot first, then on-demand, then reserved.
    return [m for m in (fleet.SPOT, fleet.ON_DEMAND, fleet.RESERVED) if m in markets]


def _item(
    pricer: Pricer, r: Mapping[str, Any], itype: str, market: str, desired: int, maximum: int, admitted: Admitted
) -> None:
    found = admitted[itype][1]
    usd = _market_rate(found, market)
    if usd is None:
        return
    pricer.add(
        r,
        pricing=market,
        quantity=desired,
        max_quantity=maximum,
        unit_price=usd,
        unit="hour",
        instance_type=itype,
        source=found.origin(market)[0],
        as_of=found.origin(market)[1],
    )


def _admitted(pricer: Pricer, pool: fleet.Pool) -> tuple[dict[str, tuple[InstanceSpec | None, InstanceRates]], str]:
    """Priced types the pool admits, and notes on what was left. Without an explicit type list the pool also
    admits the CPU types gpucloud can price here, narrowed by the same requirements."""
    candidates = set(pool.instance_types)
    if not pool.named_types:
        reqs = [q for q in (selection.requirement(x) for x in pool.requirements) if q is not None]
        cpu = set(rates.CPU_TYPES) | set(pricer.cpu_cache)
        candidates |= {t for t in cpu - candidates if selection.type_admits(t, pricer.catalog.find(t), reqs)}
    admitted: dict[str, tuple[InstanceSpec | None, InstanceRates]] = {}
    left: list[str] = []
    for itype in sorted(candidates):
        found = pricer.instance_rates(itype)
        if isinstance(found, str):
            left.append(found)
            continue
        admitted[itype] = (pricer.catalog.find(itype), found)
    return admitted, "; ".join(left[:3]) or "no type matches the requirements"
