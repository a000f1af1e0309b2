"""Exact outputs of the smaller cost modules (diff, options, actual, the package's price_plan glue) on hand-built
inputs, so that each field, default and rounding is pinned by a value worked out by hand in the comments."""

from __future__ import annotations

from datetime import date, datetime
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpucloud.cost import CONFIG_KEY, PricingOptions, options_for, plan_resources, price_plan
from gpucloud.cost.actual import actual_spend, compare, stack_filter
from gpucloud.cost.diff import base_cost, cost_diff
from gpucloud.cost.options import Commitment, PricingConfigError
from gpucloud.plan.engine import PlanInputError
from gpucloud.plan.model import Plan, ResourceRecord

P = "urn:pulumi:dev::gpucloud::"
NG = "aws:eks/nodeGroup:NodeGroup"
NAT = "aws:ec2/natGateway:NatGateway"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
EKS = "aws:eks/cluster:Cluster"


def line(urn: str, type_: str, monthly: float, ceiling: float, **fields: Any) -> dict[str, Any]:
    """One cost item as price_resources writes it (only the keys cost_diff reads, plus the given line fields)."""
    base = {"pricing": "on-demand", "instance_type": None, "quantity": 1, "max_quantity": 1, "unit_price": 1.0}
    return {"urn": urn, "type": type_, "monthly": monthly, "monthly_ceiling": ceiling, **base, **fields}


def test_cost_diff_per_resource_sums_lines_and_classifies_each_change() -> None:
    gpu, nat, fsx, eks = P + NG + "::gpu", P + NAT + "::nat", P + FSX + "::scratch", P + EKS + "::cluster"
    current = {
        "monthly": 5000.4567,
        "monthly_ceiling": 9000.1234,
        "items": [
            # Node group: the instance line and its root-volume line, now at 2 nodes (base: 1).
            line(gpu, NG, 100.1234, 200.2468, instance_type="p5.48xlarge", quantity=2, max_quantity=4),
            line(gpu, NG, 1.0011, 2.0022, pricing="ebs", quantity=2, max_quantity=4, unit_price=0.08),
            line(nat, NAT, 32.8512, 32.8512),
            # Same two lines as the base, listed in the other order: unchanged, so not in the diff.
            line(eks, EKS, 73.0, 73.0, pricing="support"),
            line(eks, EKS, 0.0, 0.0, pricing="extended", unit_price=0.5),
        ],
    }
    base = {
        "monthly": 4000.1111,
        "monthly_ceiling": 9100.9876,
        "items": [
            line(eks, EKS, 0.0, 0.0, pricing="extended", unit_price=0.5),
            line(eks, EKS, 73.0, 73.0, pricing="support"),
            line(gpu, NG, 50.0617, 200.2468, instance_type="p5.48xlarge", quantity=1, max_quantity=4),
            line(gpu, NG, 0.5006, 2.0022, pricing="ebs", quantity=1, max_quantity=4, unit_price=0.08),
            line(fsx, FSX, 420.4567, 840.9134),
        ],
    }
    assert cost_diff(current, base) == {
        "base_monthly": 4000.11,
        "base_monthly_ceiling": 9100.99,
        # 5000.4567 - 4000.1111 = 1000.3456; 9000.1234 - 9100.9876 = -100.8642
        "monthly_delta": 1000.35,
        "monthly_ceiling_delta": -100.86,
        "items": [
            {
                "urn": gpu,
                "name": "gpu",
                "type": NG,
                "change": "changed",
                # 50.0617 + 0.5006 = 50.5623 before, 100.1234 + 1.0011 = 101.1245 now: +50.5622;
                # ceilings 200.2468 + 2.0022 = 202.249 on both sides.
                "base_monthly": 50.56,
                "monthly": 101.12,
                "monthly_delta": 50.56,
                "monthly_ceiling_delta": 0.0,
            },
            {
                "urn": nat,
                "name": "nat",
                "type": NAT,
                "change": "added",
                "base_monthly": 0.0,
                "monthly": 32.85,
                "monthly_delta": 32.85,
                "monthly_ceiling_delta": 32.85,
            },
            {
                "urn": fsx,
                "name": "scratch",
                "type": FSX,
                "change": "removed",
                "base_monthly": 420.46,
                "monthly": 0.0,
                "monthly_delta": -420.46,
                "monthly_ceiling_delta": -840.91,
            },
        ],
    }


