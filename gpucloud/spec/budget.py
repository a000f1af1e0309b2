"""Budget section of the stack spec: a monthly cost budget with alerts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpucloud.spec.base import SpecModel


class CostReportingSpec(SpecModel):
    """Billing data that attributes the shared GPU nodes to the teams using them (CUR 2.0 with split cost
    allocation data for EKS) and the cost allocation tags Cost Explorer filters on."""

    enabled: bool = Field(default=False, description="Create the billing export and its encrypted bucket.")
    activate_tags: bool = Field(
        default=False,
        description="Activate the stack's tag keys and the EKS split-cost tags (aws:eks:cluster-name, "
        "aws:eks:namespace, aws:eks:workload-name) as cost allocation tags. Payer account only, and only once the "
        "keys appear in billing data (up to 24 h after first use), so it is off until then.",
    )
    granularity: Literal["HOURLY", "DAILY", "MONTHLY"] = Field(
        default="HOURLY", description="TIME_GRANULARITY of the COST_AND_USAGE_REPORT table."
    )
    expire_after_days: int = Field(
        default=400, ge=30, le=3650, description="Days S3 keeps export files (13 months covers a year-on-year view)."
    )


class BudgetSpec(SpecModel):
    """Monthly budget for the environment; alerts go to the listed addresses."""

    monthly_limit_usd: float = Field(gt=0, description="Monthly cost budget in USD.")
    alert_emails: list[Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]] = Field(
        min_length=1,
        description="Addresses notified on forecast and actual overrun.",
    )
    forecast_threshold_percent: float = Field(
        default=100, gt=0, le=1000, description="Alert when forecast spend reaches this % of the limit."
    )
    actual_threshold_percent: float = Field(
        default=80, gt=0, le=1000, description="Alert when actual spend reaches this % of the limit."
    )
    cost_reporting: CostReportingSpec = Field(
        default_factory=CostReportingSpec, description="CUR 2.0 export with split cost allocation data for EKS."
    )
