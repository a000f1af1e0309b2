"""Plan vs actual spend: the Cost Explorer filter, paging and proration, against a moto server and Stubber."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpucloud.cli import main
from gpucloud.cost import price_plan
from gpucloud.cost.actual import actual_spend, compare, default_period, stack_filter
from gpucloud.plan import run_program

ROOT = Path(__file__).resolve().parents[2]
TEAM = ROOT / "stacks" / "teams" / "vision"


def _group(service: str, amount: str) -> dict[str, Any]:
    return {"Keys": [service], "Metrics": {"UnblendedCost": {"Amount": amount, "Unit": "USD"}}}


def _queue(endpoint: str, *results: dict[str, Any]) -> None:
    """moto's Cost Explorer answers from a queue of canned results, set through its own API."""
    body = json.dumps({"results": list(results)}).encode()
    req = urllib.request.Request(f"{endpoint}/moto-api/static/ce/cost-and-usage-results", data=body, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 201


def test_stack_filter_is_all_tags_or_the_team_pods() -> None:
    assert stack_filter({"Project": "gpucloud", "Env": "prod"}) == {
        "And": [
            {"Tags": {"Key": "Env", "Values": ["prod"], "MatchOptions": ["EQUALS"]}},
            {"Tags": {"Key": "Project", "Values": ["gpucloud"], "MatchOptions": ["EQUALS"]}},
        ]
    }
    assert stack_filter({"GpuTeam": "vision"}, {"aws:eks:namespace": "vision"}) == {
        "Or": [
            {"Tags": {"Key": "GpuTeam", "Values": ["vision"], "MatchOptions": ["EQUALS"]}},
            {"Tags": {"Key": "aws:eks:namespace", "Values": ["vision"], "MatchOptions": ["EQUALS"]}},
        ]
    }
    with pytest.raises(ValueError, match="no cost-allocation tags"):
        stack_filter({})


def test_default_period_is_month_to_date_or_last_month_on_the_first() -> None:
    assert default_period(dt.date(2026, 11, 30)) == (dt.date(2026, 11, 1), dt.date(2026, 11, 30))
    assert default_period(dt.date(2026, 12, 1)) == (dt.date(2026, 11, 1), dt.date(2026, 12, 1))
    assert default_period(dt.date(2026, 1, 1)) == (dt.date(2025, 12, 1), dt.date(2026, 1, 1))


def test_actual_spend_pages_and_sums_services_with_the_modelled_request() -> None:
    client = boto3.client("ce", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    expression = stack_filter({"Project": "gpucloud"})
    request = {
        "TimePeriod": {"Start": "2026-11-01", "End": "2026-11-16"},
        "Granularity": "MONTHLY",
        "Metrics": ["UnblendedCost"],
        "Filter": expression,
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}],
    }
    with Stubber(client) as stub:
        # Stubber checks both requests against botocore's Cost Explorer model.
        stub.add_response(
            "get_cost_and_usage",
            {
                "ResultsByTime": [
                    {"Groups": [_group("Amazon Elastic Compute Cloud - Compute", "1000.004")], "Estimated": False}
                ],
                "NextPageToken": "p2",
            },
            request,
        )
        stub.add_response(
            "get_cost_and_usage",
            {
                "ResultsByTime": [
                    {
                        "Groups": [
                            _group("Amazon Elastic Compute Cloud - Compute", "250.5"),
                            _group("Amazon FSx", "99.25"),
                        ],
                        "Estimated": True,
                    }
                ]
            },
            {**request, "NextPageToken": "p2"},
        )
        got = actual_spend(client, dt.date(2026, 11, 1), dt.date(2026, 11, 16), expression)
    assert got == {
        "currency": "USD",
        "total": 1349.75,
        "by_service": {"Amazon Elastic Compute Cloud - Compute": 1250.5, "Amazon FSx": 99.25},
        "estimated": True,
    }
    with pytest.raises(ValueError, match="must end after it starts"):
        actual_spend(client, dt.date(2026, 11, 2), dt.date(2026, 11, 2), expression)