@pytest.mark.parametrize(
    ("field", "before", "after"),
    [
        ("pricing", "on-demand", "ri"),
        ("instance_type", "g6e.12xlarge", "g6e.24xlarge"),
        ("quantity", 1, 2),
        ("max_quantity", 2, 4),
        ("unit_price", 10.49264, 9.0),
    ],
)
def test_a_resource_is_changed_when_any_one_line_field_differs(field: str, before: Any, after: Any) -> None:
    # Same monthly on both sides: only the line field tells the change apart (a commitment that moves a line
    # from on-demand to ri is a change even when the figure is unchanged), and the deltas are zero.
    urn = P + NG + "::infer"
    current = {"items": [line(urn, NG, 7659.63, 7659.63, **{field: after})]}
    base = {"items": [line(urn, NG, 7659.63, 7659.63, **{field: before})]}
    assert cost_diff(current, base)["items"] == [
        {
            "urn": urn,
            "name": "infer",
            "type": NG,
            "change": "changed",
            "base_monthly": 7659.63,
            "monthly": 7659.63,
            "monthly_delta": 0.0,
            "monthly_ceiling_delta": 0.0,
        }
    ]
    assert cost_diff(base, base)["items"] == []


def test_cost_diff_defaults_missing_figures_to_zero() -> None:
    # No totals and no items on either side: all zero, nothing listed.
    assert cost_diff({}, {}) == {
        "base_monthly": 0.0,
        "base_monthly_ceiling": 0.0,
        "monthly_delta": 0.0,
        "monthly_ceiling_delta": 0.0,
        "items": [],
    }
    # An item without urn, figures or line fields still diffs: its key is the string "None", its name the whole
    # key (there is no "::" to split on), its figures 0.0 (ceiling given only on the second line: 3.0).
    got = cost_diff({"items": [{"type": NAT}, {"type": NAT, "monthly_ceiling": 3.0}], "monthly": 2.5}, {"items": []})
    assert got == {
        "base_monthly": 0.0,
        "base_monthly_ceiling": 0.0,
        "monthly_delta": 2.5,
        "monthly_ceiling_delta": 0.0,
        "items": [
            {
                "urn": "None",
                "name": "None",
                "type": NAT,
                "change": "added",
                "base_monthly": 0.0,
                "monthly": 0.0,
                "monthly_delta": 0.0,
                "monthly_ceiling_delta": 3.0,
            }
        ],
    }
    # A removed item whose second line has no monthly figure: 4.0 + 0.0 monthly, 2.5 + 6.0 = 8.5 ceiling.
    legacy = [{"urn": "legacy", "monthly": 4.0, "monthly_ceiling": 2.5}, {"urn": "legacy", "monthly_ceiling": 6.0}]
    removed = cost_diff({"monthly_ceiling": 1.0}, {"items": legacy})
    assert removed["monthly_ceiling_delta"] == 1.0
    assert removed["items"] == [
        {
            "urn": "legacy",
            "name": "legacy",
            "type": None,
            "change": "removed",
            "base_monthly": 4.0,
            "monthly": 0.0,
            "monthly_delta": -4.0,
            "monthly_ceiling_delta": -8.5,
        }
    ]


def _eks_cluster() -> dict[str, Any]:
    return {"urn": P + EKS + "::c", "type": EKS, "name": "c", "custom": True, "inputs": {"version": "1.35"}}


