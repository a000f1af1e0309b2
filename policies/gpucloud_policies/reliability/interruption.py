"""GC-REL-050 spot-interruption-handling: spot capacity comes with an interruption handler.

Karpenter needs an SQS queue fed by EventBridge rules (Spot Interruption Warning, Rebalance Recommendation,
state change, AWS Health) and ``settings.interruptionQueue`` in its Helm values; the old key
``interruptionQueueName`` silently disables handling (eksctl-io/eksctl#7697). Node Termination Handler works
for managed node groups and ASGs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, deciding, get, has, text
from ..capacity import LAUNCH_CONFIG, LAUNCH_TEMPLATE, NODE_POOLS, SPOT, markets
from ..pools import pools
from ..stack import of_type

RELEASE = "kubernetes:helm.sh/v3:Release"
QUEUE = "aws:sqs/queue:Queue"
RULE = "aws:cloudwatch/eventRule:EventRule"
SPOT_WARNING = "EC2 Spot Instance Interruption Warning"


def _spot_users(resources: list[Any]) -> list[str]:
    """Everything that buys spot, through the one capacity reader (pools, templates, NodePools)."""
    urns: list[str] = []
    # Only the market fields matter here, so a pool whose size or type is unknown is still judged.
    for pool in pools(resources):
        r = pool.resource
        with deciding(r):
            buys = pool.known_markets()
            if SPOT in buys:
                urns.append(r.urn)
    for r in of_type(resources, LAUNCH_TEMPLATE, LAUNCH_CONFIG, *NODE_POOLS):
        with deciding(r):
            if SPOT in markets(r.resource_type, r.props) and r.urn not in urns:
                urns.append(r.urn)
    return urns


def _settings(release: Any) -> Mapping[str, Any]:
    s = get(release.props, "values", "settings")
    return s if isinstance(s, Mapping) else {}


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    users = _spot_users(args.resources)
    if not users:
        return
    karpenter, nth = [], []
    for release in of_type(args.resources, RELEASE):
        with deciding(release):
            chart = text(get(release.props, "chart"))
            if "karpenter" in chart:
                karpenter.append(release)
            elif "node-termination-handler" in chart:
                nth.append(release)
    handled = bool(nth)
    for k in karpenter:
        with deciding(k):
            settings = _settings(k)
            if has(settings, "interruptionQueueName"):
                report(
                    k.urn,
                    "sets settings.interruptionQueueName, a removed key that silently disables interruption "
                    "handling. Fix: rename it to settings.interruptionQueue.",
                )
            handled = handled or has(settings, "interruptionQueue")
    has_rule = False
    for rule in of_type(args.resources, RULE):
        with deciding(rule):
            has_rule = has_rule or SPOT_WARNING in text(get(rule.props, "eventPattern"))
    queue = bool(of_type(args.resources, QUEUE))
    missing = []
    if not handled:
        missing.append(
            "an interruption handler (Karpenter with settings.interruptionQueue, or aws-node-termination-handler)"
        )
    if (karpenter and not nth) and not (queue and has_rule):
        missing.append(f"an SQS queue with an EventBridge rule for '{SPOT_WARNING}'")
    if missing:
        report(
            users[0],
            f"uses spot capacity ({len(users)} resources) without {' and '.join(missing)}: nodes are "
            "reclaimed with 2 minutes' notice and running jobs die without draining. Fix: deploy the missing "
            "pieces (gpucloud's interruption add-on).",
        )


GUARDRAIL = Guardrail(
    id="GC-REL-050",
    name="spot-interruption-handling",
    description="Spot capacity requires an interruption handler with its queue and EventBridge rules.",
    category="reliability",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Deploy Karpenter with settings.interruptionQueue pointing at an SQS queue fed by "
    "EventBridge rules for spot interruption, rebalance, state change and AWS Health events, or AWS Node "
    "Termination Handler; never both on the same nodes. Mandatory in prod's config.",
    references=("eksctl-io/eksctl#7697", "Karpenter interruption handling"),
    kind="stack",
    validate=validate,
)
