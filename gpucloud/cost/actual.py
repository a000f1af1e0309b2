"""What a stack actually cost, from Cost Explorer, next to what its plan says it should cost.

A stack's resources carry its cost-allocation tags (the platform spec's `Project` and `Env`, a team stack's
`GpuTeam`), and with AWS split cost allocation data for EKS the team's pods on the shared GPU nodes carry
`aws:eks:cluster-name` and `aws:eks:namespace`. The Cost Explorer filter is built from those; both kinds of tag
must be activated as cost allocation tags in the payer account (the platform's cost reporting does that).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from gpucloud.prices.rates import HOURS_PER_MONTH

METRIC = "UnblendedCost"


def _tag(key: str, value: str) -> dict[str, Any]:
    return {"Tags": {"Key": key, "Values": [value], "MatchOptions": ["EQUALS"]}}


def _all_of(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {"And": parts}


def stack_filter(tags: Mapping[str, str], pods: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Cost Explorer Expression: resources with all of `tags`, or (team stacks) pods matching all of `pods`."""
    if not tags:
        raise ValueError("no cost-allocation tags to filter on; give --tag KEY=VALUE")
    resources = _all_of([_tag(k, v) for k, v in sorted(tags.items())])
    if not pods:
        return resources
    return {"Or": [resources, _all_of([_tag(k, v) for k, v in sorted(pods.items())])]}


def default_period(today: dt.date) -> tuple[dt.date, dt.date]:
    """Month to date (end exclusive, as Cost Explorer wants); on the 1st, the whole previous month."""
    start = today.replace(day=1)
    if start == today:
        start = (today - dt.timedelta(days=1)).replace(day=1)
    return start, today


def actual_spend(client: Any, start: dt.date, end: dt.date, expression: Mapping[str, Any]) -> dict[str, Any]:
    """Unblended cost per AWS service in [start, end), summed over Cost Explorer's pages and time buckets."""
    if not start < end:
        raise ValueError(f"the period must end after it starts: {start} .. {end}")
    by_service: dict[str, float] = {}
    unit = "USD"
    estimated = False
    request: dict[str, Any] = {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "MONTHLY",
        "Metrics": [METRIC],
        "Filter": dict(expression),
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}],
    }
    while True:
        page = client.get_cost_and_usage(**request)
        for bucket in page.get("ResultsByTime", []):
            estimated = estimated or bool(bucket.get("Estimated"))
            for group in bucket.get("Groups", []):
                metric = group["Metrics"][METRIC]
                unit = metric.get("Unit", unit)
                service = group["Keys"][0]
                by_service[service] = by_service.get(service, 0.0) + float(metric["Amount"])
        token = page.get("NextPageToken")
        if not token:
            break
        request["NextPageToken"] = token
    return {
        "currency": unit,
        "total": round(sum(by_service.values()), 2),
        "by_service": {k: round(v, 2) for k, v in sorted(by_service.items(), key=lambda kv: -kv[1])},
        "estimated": estimated,
    }


def compare(
    planned_monthly: float, planned_ceiling: float, actual: Mapping[str, Any], start: dt.date, end: dt.date
) -> dict[str, Any]:
    """Plan vs actual over the period: the plan's monthly figures prorated by hours (a month is 730 h)."""
    hours = (end - start).days * 24
    share = hours / HOURS_PER_MONTH
    planned = round(planned_monthly * share, 2)
    delta = round(actual["total"] - planned, 2)
    return {
        "period": {"start": start.isoformat(), "end": end.isoformat(), "hours": hours},
        "planned": planned,
        "planned_ceiling": round(planned_ceiling * share, 2),
        "actual": actual["total"],
        "delta": delta,
        "delta_percent": round(100 * delta / planned, 1) if planned else None,
        "over_ceiling": actual["total"] > round(planned_ceiling * share, 2),
        "currency": actual["currency"],
        "estimated": actual["estimated"],
        "by_service": actual["by_service"],
    }
