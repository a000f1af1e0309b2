"""A pool whose instance types its region does not offer: a conformance finding with the reason and the data's
date (an error from fresh data, a warning from data older than FRESH_DAYS), and a line in the cost section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.conformance import run_conformance
from gpucloud.cost import price_plan
from gpucloud.plan import run_program
from gpucloud.plan.model import Plan
from gpucloud.prices.book import get_price_book

ROOT = Path(__file__).resolve().parents[2]
INFER = "gpucloud-dev-infer-l40s-spot"
L40S = ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"]


@pytest.fixture(scope="module")
def dev_in_eu_west_1() -> Plan:
    # The dev stack moved to eu-west-1: region, AZs and the FSx AZ changed, nothing else.
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    platform = dict(config["gpucloud:platform"])
    platform.update(region="eu-west-1", availabilityZones=["eu-west-1a", "eu-west-1b"])
    platform["storage"] = {
        **platform["storage"],
        "fsx": {**platform["storage"]["fsx"], "availabilityZone": "eu-west-1a"},
    }
    return run_program(ROOT, "dev", config_overrides={"aws:region": "eu-west-1", "gpucloud:platform": platform})


def _findings(plan: Plan) -> dict[str, Any]:
    return {f.urn.rsplit("::", 1)[1]: f for f in run_conformance(plan, only=["offering"]).findings}


def test_stale_snapshot_data_makes_a_warning_naming_its_date(dev_in_eu_west_1: Plan) -> None:
    found = _findings(dev_in_eu_west_1)
    infer = found[INFER]
    assert infer.severity == "warning"
    assert infer.message.startswith(
        f"pool {INFER}: g6e.xlarge, g6e.2xlarge, g6e.4xlarge are not offered in eu-west-1, so the pool never launches "
        "a node there and its cost is missing from the total; not proven (a price list, or EC2's list older than "
        "90 days)"
    )
    assert infer.source == "absent from the price snapshot's eu-west-1 table (vantage) (2026-01-21)"
    # dev-l4 still has g5.12xlarge there: a warning that it launches only that.
    assert found["gpucloud-dev-dev-l4-asg"].message == (
        "pool gpucloud-dev-dev-l4-asg: g6.12xlarge, g6.24xlarge not offered in eu-west-1; the pool launches only its "
        "other types"
    )


def test_fresh_offering_data_makes_it_an_error_and_the_cost_section_says_so(
    dev_in_eu_west_1: Plan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import date

    today = date.today().isoformat()
    cache = tmp_path / "prices.json"
    entries = {t: {"availability_zones": [], "price_date": today, "price_source": "ec2-offerings"} for t in L40S}
    cache.write_text(json.dumps({"schema": "gpucloud.prices/v1", "regions": {"eu-west-1": entries}}))
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_price_book.cache_clear()
    try:
        infer = _findings(dev_in_eu_west_1)[INFER]
        assert infer.severity == "error"
        assert infer.source == f"EC2 DescribeInstanceTypeOfferings ({today})"
        cost = price_plan(dev_in_eu_west_1)
    finally:
        get_price_book.cache_clear()
    assert (
        f"{INFER}: g6e.xlarge is not offered in eu-west-1 (EC2 DescribeInstanceTypeOfferings, {today}): its nodes "
        "(1 expected, 4 at most) are not in the total"
    ) in cost["warnings"]


def test_the_cost_section_names_the_drop_from_shipped_data_too(dev_in_eu_west_1: Plan) -> None:
    cost = price_plan(dev_in_eu_west_1)
    assert (
        f"{INFER}: g6e.xlarge is not offered in eu-west-1 (absent from the price snapshot's eu-west-1 table (vantage), "
        "2026-01-21): its nodes (1 expected, 4 at most) are not in the total"
    ) in cost["warnings"]


def test_a_price_list_lacking_a_type_never_proves_it_is_not_offered() -> None:
    from datetime import date

    from gpucloud.prices.offerings import API, Offering

    today = date(2026, 12, 2)
    # A price snapshot dated yesterday that lacks the type: a warning's worth, not proof.
    snapshot = Offering("g7e.2xlarge", "eu-central-1", False, "absent from the price snapshot", "2026-12-01")
    assert (snapshot.fresh(today), snapshot.proves_absence(today)) == (True, False)
    # EC2's own list: proof while at most 90 days old, not after.
    assert Offering("g7e.2xlarge", "eu-central-1", False, API, "2026-09-03").proves_absence(today) is True
    assert Offering("g7e.2xlarge", "eu-central-1", False, API, "2026-09-02").proves_absence(today) is False
    assert Offering("g7e.2xlarge", "eu-central-1", True, API, "2026-12-01").proves_absence(today) is False
