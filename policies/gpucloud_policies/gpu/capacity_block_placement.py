"""GC-GPU-046 capacity-block-no-placement-group: a Capacity Block pool launches outside placement groups.

A Capacity Block is capacity AWS already placed; asking for a cluster placement group the block was not created
in fails with InsufficientInstanceCapacity (gpucloud's own spec says so for ``efa.placementGroup``). Read through
the one capacity reader: the purchase option of node groups, ASGs, EC2 Fleets and instances, or of their launch
template, and a placement group on the pool (``placementGroup``) or its template (``placement.groupName`` /
``placement.groupId``).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, text, via
from ..capacity import CAPACITY_BLOCK, LAUNCH_TEMPLATE, markets
from ..pools import pools
from ..stack import of_type


def placement(resource_type: str, props: Any) -> str:
    """Where the resource asks for a placement group ("" when it does not)."""
    if resource_type == LAUNCH_TEMPLATE:
        for key in ("groupName", "groupId"):
            if text(get(props, "placement", key)):
                return f"placement.{key}"
        return ""
    for key in ("placementGroup", "placementGroupId"):
        if text(get(props, key)):
            return key
    return ""


def _message(where: str) -> str:
    return (
        f"buys a Capacity Block and asks for a placement group ({where}); a block not created in that group "
        "fails with InsufficientInstanceCapacity. Fix: drop the placement group (set efa.placementGroup false "
        "in the gpucloud spec) for Capacity Block pools."
    )


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    judged: set[str] = set()
    for pool in pools(args.resources):
        r, lt = pool.resource, pool.launch_template
        if lt is not None:
            judged.add(lt.urn)
        with deciding(r):
            if CAPACITY_BLOCK not in pool.known_markets():
                continue
            where = placement(r.resource_type, r.props)
            if not where and lt is not None:
                with via(lt):
                    lt_where = placement(LAUNCH_TEMPLATE, lt.props)
                if lt_where:
                    where = f"launch template {lt.name} {lt_where}"
            if where:
                report(r.urn, _message(where))
    for lt in of_type(args.resources, LAUNCH_TEMPLATE):
        if lt.urn in judged:
            continue
        with deciding(lt):
            if CAPACITY_BLOCK not in markets(LAUNCH_TEMPLATE, lt.props):
                continue
            where = placement(LAUNCH_TEMPLATE, lt.props)
            if where:
                report(lt.urn, _message(where))


GUARDRAIL = Guardrail(
    id="GC-GPU-046",
    name="capacity-block-no-placement-group",
    description="Capacity Block pools must not ask for a placement group (InsufficientInstanceCapacity).",
    category="gpu",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Remove placement / placementGroup from Capacity Block pools and their launch templates "
    "(gpucloud spec: efa.placementGroup false).",
    references=("AWS EC2 Capacity Blocks for ML", "gpucloud spec efa.placementGroup"),
    kind="stack",
    validate=validate,
)
