"""GC-SEC-153 k8s-pod-security-exemptions: every exemption of k8s-pod-security exempts something the plan runs.

An exemption for a namespace the plan uses that matches nothing rendered there is either stale (the daemon was
renamed or removed) or waiting for a workload that would inherit host access by taking its name; neither is an
error the pack can be sure of, so this is a warning (advisory). It reads what the k8s-pod-security run on the
same plan matched (that guardrail's config holds the entries; k8s_pod_security.last_matches), and says nothing
when that guardrail did not run, or when charts' objects were not visible (inside the Pulumi CLI, a chart's
daemons are never seen rendered). Entries for namespaces the plan does not use are left alone: one environment
config serves many programs.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport
from ..k8s import unseen_releases
from . import k8s_pod_security


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    resources = list(args.resources)
    matches = k8s_pod_security.last_matches(resources)
    if matches is None or unseen_releases(resources):
        return
    for e, used, named in matches:
        if used:
            continue
        kind = f"{e.get('kind')} " if e.get("kind") else ""
        what = f"k8s-pod-security exemption {kind}{e.get('namespace')}/{e.get('name')} (images {e.get('images')})"
        fix = "Fix: remove it, or correct its name, kind, images or chart to the daemon it is meant for."
        # Reported on the objects that take the exempted name without its images or chart, where there are any.
        for urn in dict.fromkeys(named) or [""]:
            why = "is taken by a workload it does not exempt (another image or chart)" if urn else "matches nothing"
            report(urn, f"{what} {why} in the plan: a stale entry, or one a workload inherits by its name. {fix}")


GUARDRAIL = Guardrail(
    id="GC-SEC-153",
    name="k8s-pod-security-exemptions",
    description="Every k8s-pod-security exemption must match a workload the plan renders (name, kind, images and "
    "chart); an entry that matches nothing is a warning.",
    category="security",
    severity=Severity.LOW,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Remove stale exemptions, or correct their name, kind, images or chart.",
    references=("PSS",),
    kind="stack",
    surfaces=frozenset({"pods"}),
    reads=frozenset(),
    validate=validate,
)
