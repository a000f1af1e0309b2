"""Issue 27 item 4: every cost item's rate carries its provenance (published with source and date, refreshed with
its date, or an estimate with its rule), in JSON and in the text and markdown reports; `recommend` dates each
figure."""

from __future__ import annotations

from typing import Any

from gpucloud.advisor.recommend import Job, recommend
from gpucloud.cost import Commitment, PricingOptions, price_resources, rate_basis, rate_label
from gpucloud.report.render import provenance_lines, render_markdown

US = PricingOptions(region="us-east-1")


def _ng(name: str, itype: str, capacity: str = "ON_DEMAND", desired: int = 2) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::{name}",
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "parent": None,
        "custom": True,
        "dependencies": [],
        "inputs": {"instanceTypes": [itype], "capacityType": capacity,
                   "scalingConfig": {"desiredSize": desired, "maxSize": desired}},
    }  # fmt: skip


def test_the_three_kinds_of_provenance() -> None:
    assert rate_basis("aws-price-list", "2026-07-28") == {
        "kind": "published", "source": "aws-price-list", "as_of": "2026-07-28", "rule": None
    }  # fmt: skip
    assert rate_basis("aws-price-list-api", "2026-11-30")["kind"] == "refreshed"
    assert rate_basis("ec2-spot-price-history+aws-price-list-api", "2026-11-30")["kind"] == "refreshed"
    spot = rate_basis("vantage+family-spot-discount", "2026-01-21")
    assert spot["kind"] == "estimate" and spot["rule"].startswith("spot estimate: On-Demand x (1 - the family's")
    assert rate_label(spot).startswith("estimate (vantage+family-spot-discount, 2026-01-21): spot estimate")
    assert rate_label(rate_basis("aws-price-list", "2026-07-28")) == "published aws-price-list 2026-07-28"


def test_each_cost_item_carries_its_basis() -> None:
    cost = price_resources([_ng("od", "p5.48xlarge"), _ng("spot", "g6e.12xlarge", "SPOT")], US)
    by = {i["name"]: i for i in cost["items"]}
    # p5.48xlarge On-Demand: the AWS Price List bulk file for us-east-1, Last-Modified 2026-07-28.
    assert by["od"]["rate_basis"] == {
        "kind": "published", "source": "aws-price-list", "as_of": "2026-07-28", "rule": None
    }  # fmt: skip
    # g6e spot has no published price in the snapshot: the family's planning spot discount off On-Demand.
    assert by["spot"]["rate_basis"]["kind"] == "estimate"
    assert by["spot"]["rate_basis"]["source"] == "vantage+family-spot-discount"


def test_a_planning_commitment_rate_is_an_estimate_and_a_published_1y_rate_is_not() -> None:
    three = PricingOptions(region="us-east-1", commitments=(Commitment(kind="ri", term="3y", match="p5.48xlarge"),))
    (item,) = price_resources([_ng("r", "p5.48xlarge")], three)["items"]
    assert item["pricing"] == "reserved" and item["rate_basis"]["kind"] == "estimate"
    assert "family p5's planning 3y discount" in item["rate_basis"]["rule"]
    one = PricingOptions(region="us-east-1", commitments=(Commitment(kind="ri", term="1y", match="g6e.12xlarge"),))
    (g6e,) = price_resources([_ng("r", "g6e.12xlarge")], one)["items"]
    # g6e.12xlarge has a published 1-year Standard RI rate in us-east-1 (Vantage data, 2026-01-21).
    assert g6e["rate_basis"] == {"kind": "published", "source": "vantage", "as_of": "2026-01-21", "rule": None}


def test_text_and_markdown_list_every_item_under_its_provenance() -> None:
    cost = price_resources([_ng("od", "p5.48xlarge"), _ng("spot", "g6e.12xlarge", "SPOT")], US)
    lines = provenance_lines(cost["items"])
    assert lines[0] == "Rates by provenance:"
    assert "  published aws-price-list 2026-07-28: od" in lines
    # Estimates come last, with their rule.
    assert lines[-1].startswith("  estimate (vantage+family-spot-discount, 2026-01-21): spot estimate")
    assert lines[-1].endswith(": spot")
    report = {"schema": "gpucloud.plan/v1", "project": "p", "stack": "s", "resources": [], "cost": cost,
              "policies": {"violations": []}}  # fmt: skip
    md = render_markdown(report)
    assert "| rate provenance | items |" in md and "| published aws-price-list 2026-07-28 | od |" in md


def test_recommend_dates_each_figure_by_its_own_price() -> None:
    result = recommend(Job("pretrain", model="llama-3-70b", tokens=1e12, deadline_days=30))
    by = {c["instance_type"]: c for c in result["candidates"]}
    # trn2 is priced at its Capacity Block rate (pricing page, 2026-08-01); p5 at On-Demand (Price List 2026-07-28).
    assert (by["trn2.48xlarge"]["price_date"], by["trn2.48xlarge"]["price_source"]) == (
        "2026-08-01",
        "aws-capacity-blocks",
    )
    assert (by["p5.48xlarge"]["price_date"], by["p5.48xlarge"]["price_source"]) == ("2026-07-28", "aws-price-list")
