"""GC-COST-036 budget-and-anomaly: each stack holds a cost budget with alerts and cost anomaly detection."""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, get, has, maps, text
from ..stack import of_type

BUDGET = "aws:budgets/budget:Budget"
MONITOR = "aws:costexplorer/anomalyMonitor:AnomalyMonitor"
SUBSCRIPTION = "aws:costexplorer/anomalySubscription:AnomalySubscription"


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    problems = []
    budgets = [
        b
        for b in of_type(args.resources, BUDGET)
        if text(get(b.props, "budgetType")) == "COST" and text(get(b.props, "timeUnit")) == "MONTHLY"
    ]
    if not budgets:
        problems.append("no monthly COST budget (aws.budgets.Budget with budgetType COST, timeUnit MONTHLY)")
    else:
        kinds = {text(get(n, "notificationType")) for b in budgets for n in maps(get(b.props, "notifications"))}
        missing = [k for k in ("FORECASTED", "ACTUAL") if k not in kinds]
        if missing:
            problems.append(f"the budget has no {' / '.join(missing)} notification")
    if not of_type(args.resources, MONITOR):
        problems.append("no cost anomaly monitor (aws.costexplorer.AnomalyMonitor)")
    subs = of_type(args.resources, SUBSCRIPTION)
    if not subs:
        problems.append("no anomaly subscription (aws.costexplorer.AnomalySubscription)")
    elif not any(has(s.props, "thresholdExpression") for s in subs):
        problems.append("the anomaly subscription uses the deprecated 'threshold' instead of thresholdExpression")
    if problems:
        report(
            "",
            "; ".join(problems) + ". Fix: add the gpucloud budget component (components.budget.GpuBudget) "
            "to the stack, or the missing pieces.",
        )


GUARDRAIL = Guardrail(
    id="GC-COST-036",
    name="budget-and-anomaly",
    description="Each stack needs a monthly cost budget with forecast and actual alerts, and cost anomaly detection.",
    category="cost",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Add components.budget.GpuBudget (budget with FORECASTED and ACTUAL notifications, an "
    "anomaly monitor and a subscription with thresholdExpression).",
    references=("AWS Budgets", "AWS Cost Anomaly Detection"),
    kind="stack",
    validate=validate,
)