def test_base_cost_reprices_the_base_resources_with_the_given_options() -> None:
    # EKS standard support is $0.10 per cluster-hour (AWS EKS pricing page): 0.10 * 730 h = $73.00 a month,
    # the same in us-west-2; the stale recorded cost section is ignored when resources are there.
    options = PricingOptions(region="us-west-2", as_of=date(2026, 12, 1))
    got = base_cost({"resources": [_eks_cluster()], "cost": {"monthly": 1.0}}, options)
    assert (got["region"], got["monthly"], got["warnings"]) == ("us-west-2", 73.0, [])


def test_base_cost_falls_back_to_the_recorded_cost_section() -> None:
    recorded = {"items": [], "monthly": 12.5, "monthly_ceiling": 20.0}
    # No resources (empty list, missing, or not a list): the recorded section itself.
    assert base_cost({"resources": [], "cost": recorded}) is recorded
    assert base_cost({"cost": recorded}) is recorded
    assert base_cost({"resources": {"not": "a list"}, "cost": recorded}) is recorded
    # Nothing usable recorded either: an empty cost section.
    empty = {"items": [], "monthly": 0.0, "monthly_ceiling": 0.0}
    assert base_cost({"resources": [], "cost": None}) == empty
    assert base_cost({}) == empty


# ---- gpucloud.cost (package): plan_resources, options_for, price_plan -----------------------------------------


def _record(type_: str, name: str, inputs: dict[str, Any], deps: dict[str, list[str]] | None = None) -> ResourceRecord:
    return ResourceRecord(
        urn=f"{P}{type_}::{name}",
        type=type_,
        name=name,
        parent=None,
        custom=True,
        dependencies=sorted({u for us in (deps or {}).values() for u in us}),
        inputs=inputs,
        property_dependencies=deps or {},
    )


