"""One part of a check at a time: an object of a shape the part cannot read becomes a warning, not a traceback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from gpucloud.conformance import ConformanceContext, Finding


def guarded(ctx: ConformanceContext, check: str, what: str, part: Callable[[], Iterable[Finding]]) -> Iterator[Finding]:
    """Run one part of a check; an object of a shape the part cannot read becomes a warning, not a traceback
    (the schema check reports the object itself)."""
    try:
        yield from list(part())
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        yield Finding(
            f"{check}.unevaluated",
            "warning",
            f"urn:pulumi:{ctx.plan.stack}::{ctx.plan.project}::pulumi:pulumi:Stack::{ctx.plan.project}-{ctx.plan.stack}",
            what,
            f"the {what} part of the {check} check could not read an object of this plan ({type(exc).__name__}: "
            f"{exc}); it was skipped",
            "objects of the shape the Kubernetes API accepts (see the schema findings)",
            f"kube-scheduler semantics (Kubernetes {ctx.kubernetes_version})",
        )
