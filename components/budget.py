"""Monthly cost budget with forecast/actual alerts and a cost anomaly monitor scoped to the environment."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
from pydantic import Field

from gpucloud.components.base import ComponentConfig, child
from gpucloud.spec import BudgetSpec


class GpuBudgetConfig(ComponentConfig):
    """Inputs of GpuBudget."""

    environment: str = Field(description="Environment the budget filters on (the Env cost-allocation tag).")
    budget: BudgetSpec = Field(description="Limit, thresholds and alert addresses.")
    anomaly_threshold_usd: float = Field(
        default=100.0, gt=0, description="Daily anomaly alerts fire when the total impact reaches this many USD."
    )
    tag_key: str = Field(
        default="Env", min_length=1, description="Cost-allocation tag the budget and the monitor filter on."
    )
    tag_value: str | None = Field(default=None, description="Value of that tag. Unset: the environment.")


class GpuBudget(pulumi.ComponentResource):
    """Budget + anomaly detection for one environment, filtered on its Env tag."""

    def __init__(self, name: str, config: GpuBudgetConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpucloud:budget:GpuBudget", name, None, opts)
        b = config.budget
        # Budgets filter on activated cost-allocation tags; Env must be activated in the billing console.
        # A team stack filters on its Team tag instead (tag_key/tag_value), so each team gets its own budget.
        tag_value = config.tag_value if config.tag_value is not None else config.environment
        env_filter = f"user:{config.tag_key}${tag_value}"
        self.budget = aws.budgets.Budget(
            f"{name}-budget",
            budget_type="COST",
            time_unit="MONTHLY",
            limit_amount=f"{b.monthly_limit_usd:.2f}",
            limit_unit="USD",
            cost_filters=[aws.budgets.BudgetCostFilterArgs(name="TagKeyValue", values=[env_filter])],
            notifications=[
                aws.budgets.BudgetNotificationArgs(
                    comparison_operator="GREATER_THAN",
                    notification_type=kind,
                    threshold=threshold,
                    threshold_type="PERCENTAGE",
                    subscriber_email_addresses=list(b.alert_emails),
                )
                for kind, threshold in (
                    ("FORECASTED", b.forecast_threshold_percent),
                    ("ACTUAL", b.actual_threshold_percent),
                )
            ],
            tags=config.tags,
            opts=child(self),
        )
        # A CUSTOM monitor scoped by tag, because an account allows only one DIMENSIONAL/SERVICE monitor and
        # several environments may share an account.
        self.anomaly_monitor = aws.costexplorer.AnomalyMonitor(
            f"{name}-anomaly-monitor",
            monitor_type="CUSTOM",
            monitor_specification=json.dumps(
                {"Tags": {"Key": config.tag_key, "Values": [tag_value], "MatchOptions": ["EQUALS"]}}
            ),
            tags=config.tags,
            opts=child(self),
        )
        self.anomaly_subscription = aws.costexplorer.AnomalySubscription(
            f"{name}-anomaly-alerts",
            frequency="DAILY",
            monitor_arn_lists=[self.anomaly_monitor.arn],
            subscribers=[
                aws.costexplorer.AnomalySubscriptionSubscriberArgs(type="EMAIL", address=address)
                for address in b.alert_emails
            ],
            threshold_expression=aws.costexplorer.AnomalySubscriptionThresholdExpressionArgs(
                dimension=aws.costexplorer.AnomalySubscriptionThresholdExpressionDimensionArgs(
                    key="ANOMALY_TOTAL_IMPACT_ABSOLUTE",
                    match_options=["GREATER_THAN_OR_EQUAL"],
                    values=[f"{config.anomaly_threshold_usd:g}"],
                )
            ),
            tags=config.tags,
            opts=child(self),
        )
        self.budget_name = self.budget.name
        self.register_outputs({"budget_name": self.budget_name, "anomaly_monitor_arn": self.anomaly_monitor.arn})