def test_plan_resources_are_the_records_json_with_property_dependencies() -> None:
    lt = _record("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"instanceType": "g6e.12xlarge"})
    ng = _record(NG, "ng", {"launchTemplate": {"id": "lt-1"}}, {"launchTemplate": [lt.urn]})
    assert plan_resources(Plan(project="gpucloud", stack="dev", resources=[lt, ng])) == [
        {**lt.to_json(), "propertyDependencies": {}},
        {**ng.to_json(), "propertyDependencies": {"launchTemplate": [lt.urn]}},
    ]


def test_options_for_reads_the_pricing_object_and_the_stack_region() -> None:
    assert options_for(None) == PricingOptions()
    assert options_for({}) == PricingOptions()
    config = {"aws:region": "us-west-2", CONFIG_KEY: {"asOf": "2026-11-15", "rootVolumes": False}}
    assert options_for(config) == PricingOptions(region="us-west-2", as_of=date(2026, 11, 15), root_volumes=False)
    # An empty or non-string region is no region: the engine then falls back to us-east-1 with a warning.
    assert options_for({"aws:region": ""}).region is None
    assert options_for({"aws:region": 1}).region is None


def test_price_plan_prices_and_diffs_with_the_stack_options() -> None:
    # eu-west-1 on 2026-12-01: the EKS cluster is in standard support, $0.10/h * 730 h = $73.00; the NAT gateway is
    # on both sides at eu-west-1's $0.048/h * 730 h = $35.04, so it is not a change.
    nat = _record(NAT, "nat", {"subnetId": "subnet-1"})
    eks = _record(EKS, "c", {"version": "1.35"})
    config = {"aws:region": "eu-west-1", CONFIG_KEY: {"asOf": "2026-12-01"}}
    plan = Plan(project="gpucloud", stack="dev", resources=[eks, nat], config=config)
    base = {"resources": [{**nat.to_json(), "propertyDependencies": {}}]}
    cost = price_plan(plan, compare=base)
    assert (cost["region"], cost["as_of"], cost["monthly"]) == ("eu-west-1", "2026-12-01", 108.04)
    assert cost["diff"] == {
        "base_monthly": 35.04,
        "base_monthly_ceiling": 35.04,
        "monthly_delta": 73.0,
        "monthly_ceiling_delta": 73.0,
        "items": [
            {
                "urn": eks.urn,
                "name": "c",
                "type": EKS,
                "change": "added",
                "base_monthly": 0.0,
                "monthly": 73.0,
                "monthly_delta": 73.0,
                "monthly_ceiling_delta": 73.0,
            }
        ],
    }
    assert "diff" not in price_plan(plan)


def test_price_plan_reads_a_plan_without_config_or_stack_attributes() -> None:
    # price_plan takes any object with `resources` (the policy pack and tests hand it minimal ones).
    cost = price_plan(SimpleNamespace(resources=[]))
    assert (cost["monthly"], cost["items"]) == (0.0, [])


BAD_TERM = (
    "invalid gpucloud:pricing: 1 problem\n  - gpucloud:pricing.commitments[0].term: '2y' is not one of ['1y', '3y']"
)


@pytest.mark.parametrize(
    ("plan_fields", "where"),
    [
        ({"stack_file": "stacks/Pulumi.dev.yaml", "stack": "dev"}, "stacks/Pulumi.dev.yaml"),
        ({"stack_file": "", "stack": "dev"}, "stack 'dev'"),
        ({}, "stack ''"),
    ],
)
def test_price_plan_names_the_stack_file_or_stack_in_a_config_error(plan_fields: dict[str, str], where: str) -> None:
    config = {CONFIG_KEY: {"commitments": [{"match": "p5", "term": "2y"}]}}
    plan = SimpleNamespace(resources=[], config=config, **plan_fields)
    with pytest.raises(PlanInputError) as raised:
        price_plan(plan)
    assert str(raised.value) == f"{where}: {BAD_TERM}"


# ---- gpucloud.cost.options: the gpucloud:pricing object -------------------------------------------------------


def test_pricing_config_error_counts_its_problems_one_per_line() -> None:
    one = PricingConfigError("gpucloud:pricing.asOf: 'soon' is not an ISO date (YYYY-MM-DD)")
    assert one.problems == ["gpucloud:pricing.asOf: 'soon' is not an ISO date (YYYY-MM-DD)"]
    assert str(one) == (
        "invalid gpucloud:pricing: 1 problem\n  - gpucloud:pricing.asOf: 'soon' is not an ISO date (YYYY-MM-DD)"
    )
    two = PricingConfigError(["a.kind: bad", "a.term: bad"])
    assert two.problems == ["a.kind: bad", "a.term: bad"]
    assert str(two) == "invalid gpucloud:pricing: 2 problems\n  - a.kind: bad\n  - a.term: bad"


def test_commitment_matches_its_family_or_its_exact_type() -> None:
    family, exact = Commitment(match="p5"), Commitment(match="g6e.12xlarge")
    assert family.matches("p5.48xlarge") and family.matches("p5")
    assert not family.matches("p5e.48xlarge")  # another family that only starts with the same letters
    assert exact.matches("g6e.12xlarge")
    assert not exact.matches("g6e.24xlarge") and not exact.matches("g6e")


def test_from_config_defaults_and_accepted_fields() -> None:
    assert PricingOptions.from_config(None) == PricingOptions()
    # An empty object is every default: no commitments, no date (today), root volumes priced.
    assert PricingOptions.from_config({}) == PricingOptions(commitments=(), as_of=None, root_volumes=True)
    assert PricingOptions.from_config({"commitments": None, "rootVolumes": False}) == PricingOptions(root_volumes=False)
    # YAML turns an unquoted 2026-11-15 into a date: taken as it is.
    assert PricingOptions.from_config({"asOf": date(2026, 11, 15)}).as_of == date(2026, 11, 15)
    got = PricingOptions.from_config(
        {
            "asOf": "2026-11-15",
            "commitments": [
                {"match": "p5"},
                {"match": "g6e.12xlarge", "kind": "compute-savings-plan", "term": "3y", "discount": 0.25, "count": 2},
            ],
        }
    )
    # Kind and term default to a 1-year RI; discount and count to None (the catalog figure, every instance).
    assert got == PricingOptions(
        commitments=(
            Commitment(match="p5", kind="ri", term="1y", discount=None, count=None),
            Commitment(match="g6e.12xlarge", kind="compute-savings-plan", term="3y", discount=0.25, count=2),
        ),
        as_of=date(2026, 11, 15),
        root_volumes=True,
    )


def _problems(data: Any, where: str = CONFIG_KEY) -> list[str]:
    with pytest.raises(PricingConfigError) as raised:
        PricingOptions.from_config(data, where)
    return raised.value.problems


def test_from_config_rejects_a_non_object_and_unknown_top_level_keys() -> None:
    assert _problems(["p5"]) == ["gpucloud:pricing: must be an object with a 'commitments' list"]
    assert _problems({"commitment": [], "rootVolumes": True}, "Pulumi.dev.yaml gpucloud:pricing") == [
        "Pulumi.dev.yaml gpucloud:pricing: unknown keys ['commitment']; allowed: commitments, rootVolumes, asOf"
    ]
    assert _problems({"rootVolumes": "no", "asOf": "soon"}) == [
        "gpucloud:pricing.asOf: 'soon' is not an ISO date (YYYY-MM-DD)",
        "gpucloud:pricing.rootVolumes: must be true or false",
    ]
    # YAML reads an unquoted timestamp as a datetime: reported, not left to fail comparing with dates later.
    assert _problems({"asOf": datetime(2026, 11, 15, 10, 0)}) == [
        "gpucloud:pricing.asOf: datetime.datetime(2026, 11, 15, 10, 0) is not an ISO date (YYYY-MM-DD)"
    ]


@pytest.mark.parametrize("commitments", ["p5", {"match": "p5"}, 5])
def test_from_config_wants_a_list_of_commitments(commitments: Any) -> None:
    # A string is a sequence too, but not a list of commitments.
    assert _problems({"commitments": commitments}) == ["gpucloud:pricing.commitments: must be a list"]


def test_from_config_names_every_bad_commitment_field() -> None:
    path = "gpucloud:pricing.commitments"
    assert _problems({"commitments": ["p5", {"match": "g6e"}, 3]}) == [
        f"{path}[0]: must be an object with match, kind, term",
        f"{path}[2]: must be an object with match, kind, term",
    ]
    assert _problems({"commitments": [{"match": "p5", "amount": 2}]}) == [
        f"{path}[0]: unknown keys ['amount']; allowed: match, kind, term, discount, count"
    ]
    match_fix = "give an instance family (p5) or type (p5.48xlarge)"
    assert _problems({"commitments": [{"kind": "ri"}, {"match": ""}, {"match": 5}]}) == [
        f"{path}[0].match: {match_fix}",
        f"{path}[1].match: {match_fix}",
        f"{path}[2].match: {match_fix}",
    ]
    assert _problems({"commitments": [{"match": "p5", "kind": "RI", "term": 1}]}) == [
        f"{path}[0].kind: 'RI' is not one of ['ri', 'savings-plan', 'compute-savings-plan']",
        f"{path}[0].term: '1' is not one of ['1y', '3y']",
    ]


@pytest.mark.parametrize("discount", [0, 1, 1.5, -0.1, True, "0.4"])
def test_from_config_wants_a_discount_strictly_between_0_and_1(discount: Any) -> None:
    # 0 would be no discount and 1 a free instance: neither is a commitment's price.
    assert _problems({"commitments": [{"match": "p5", "discount": discount}]}) == [
        f"gpucloud:pricing.commitments[0].discount: {discount!r} must be a fraction between 0 and 1 (0.4 = 40% off)"
    ]


@pytest.mark.parametrize("count", [0, -1, True, "2", 1.5])
def test_from_config_wants_a_whole_count_of_at_least_one(count: Any) -> None:
    assert _problems({"commitments": [{"match": "p5", "count": count}]}) == [
        f"gpucloud:pricing.commitments[0].count: {count!r} must be a whole number of instances, at least 1"
    ]


def test_from_config_accepts_the_edges_of_discount_and_count() -> None:
    got = PricingOptions.from_config({"commitments": [{"match": "p5", "discount": 0.01, "count": 1}]})
    assert got.commitments == (Commitment(match="p5", discount=0.01, count=1),)


# ---- gpucloud.cost.actual: Cost Explorer filter, paging and proration -----------------------------------------


def _tag(key: str, value: str) -> dict[str, Any]:
    return {"Tags": {"Key": key, "Values": [value], "MatchOptions": ["EQUALS"]}}


def test_stack_filter_wraps_only_several_conditions() -> None:
    # One tag is the Expression itself (Cost Explorer rejects an And of one).
    assert stack_filter({"Project": "gpucloud"}) == _tag("Project", "gpucloud")
    assert stack_filter({"GpuTeam": "vision"}, {}) == _tag("GpuTeam", "vision")
    assert stack_filter({"GpuTeam": "vision"}, {"aws:eks:namespace": "vision"}) == {
        "Or": [_tag("GpuTeam", "vision"), _tag("aws:eks:namespace", "vision")]
    }
    # Several pod tags: all of them, in key order.
    pods = {"aws:eks:namespace": "vision", "aws:eks:cluster-name": "gpucloud-dev"}
    assert stack_filter({"GpuTeam": "vision", "Env": "dev"}, pods) == {
        "Or": [
            {"And": [_tag("Env", "dev"), _tag("GpuTeam", "vision")]},
            {"And": [_tag("aws:eks:cluster-name", "gpucloud-dev"), _tag("aws:eks:namespace", "vision")]},
        ]
    }
    with pytest.raises(ValueError) as raised:
        stack_filter({}, pods)
    assert str(raised.value) == "no cost-allocation tags to filter on; give --tag KEY=VALUE"


def _ce_client() -> Any:
    return boto3.client("ce", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")


def _request(start: str, end: str, expression: dict[str, Any]) -> dict[str, Any]:
    """The GetCostAndUsage request the Cost Explorer API reference describes for per-service unblended cost."""
    return {
        "TimePeriod": {"Start": start, "End": end},
        "Granularity": "MONTHLY",
        "Metrics": ["UnblendedCost"],
        "Filter": expression,
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}],
    }


