"""Issue 27 item 5: where AWS sells each type as Capacity Blocks, per region (gpucloud/catalog/capacity_blocks.json).

Sources: the EC2 user guide's 'Work with Capacity Blocks' prerequisites (p5.48xlarge: us-east-2, us-east-1;
p4d.24xlarge: us-east-2, us-west-2) and the older Capacity Blocks pricing page (p5e.48xlarge: us-east-2;
trn1.32xlarge: ap-southeast-4, Melbourne).
"""

from __future__ import annotations

from typing import Any

from gpucloud.advisor.plan_advice import mix_advice
from gpucloud.catalog import get_catalog
from gpucloud.catalog.capacity_blocks import _data, capacity_block_offering, listed_regions
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.prices.book import get_price_book


def _offering(instance_type: str, region: str) -> Any:
    spec = get_catalog().get(instance_type)
    return capacity_block_offering(instance_type, region, sold_as_blocks=spec.capacity_block)


def test_listed_regions_from_the_aws_pages() -> None:
    assert sorted(listed_regions("p5.48xlarge")) == ["us-east-1", "us-east-2"]
    assert sorted(listed_regions("p4d.24xlarge")) == ["us-east-2", "us-west-2"]
    assert sorted(listed_regions("p5e.48xlarge")) == ["us-east-2"]
    assert sorted(listed_regions("trn1.32xlarge")) == ["ap-southeast-4"]
    assert listed_regions("p5en.48xlarge") == {}


def test_offered_unlisted_and_not_offered() -> None:
    p5 = _offering("p5.48xlarge", "us-east-2")
    assert (p5.status, p5.sources) == ("offered", ("ec2-ug-capacity-blocks-using", "aws-capacity-blocks-pre2025"))
    # A region no source lists is undecided (the lists are older than today's), never a "no".
    p4d = _offering("p4d.24xlarge", "eu-west-1")
    assert p4d.status == "unlisted"
    assert p4d.reason.startswith(
        "p4d.24xlarge Capacity Blocks in eu-west-1 are undecided: the sources list it in us-east-2, us-west-2"
    )
    assert "describe-capacity-block-offerings --region eu-west-1 --instance-type p4d.24xlarge" in p4d.reason
    # DescribeInstanceTypes SupportedUsageClasses of g6e has no capacity-block: sure.
    g6e = _offering("g6e.12xlarge", "us-east-1")
    assert g6e.status == "not-offered" and "SupportedUsageClasses has no capacity-block" in g6e.reason


def test_every_listed_type_is_a_capacity_block_type_and_every_source_is_described() -> None:
    data = _data()
    for instance_type, regions in data["types"].items():
        assert get_catalog().get(instance_type).capacity_block, instance_type
        for ids in regions.values():
            assert set(ids) <= set(data["sources"]), instance_type


def test_the_price_book_says_why_a_block_is_unpriced_in_a_region() -> None:
    book = get_price_book()
    assert (
        book.rates("p5.48xlarge", "us-east-2")
        .reasons["capacity_block"]
        .startswith(
            "no Capacity Block rate for p5.48xlarge in us-east-2 in the shipped snapshot (AWS lists p5.48xlarge "
            "Capacity Blocks in us-east-2)"
        )
    )
    assert (
        "(p5en.48xlarge Capacity Blocks in eu-west-1 are undecided: no source read lists its regions)"
        in (book.rates("p5en.48xlarge", "eu-west-1").reasons["capacity_block"])
    )
    assert book.rates("g6e.12xlarge", "us-east-1").reasons["capacity_block"] == (
        "g6e.12xlarge is not offered through Capacity Blocks"
    )


def _node_group(itype: str, nodes: int) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::{itype}",
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": "train",
        "parent": None,
        "custom": True,
        "dependencies": [],
        "inputs": {
            "instanceTypes": [itype],
            "capacityType": "ON_DEMAND",
            "scalingConfig": {"desiredSize": nodes, "maxSize": nodes},
            "labels": {"gpucloud.io/workload": "training"},
        },
    }


def test_plan_advice_with_blocks_names_where_they_are_sold() -> None:
    # Four p5.48xlarge on demand for a month of training: the optimum buys Capacity Blocks (us-east-1 rate, AWS
    # Capacity Blocks pricing page) and says that AWS lists p5.48xlarge blocks in us-east-1.
    resources = [_node_group("p5.48xlarge", 4)]
    cost = price_resources(resources, PricingOptions(region="us-east-1"))
    (pool,) = mix_advice(resources, cost, horizon_months=1)["pools"]
    assert pool["advice"]["split"]["capacity_block"] > 0
    assert pool["advice"]["capacity_block_offering"]["status"] == "offered"
    assert "listed in us-east-1" in pool["advice"]["capacity_block_offering"]["reason"]
    # In a region without a block rate (eu-west-1: no source lists it) no block is proposed.
    eu_cost = price_resources(resources, PricingOptions(region="eu-west-1"))
    (eu,) = mix_advice(resources, eu_cost, horizon_months=1)["pools"]
    assert not (eu["advice"] or {}).get("split", {}).get("capacity_block")
