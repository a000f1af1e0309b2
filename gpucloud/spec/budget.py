"""Budget section of the stack spec: a monthly cost budget with alerts."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gpucloud.spec.base import SpecModel


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