def _group(service: str, amount: str, unit: str | None = "USD") -> dict[str, Any]:
    metric = {"Amount": amount} if unit is None else {"Amount": amount, "Unit": unit}
    return {"Keys": [service], "Metrics": {"UnblendedCost": metric}}


EC2 = "Amazon Elastic Compute Cloud - Compute"


def test_actual_spend_sums_before_rounding_and_lists_services_largest_first() -> None:
    client = _ce_client()
    expression = stack_filter({"Project": "gpucloud"})
    request = _request("2026-10-01", "2026-12-01", expression)
    with Stubber(client) as stub:
        page_one = {
            "ResultsByTime": [
                {"Groups": [_group(EC2, "1000.004")], "Estimated": False},
                {"Estimated": False},  # a month with no spend: Cost Explorer may leave out its Groups
            ],
            "NextPageToken": "p2",
        }
        stub.add_response("get_cost_and_usage", page_one, request)
        # The EKS group comes before FSx, though FSx cost more.
        page_two = {
            "ResultsByTime": [
                {"Groups": [_group(EC2, "250.5"), _group("Amazon EKS", "36.0049"), _group("Amazon FSx", "99.254")]}
            ]
        }
        stub.add_response("get_cost_and_usage", page_two, {**request, "NextPageToken": "p2"})
        got = actual_spend(client, date(2026, 10, 1), date(2026, 12, 1), expression)
    # EC2 1000.004 + 250.5 = 1250.504; total 1250.504 + 36.0049 + 99.254 = 1385.7629 -> 1385.76 (the rounded
    # services would sum to 1385.75). No bucket says Estimated: true, so the figures are final.
    assert got == {
        "currency": "USD",
        "total": 1385.76,
        "by_service": {EC2: 1250.5, "Amazon FSx": 99.25, "Amazon EKS": 36.0},
        "estimated": False,
    }
    assert list(got["by_service"]) == [EC2, "Amazon FSx", "Amazon EKS"]


