"""Region offering: a pool whose instance types are not offered in its region never launches a node there.

For each pool of the fleet layer, the types it names (node group ``instanceTypes``, ASG overrides, a launch
template's type, a NodePool's ``node.kubernetes.io/instance-type`` list) are looked up in the offering data
(gpucloud.prices.offerings: a refresh of EC2 DescribeInstanceTypeOfferings, else the shipped price snapshot):

* every named type not offered: the pool never starts a node (an **error** when EC2's own offering list, refreshed
  at most ``FRESH_DAYS`` ago, says so; a **warning naming the source and its date** when only a price list lacks
  the type, or EC2's list is older, since AWS adds types to regions and a price list may not price all it sells);
* some named types not offered: a warning (the pool launches only the others); types a NodePool's requirements
  admit without naming them are only reported when none is offered (Karpenter picks among the offered ones);
* no data for the type or region: nothing is said (unknown is not a defect).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from gpucloud import fleet
from gpucloud.conformance import ConformanceContext, Finding, Severity, register_check
from gpucloud.prices.offerings import FRESH_DAYS, Offering, offering

CHECK = "offering"
REFRESH = "gpucloud prices offerings --region {region}"


def _today(ctx: ConformanceContext) -> date:
    as_of = ctx.facts.get("offering.as_of")
    return as_of if isinstance(as_of, date) else date.today()


def _source(found: list[Offering]) -> str:
    return "; ".join(sorted({f"{o.source} ({o.as_of or 'undated'})" for o in found}))


@register_check(CHECK)
def check_offering(ctx: ConformanceContext) -> Iterator[Finding]:
    today = _today(ctx)
    default_region = ctx.plan.config.get("aws:region")
    for pool in fleet.Fleet(ctx.plan.resources).pools():
        region = pool.region or (default_region if isinstance(default_region, str) else None)
        types = pool.named_types or pool.instance_types
        if not region or not types:
            continue
        found = [offering(t, region) for t in types]
        missing = [o for o in found if o.offered is False]
        if not missing:
            continue
        fresh = all(o.proves_absence(today) for o in missing)
        names = ", ".join(o.instance_type for o in missing)
        refresh = REFRESH.format(region=region)
        severity: Severity
        if len(missing) == len(found):
            severity = "error" if fresh else "warning"
            age = (
                ""
                if fresh
                else f"; not proven (a price list, or EC2's list older than {FRESH_DAYS} days): confirm with "
                f"`{refresh}`"
            )
            message = (
                f"pool {pool.name}: {names} {'is' if len(missing) == 1 else 'are'} not offered in {region}, so the "
                f"pool never launches a node there and its cost is missing from the total{age}"
            )
        elif not pool.named_types:
            continue  # requirement-admitted types: Karpenter picks among those the region offers, by design
        else:
            severity = "warning"
            message = f"pool {pool.name}: {names} not offered in {region}; the pool launches only its other types"
        yield Finding(
            CHECK,
            severity,
            pool.urn,
            pool.types_from or "instanceTypes",
            message,
            f"instance types offered in {region} (`aws ec2 describe-instance-type-offerings --region {region}`)",
            _source(missing),
        )
