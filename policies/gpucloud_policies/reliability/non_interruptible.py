"""GC-REL-051 non-interruptible-not-spot: a pool marked not interruptible never buys spot.

The mark is the tag or node label ``gpucloud.io/interruptible: "false"`` (capacity.INTERRUPTIBLE_KEY) on the
pool, its launch template, or a Karpenter NodePool's template labels. Spot capacity is reclaimed with two
minutes' notice, so work that cannot be interrupted (a long gang-scheduled training run without
checkpoints, a stateful service) must run on on-demand or reserved capacity.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, via
from ..capacity import INTERRUPTIBLE_KEY, LAUNCH_CONFIG, LAUNCH_TEMPLATE, NODE_POOLS, SPOT, markets, non_interruptible
from ..pools import pools
from ..stack import of_type

_FIX = (
    "Fix: buy it on-demand or from a reservation (capacityType ON_DEMAND, no spot share, karpenter.sh/capacity-type "
    f"In [on-demand]), or drop the {INTERRUPTIBLE_KEY} mark if the work tolerates interruption."
)


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    judged: set[str] = set()
    for pool in pools(args.resources):
        r, lt = pool.resource, pool.launch_template
        if lt is not None:
            judged.add(lt.urn)
        with deciding(r):
            marked = non_interruptible(r.resource_type, r.props)
            if not marked and lt is not None:
                with via(lt):
                    marked = non_interruptible(lt.resource_type, lt.props)
            if marked and SPOT in pool.known_markets():
                report(r.urn, f'is marked {INTERRUPTIBLE_KEY}: "false" but buys spot capacity. {_FIX}')
    for r in of_type(args.resources, LAUNCH_TEMPLATE, LAUNCH_CONFIG, *NODE_POOLS):
        if r.urn in judged:
            continue
        with deciding(r):
            if non_interruptible(r.resource_type, r.props) and SPOT in markets(r.resource_type, r.props):
                report(r.urn, f'is marked {INTERRUPTIBLE_KEY}: "false" but buys spot capacity. {_FIX}')


GUARDRAIL = Guardrail(
    id="GC-REL-051",
    name="non-interruptible-not-spot",
    description=f'Pools marked {INTERRUPTIBLE_KEY}: "false" must not buy spot capacity.',
    category="reliability",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Move non-interruptible pools to on-demand or reserved capacity, or remove the mark.",
    references=("gpucloud guardrails (documented key gpucloud.io/interruptible)",),
    kind="stack",
    validate=validate,
)