def test_actual_spend_keeps_the_last_unit_and_flags_any_estimated_bucket() -> None:
    client = _ce_client()
    expression = stack_filter({"Env": "dev"})
    with Stubber(client) as stub:
        buckets = [
            {"Groups": [_group(EC2, "10", unit="EUR")], "Estimated": True},
            {"Groups": [_group(EC2, "5", unit=None)], "Estimated": False},
        ]
        request = _request("2026-11-01", "2026-11-03", expression)
        stub.add_response("get_cost_and_usage", {"ResultsByTime": buckets}, request)
        got = actual_spend(client, date(2026, 11, 1), date(2026, 11, 3), expression)
    # A metric without a unit keeps the one before it; one estimated bucket makes the whole figure estimated.
    assert got == {"currency": "EUR", "total": 15.0, "by_service": {EC2: 15.0}, "estimated": True}


def test_actual_spend_of_nothing_is_zero_dollars_and_a_bad_period_is_refused() -> None:
    client = _ce_client()
    expression = stack_filter({"Env": "dev"})
    with Stubber(client) as stub:
        stub.add_response("get_cost_and_usage", {}, _request("2026-11-01", "2026-11-02", expression))
        got = actual_spend(client, date(2026, 11, 1), date(2026, 11, 2), expression)
    assert got == {"currency": "USD", "total": 0.0, "by_service": {}, "estimated": False}
    with pytest.raises(ValueError) as raised:
        actual_spend(client, date(2026, 11, 3), date(2026, 11, 2), expression)
    assert str(raised.value) == "the period must end after it starts: 2026-11-03 .. 2026-11-02"