def test_compare_prorates_the_plan_by_hours() -> None:
    actual = {"currency": "USD", "total": 500.0, "by_service": {}, "estimated": False}
    # 15 days = 360 h of a 730 h month: 1460 * 360 / 730 = 720 planned; ceiling 2920 -> 1440.
    got = compare(1460.0, 2920.0, actual, dt.date(2026, 11, 1), dt.date(2026, 11, 16))
    assert (got["planned"], got["planned_ceiling"], got["delta"], got["delta_percent"]) == (
        720.0,
        1440.0,
        -220.0,
        -30.6,
    )
    assert got["over_ceiling"] is False
    assert compare(1460.0, 2920.0, {**actual, "total": 1500.0}, dt.date(2026, 11, 1), dt.date(2026, 11, 16))[
        "over_ceiling"
    ]
    assert compare(0.0, 0.0, actual, dt.date(2026, 11, 1), dt.date(2026, 11, 2))["delta_percent"] is None


def test_cli_compares_the_dev_plan_with_moto_cost_explorer(aws_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    _queue(
        aws_env,
        {
            "ResultsByTime": [
                {
                    "TimePeriod": {"Start": "2026-11-01", "End": "2026-11-16"},
                    "Groups": [_group("Amazon Elastic Compute Cloud - Compute", "812.40"), _group("Amazon EKS", "36")],
                    "Estimated": False,
                }
            ]
        },
    )
    code = main(["cost", "--stack", "dev", "--program", str(ROOT), "--start", "2026-11-01", "--end", "2026-11-16",
                 "--format", "json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    monthly = price_plan(run_program(ROOT, "dev"))["monthly"]
    assert out["planned"] == round(monthly * 360 / 730, 2)
    assert out["actual"] == 848.4
    assert out["by_service"] == {"Amazon Elastic Compute Cloud - Compute": 812.4, "Amazon EKS": 36.0}
    assert out["filter"] == stack_filter({"Project": "gpucloud", "Env": "dev"})
    # Same request again (moto repeats its answer for the same parameters), as text in 80 columns.
    code = main(["cost", "--stack", "dev", "--program", str(ROOT), "--start", "2026-11-01", "--end", "2026-11-16"])
    text = capsys.readouterr().out
    assert code == 0
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "actual (Cost Explorer)" in text and "848.40" in text
    assert f"{round(monthly * 360 / 730, 2):,.2f}" in text


def test_team_stack_counts_its_pods_through_split_cost_allocation_tags(
    aws_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _queue(aws_env, {"ResultsByTime": [{"Groups": [_group("Amazon Elastic Compute Cloud - Compute", "10")]}]})
    code = main(["cost", "--stack", "dev", "--program", str(TEAM), "--start", "2026-11-01", "--end", "2026-11-02",
                 "--format", "json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["filter"] == stack_filter(
        {"GpuTeam": "vision", "Env": "dev"}, {"aws:eks:namespace": "vision", "aws:eks:cluster-name": "gpucloud-dev"}
    )


def test_cli_errors_name_the_flag_and_the_fix(
    aws_env: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cost", "--stack", "dev", "--program", str(ROOT), "--start", "2026-11-05", "--end", "2026-11-01"]) == 2
    assert "--start 2026-11-05 must be before --end 2026-11-01" in capsys.readouterr().err
    assert main(["cost", "--stack", "dev", "--program", str(ROOT), "--tag", "Project"]) == 2
    assert "--tag 'Project': write KEY=VALUE" in capsys.readouterr().err
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert main(["cost", "--stack", "dev", "--program", str(ROOT), "--start", "2026-11-01", "--end", "2026-11-02"]) == 2
    assert "Cost Explorer: no AWS credentials found" in capsys.readouterr().err