def test_compare_over_one_day_pins_every_field() -> None:
    actual = {"currency": "USD", "total": 49.32, "by_service": {EC2: 49.32}, "estimated": True}
    # 1 day = 24 h of a 730 h month: planned 1000 * 24 / 730 = 32.8767 -> 32.88; ceiling 1500 * 24 / 730 =
    # 49.3151 -> 49.32; delta 49.32 - 32.88 = 16.44 = 50.0 % of the plan. Spending exactly the ceiling is not over.
    got = compare(1000.0, 1500.0, actual, date(2026, 11, 1), date(2026, 11, 2))
    assert got == {
        "period": {"start": "2026-11-01", "end": "2026-11-02", "hours": 24},
        "planned": 32.88,
        "planned_ceiling": 49.32,
        "actual": 49.32,
        "delta": 16.44,
        "delta_percent": 50.0,
        "over_ceiling": False,
        "currency": "USD",
        "estimated": True,
        "by_service": {EC2: 49.32},
    }
    assert compare(1000.0, 1500.0, {**actual, "total": 49.33}, date(2026, 11, 1), date(2026, 11, 2))["over_ceiling"]
    # The delta is in cents even when the total handed in is not: 32.8849 - 32.88 = 0.0049 -> 0.0.
    assert compare(1000.0, 1500.0, {**actual, "total": 32.8849}, date(2026, 11, 1), date(2026, 11, 2))["delta"] == 0.0
    # 15 days = 360 h: planned 1460 * 360 / 730 = 720; delta 10 = 1.3889 % -> 1.4 (one decimal).
    assert (
        compare(1460.0, 2920.0, {**actual, "total": 730.0}, date(2026, 11, 1), date(2026, 11, 16))["delta_percent"]
        == 1.4
    )
