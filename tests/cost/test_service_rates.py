"""Region-varying service rates (NAT, EBS, FSx for Lustre, interface endpoints, CPU types): the shipped dated table,
the refreshed cache laid over it, the Price List parsing `gpucloud prices refresh` does (botocore Stubber, requests
validated against botocore's pricing model), and the dev stack copied to eu-west-1 and ap-northeast-1."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from gpucloud.cost import PricingOptions, price_plan, price_resources
from gpucloud.prices import rates
from gpucloud.prices.cache import load_cache, region_service_rates, write_cache
from gpucloud.prices.refresh import (
    SERVICE_QUERIES,
    fetch_service_rates,
    price_list_filters,
    refresh,
    service_filters,
    service_item,
)

NOW = datetime(2026, 8, 2, 9, 30, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]
NAMED_REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "eu-north-1", "ap-northeast-1",
                 "ap-southeast-2")  # fmt: skip


def doc(usagetype: str, unit: str, usd: str, family: str = "", **attributes: str) -> str:
    """One Price List document in the shape GetProducts answers (aws_v1: a JSON string per product)."""
    return json.dumps(
        {
            "product": {"productFamily": family, "attributes": {"usagetype": usagetype, **attributes}},
            "terms": {
                "OnDemand": {
                    "SKU.JRTCKXETXF": {
                        "priceDimensions": {"SKU.JRTCKXETXF.6YS6EN2CT7": {"unit": unit, "pricePerUnit": {"USD": usd}}}
                    }
                }
            },
        }
    )


# --- the shipped table ---------------------------------------------------------------------------------------------


def test_every_shipped_figure_names_a_dated_source() -> None:
    shipped = json.loads(rates.SERVICE_RATES_FILE.read_text())
    # Each AWS pricing-page data file is dated by its own manifest (hawkFilePublicationDate); ec2 by its commit.
    assert {k: v["as_of"] for k, v in shipped["sources"].items()} == {
        "aws-pricing-pages": "2025-06-01",
        "cloudkeep-ebs": "2022-02-10",
        "aws-page-data-cloudwatch": "2025-09-23",
        "aws-page-data-ec2": "2025-11-03",
        "aws-page-data-fsx": "2025-10-16",
        "aws-page-data-natgateway": "2025-10-28",
        "aws-page-data-vpc": "2025-11-04",
        "aws-elb-pricing-page": "2026-05-01",
    }
    for table in shipped["regions"].values():
        for item, entry in table.items():
            assert entry["source"] in shipped["sources"] and entry["usd"] > 0
            rates.unit_of(item)  # every key is one this module can price


def test_eu_and_ap_regions_hold_ebs_from_the_price_list_and_nothing_invented() -> None:
    for region in NAMED_REGIONS:
        assert rates.ebs_key("gp3") in rates.region_rates(region)
    eu = rates.region_rates("eu-west-1")
    assert (eu["ebs:gp3"].usd, eu["ebs:gp3"].unit, eu["ebs:gp3"].as_of) == (0.088, "GiB-month", "2022-02-10")
    assert eu["ebs:gp3"].source.startswith("cloudkeep-ebs: AWS Price List API")
    # 45.056 $/GiBps-month in the Price List is 0.044 $/MBps-month.
    assert (eu["ebs_throughput:gp3"].usd, eu["ebs_iops:gp3"].usd, eu["ebs_iops:io2"].usd) == (0.044, 0.0055, 0.072)
    tokyo = rates.region_rates("ap-northeast-1")
    assert (tokyo["ebs:gp3"].usd, tokyo["ebs:gp2"].usd, tokyo["ebs:io1"].usd, tokyo["ebs_iops:io1"].usd) == (
        0.096,
        0.12,
        0.142,
        0.074,
    )
    # FSx scratch and FSx backups have no sourced figure outside the three US regions (the page data's codes for
    # them could not be identified): absent, not borrowed.
    absent = ("fsx_lustre:SCRATCH_2:-:SSD", "fsx_lustre:SCRATCH_1:-:SSD", rates.FSX_BACKUP_GB_MONTH)
    for item in absent:
        assert rates.shipped_regions(item) == ["us-east-1", "us-east-2", "us-west-2"]
        assert item not in eu and item not in tokyo
    assert rates.region_rates("xx-nowhere-1") == {}


def test_item_keys_units_and_names() -> None:
    assert rates.fsx_lustre_key("PERSISTENT_2", 125, "SSD") == "fsx_lustre:PERSISTENT_2:125:SSD"
    assert rates.fsx_lustre_key("SCRATCH_2", None, "SSD") == "fsx_lustre:SCRATCH_2:-:SSD"
    assert [rates.unit_of(k) for k in ("ebs:gp3", "ebs_iops:io2", "ebs_throughput:gp3", "cpu:t3.medium")] == [
        "GiB-month",
        "IOPS-month",
        "MBps-month",
        "hour",
    ]
    assert (rates.unit_of("nat_gateway_gb"), rates.unit_of("fsx_lustre:SCRATCH_2:-:SSD")) == ("GB", "GiB-month")
    with pytest.raises(KeyError):
        rates.unit_of("s3:standard")
    assert rates.describe("fsx_lustre:SCRATCH_2:-:SSD") == "FSx for Lustre SCRATCH_2 SSD"
    assert rates.describe("fsx_lustre:PERSISTENT_2:250:SSD") == "FSx for Lustre PERSISTENT_2 250 SSD"
    assert rates.describe("cpu:m5.large") == "EC2 m5.large On-Demand"
    assert rates.describe("nat_gateway_hour") == "NAT gateway"
    assert rates.missing_reason("eu-north-1", "fsx_lustre:SCRATCH_2:-:SSD", "FSx for Lustre SCRATCH_2 SSD") == (
        "no eu-north-1 list price for FSx for Lustre SCRATCH_2 SSD in gpucloud's service rates (it holds "
        "us-east-1, us-east-2, us-west-2); not priced at another region's rate: run `gpucloud prices refresh "
        "--region eu-north-1` to fetch it from the AWS Price List"
    )
    assert "(no region holds it)" in rates.missing_reason("eu-west-1", "ebs:io9", "EBS io9")


def test_table_lists_the_regions_own_rates() -> None:
    rows = {str(r["item"]): r for r in rates.table("eu-central-1")}
    assert rows["EBS gp3"] == {
        "item": "EBS gp3",
        "usd": 0.0952,
        "unit": "GiB-month",
        "source": rates.region_rates("eu-central-1")["ebs:gp3"].source,
        "as_of": "2022-02-10",
    }
    # eu-central-1's own NAT rate (0.052 $/h on the pricing-page data, 2025-10-28), not us-east-1's 0.045.
    assert (rows["NAT gateway"]["usd"], rows["NAT gateway"]["as_of"]) == (0.052, "2025-10-28")
    assert str(rows["NAT gateway"]["source"]).startswith("aws-page-data-natgateway: AWS pricing-page data")
    assert rows["KMS customer managed key"]["usd"] == 1.0
    assert len(rows) == 4 + len(rates.region_rates("eu-central-1"))
    us = rates.table()
    assert [(r["item"], r["usd"], r["unit"]) for r in us][:7] == [
        ("EKS control plane, standard support", 0.1, "hour"),
        ("EKS control plane, extended support", 0.6, "hour"),
        ("NAT gateway", 0.045, "hour"),
        ("NAT gateway data processing (not priced: usage)", 0.045, "GB"),
        ("Interface VPC endpoint, per AZ", 0.01, "hour"),
        ("Public IPv4 address (Elastic IP)", 0.005, "hour"),
        ("KMS customer managed key", 1.0, "month"),
    ]
    assert len(us) == 4 + len(rates.region_rates("us-east-1")) and us[-1]["item"] == "FSx for Lustre SCRATCH_2 SSD"


def test_eks_support_outside_the_release_calendar() -> None:
    assert rates.eks_in_extended_support("1.34", date(2026, 12, 2)) is False
    assert rates.eks_in_extended_support("1.34", date(2026, 12, 3)) is True
    # Older than every listed version: long past standard support; newer: assumed standard; not a version: None.
    assert rates.eks_in_extended_support("1.27", date(2020, 1, 1)) is True
    assert rates.eks_in_extended_support("1.9", date(2020, 1, 1)) is True
    assert rates.eks_in_extended_support("2.0", date(2030, 1, 1)) is False
    assert rates.eks_in_extended_support("1.36", date(2030, 1, 1)) is False
    assert rates.eks_in_extended_support("1.28", date(2024, 11, 27)) is True
    assert rates.eks_in_extended_support("latest", date(2026, 1, 1)) is None
    assert rates.eks_in_extended_support("1", date(2026, 1, 1)) is None
    # A patch level is billed as its minor version: 1.28.0 is 1.28 (standard support ended 2024-11-26), 1.27.3 is
    # older than the calendar, 1.35.1 is 1.35 (standard support until 2027-03-27).
    assert rates.eks_in_extended_support("1.28.0", date(2024, 11, 27)) is True
    assert rates.eks_in_extended_support("1.28.0", date(2024, 11, 26)) is False
    assert rates.eks_in_extended_support("1.27.3", date(2020, 1, 1)) is True
    assert rates.eks_in_extended_support("1.35.1", date(2027, 3, 27)) is False
    assert rates.eks_in_extended_support("1.35.1", date(2027, 3, 28)) is True


# --- the cache overlay ----------------------------------------------------------------------------------------------


def test_refreshed_rates_overlay_the_shipped_table(tmp_path: Path) -> None:
    cache = tmp_path / "prices.json"
    write_cache("eu-west-1", {"g5.xlarge": {"on_demand_usd": 1.1, "price_date": "2026-08-02"}}, "t0", cache)
    write_cache(
        "eu-west-1",
        {},
        "t1",
        cache,
        service_rates={
            "nat_gateway_hour": {"usd": 0.048, "price_date": "2026-08-02", "price_source": "aws-price-list-api"},
            "ebs:gp3": {"usd": 0.0881, "price_date": "2026-08-02", "price_source": "aws-price-list-api"},
            "s3:standard": {"usd": 0.023, "price_date": "2026-08-02", "price_source": "aws-price-list-api"},
            "alb_hour": {"usd": 0.0252, "price_date": "2026-08-02", "price_source": "aws-price-list-api"},
            "cpu:m5.large": {"usd": 0, "price_date": "2026-08-02", "price_source": "x"},
            "cpu:t3.large": {"usd": 0.09, "price_source": "x"},
        },
    )
    data = load_cache(cache)
    assert data is not None and data["regions"]["eu-west-1"]["g5.xlarge"]["on_demand_usd"] == 1.1
    assert sorted(region_service_rates("eu-west-1", cache)) == [
        "alb_hour",
        "ebs:gp3",
        "nat_gateway_hour",
        "s3:standard",
    ]
    assert region_service_rates("us-east-1", cache) == {}
    eu = rates.region_rates("eu-west-1", cache)
    assert eu["nat_gateway_hour"] == rates.Rate(0.048, "hour", "aws-price-list-api", "2026-08-02")
    assert eu["ebs:gp3"].usd == 0.0881 and eu["ebs:sc1"].usd == 0.0168
    # Keys this gpucloud cannot price (a newer one's refresh) are skipped, and the ones after them still read; a
    # cache entry without a price or a date leaves the shipped figure (eu-west-1 page data: m5.large 0.107 $/h,
    # t3.large 0.0912 $/h) in place.
    assert not {"s3:standard", "alb_hour"} & set(eu)
    assert (eu["cpu:m5.large"].usd, eu["cpu:t3.large"].usd) == (0.107, 0.0912)
    assert eu["cpu:t3.large"].source.startswith("aws-page-data-ec2")
    # A later refresh of instance prices keeps the service rates.
    write_cache("eu-west-1", {"g5.xlarge": {"spot_usd": 0.4, "price_date": "2026-08-03"}}, "t2", cache)
    assert region_service_rates("eu-west-1", cache)["nat_gateway_hour"]["usd"] == 0.048


# --- Price List parsing (refresh) -----------------------------------------------------------------------------------


def test_service_item_matches_documented_usage_types_in_every_region_prefix() -> None:
    assert service_item(json.loads(doc("EU-NatGateway-Hours", "Hrs", "0.048", "NAT Gateway"))) == (
        "nat_gateway_hour",
        0.048,
    )
    assert service_item(json.loads(doc("NatGateway-Bytes", "GB", "0.045", "NAT Gateway"))) == ("nat_gateway_gb", 0.045)
    assert service_item(json.loads(doc("USE1-RegionalNatGateway-Hours", "Hrs", "0.05", "NAT Gateway"))) is None
    assert service_item(json.loads(doc("EU-VpcEndpoint-Hours", "Hrs", "0.011", "VpcEndpoint"))) == (
        "interface_endpoint_az_hour",
        0.011,
    )
    assert service_item(json.loads(doc("EU-VpcEndpoint-GWLBE-Hours", "Hrs", "0.0035", "VpcEndpoint"))) is None
    storage = doc("APN1-EBS:VolumeUsage.gp3", "GB-Mo", "0.096", "Storage", volumeApiName="gp3")
    assert service_item(json.loads(storage)) == ("ebs:gp3", 0.096)
    magnetic = doc("EBS:VolumeUsage", "GB-Mo", "0.05", "Storage", volumeApiName="standard")
    assert service_item(json.loads(magnetic)) == ("ebs:standard", 0.05)
    assert service_item(json.loads(doc("EBS:VolumeUsage.gp3", "Hrs", "0.1", "Storage", volumeApiName="gp3"))) is None
    assert service_item(json.loads(doc("EBS:VolumeUsage.x", "GB-Mo", "0.1", "Storage", volumeApiName="gp9"))) is None
    assert service_item(json.loads(doc("APN1-EBS:VolumeP-IOPS.gp3", "IOPS-Mo", "0.006"))) == ("ebs_iops:gp3", 0.006)
    assert service_item(json.loads(doc("EBS:VolumeP-IOPS.piops", "IOPS-Mo", "0.065"))) == ("ebs_iops:io1", 0.065)
    assert service_item(json.loads(doc("APN1-EBS:VolumeP-IOPS.io2", "IOPS-Mo", "0.074"))) == ("ebs_iops:io2", 0.074)
    assert service_item(json.loads(doc("APN1-EBS:VolumeP-IOPS.io2.tier2", "IOPS-Mo", "0.0518"))) is None
    assert service_item(json.loads(doc("APN1-EBS:VolumeP-Throughput.gp3", "GiBps-mo", "49.152"))) == (
        "ebs_throughput:gp3",
        0.048,
    )
    assert service_item(json.loads(doc("EU-NatGateway-Hours", "Hrs", "0", "NAT Gateway"))) is None
    lustre = {"fileSystemType": "Lustre", "storageType": "SSD", "throughputCapacity": "250"}
    assert service_item(json.loads(doc("EU-Storage.SSD.250", "GB-Mo", "0.231", "Storage", **lustre))) == (
        "fsx_lustre:PERSISTENT_2:250:SSD",
        0.231,
    )
    hdd = {**lustre, "storageType": "HDD", "throughputCapacity": "12"}
    assert service_item(json.loads(doc("EU-Storage.HDD.12", "GB-Mo", "0.025", "Storage", **hdd)))[0] == (  # type: ignore[index]
        "fsx_lustre:PERSISTENT_1:12:HDD"
    )
    odd = {**lustre, "throughputCapacity": "N/A"}
    assert service_item(json.loads(doc("EU-Storage.SSD", "GB-Mo", "0.15", "Storage", **odd))) is None
    untiered = {**lustre, "throughputCapacity": "300"}
    assert service_item(json.loads(doc("EU-Storage.SSD.300", "GB-Mo", "0.3", "Storage", **untiered))) is None


def stubbed_pricing(region: str, answers: dict[int, list[str]], cpu: dict[str, str]) -> tuple[Any, Stubber]:
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    for i, (service, extra) in enumerate(SERVICE_QUERIES):
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": answers.get(i, [])},
            {"ServiceCode": service, "Filters": service_filters(region, extra), "MaxResults": 100},
        )
    for itype, usd in cpu.items():
        box = json.dumps({**json.loads(doc(f"EU-BoxUsage:{itype}", "Hrs", usd)), "product": {"attributes": {
            "instanceType": itype, "usagetype": f"EU-BoxUsage:{itype}"}}})  # fmt: skip
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": [box]},
            {"ServiceCode": "AmazonEC2", "Filters": price_list_filters(itype, region), "MaxResults": 100},
        )
    stub.activate()
    return client, stub


EU_ANSWERS = {
    0: [doc("EU-NatGateway-Hours", "Hrs", "0.0480000000", "NAT Gateway"),
        doc("EU-NatGateway-Bytes", "GB", "0.0480000000", "NAT Gateway")],
    1: [doc("EU-EBS:VolumeUsage.gp3", "GB-Mo", "0.0880000000", "Storage", volumeApiName="gp3")],
    3: [doc("EU-EBS:VolumeP-Throughput.gp3", "GiBps-mo", "45.0560000000", "Provisioned Throughput",
            volumeApiName="gp3")],
    4: [doc("EU-VpcEndpoint-Hours", "Hrs", "0.0110000000", "VpcEndpoint")],
}  # fmt: skip


def test_fetch_service_rates_queries_each_family_by_region_code() -> None:
    assert service_filters("eu-west-1", (("productFamily", "Storage"), ("locationType", "AWS Region"))) == [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "eu-west-1"},
        {"Type": "TERM_MATCH", "Field": "productFamily", "Value": "Storage"},
        {"Type": "TERM_MATCH", "Field": "locationType", "Value": "AWS Region"},
    ]
    client, stub = stubbed_pricing("eu-west-1", EU_ANSWERS, {"m7i.large": "0.1120000000"})
    found = fetch_service_rates(client, "eu-west-1", ["m7i.large"])
    stub.assert_no_pending_responses()
    assert found == {
        "cpu:m7i.large": 0.112,
        "ebs:gp3": 0.088,
        "ebs_throughput:gp3": 0.044,
        "interface_endpoint_az_hour": 0.011,
        "nat_gateway_gb": 0.048,
        "nat_gateway_hour": 0.048,
    }


# --- the dev stack in other regions ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_plans() -> dict[str, Any]:
    from gpucloud.plan import run_program

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    plans: dict[str, Any] = {}
    for region in ("eu-west-1", "ap-northeast-1"):
        platform = dict(config["gpucloud:platform"])
        platform.update(region=region, availabilityZones=[f"{region}a", f"{region}c"])
        fsx = {**platform["storage"]["fsx"], "availabilityZone": f"{region}a"}
        platform["storage"] = {**platform["storage"], "fsx": fsx}
        plans[region] = run_program(ROOT, "dev", config_overrides={"aws:region": region, "gpucloud:platform": platform})
    return plans


def _by_name(cost: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {i["name"]: i for i in cost["items"]}


# (region, gp3 $/GiB-month, gp3 throughput $/MBps-month, and the monthly figures they give: 100 GiB of system
# root volumes, 200 GiB and 125 MB/s above baseline on the L40S spot group; then the region's NAT gateway $/h and
# m7i.large On-Demand $/h from the AWS pricing-page data, with one NAT gateway and two system nodes a month:
# eu-west-1 0.048 x 730 = 35.04 and 2 x 0.11235 x 730 = 164.031; ap-northeast-1 0.062 x 730 = 45.26 and
# 2 x 0.1302 x 730 = 190.092).
@pytest.mark.parametrize(
    ("region", "gp3", "tput", "monthly", "nat", "m7i"),
    [
        ("eu-west-1", 0.088, 0.044, (8.8, 17.6, 5.5), (0.048, 35.04), (0.11235, 164.03)),
        ("ap-northeast-1", 0.096, 0.048, (9.6, 19.2, 6.0), (0.062, 45.26), (0.1302, 190.09)),
    ],
)
def test_dev_stack_elsewhere_prices_ebs_nat_and_nodes_at_that_regions_rates(
    dev_plans: dict[str, Any],
    region: str,
    gp3: float,
    tput: float,
    monthly: tuple[float, float, float],
    nat: tuple[float, float],
    m7i: tuple[float, float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    cost = price_plan(dev_plans[region])
    items = _by_name(cost)
    system = items["gpucloud-dev-eks-system root volumes (gp3)"]
    assert (system["region"], system["unit_price"], system["quantity"], system["monthly"]) == (
        region,
        gp3,
        100,
        monthly[0],
    )
    assert system["rate_as_of"] == "2022-02-10"
    assert items["gpucloud-dev-infer-l40s-spot root volumes (gp3)"]["monthly"] == monthly[1]
    spot = items["gpucloud-dev-infer-l40s-spot root volumes gp3 throughput above 125 MB/s"]
    assert (spot["unit_price"], spot["quantity"], spot["monthly"]) == (tput, 125, monthly[2])
    # The NAT gateway and the m7i.large system nodes are priced at the region's own rates, no longer unpriced.
    gateway = items[f"gpucloud-dev-net-nat-{region}a"]
    assert (gateway["region"], gateway["unit_price"], gateway["monthly"], gateway["rate_as_of"]) == (
        region,
        *nat,
        "2025-10-28",
    )
    assert gateway["rate_source"].startswith("aws-page-data-natgateway: AWS pricing-page data")
    nodes = items["gpucloud-dev-eks-system"]
    assert (nodes["instance_type"], nodes["unit_price"], nodes["quantity"], nodes["monthly"]) == ("m7i.large", m7i[0],
                                                                                                 2, m7i[1])  # fmt: skip
    assert nodes["rate_as_of"] == "2025-11-03"
    reasons = {u["urn"].rsplit("::", 1)[-1]: u["reason"] for u in cost["unpriced"] if "usage-billed" not in u["reason"]}
    assert f"gpucloud-dev-net-nat-{region}a" not in reasons and "gpucloud-dev-eks-system" not in reasons
    # NAT data processing is usage: listed with the region's own $/GB.
    assert f"usage-billed: NAT data processing (${nat[0]}/GB in {region}) depends on traffic" in [
        u["reason"] for u in cost["unpriced"]
    ]
    # FSx for Lustre SCRATCH_2 has no sourced figure outside the three US regions: listed with the reason.
    assert reasons["gpucloud-dev-storage-fsx-fs"] == (
        f"no {region} list price for FSx for Lustre SCRATCH_2 SSD in gpucloud's service rates (it holds us-east-1, "
        f"us-east-2, us-west-2); not priced at another region's rate: run `gpucloud prices refresh --region {region}` "
        "to fetch it from the AWS Price List"
    )
    assert not any(i["unit"] == "hour" and i["unit_price"] in (0.045, 0.1008) for i in cost["items"])


def test_dev_stack_in_eu_west_1_after_a_service_refresh(
    dev_plans: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "prices.json"
    client, stub = stubbed_pricing("eu-west-1", EU_ANSWERS, {"m7i.large": "0.1120000000"})

    def clients(service: str, region: str) -> Any:
        assert (service, region) == ("pricing", "us-east-1")
        return client

    result = refresh("eu-west-1", [], clients=clients, now=NOW, cache_file=cache, spot=False, capacity_blocks=False,
                     availability=False, services=True, cpu_types=["m7i.large"])  # fmt: skip
    stub.assert_no_pending_responses()
    assert result["service_rates"]["nat_gateway_hour"] == 0.048 and result["cache_file"] == str(cache)
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    cost = price_plan(dev_plans["eu-west-1"])
    items = _by_name(cost)
    nat = items["gpucloud-dev-net-nat-eu-west-1a"]
    assert (nat["unit_price"], nat["monthly"], nat["rate_source"], nat["rate_as_of"]) == (
        0.048,
        35.04,
        "aws-price-list-api",
        "2026-08-02",
    )
    system = [i for i in cost["items"] if i["instance_type"] == "m7i.large"]
    assert [(i["unit_price"], i["rate_source"]) for i in system] == [(0.112, "aws-price-list-api")]
    nat_gb = [u["reason"] for u in cost["unpriced"] if "NAT data processing" in u["reason"]]
    assert nat_gb == ["usage-billed: NAT data processing ($0.048/GB in eu-west-1) depends on traffic"]


def test_refresh_without_services_makes_no_service_query(tmp_path: Path) -> None:
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    stub.activate()  # no response queued: any call would raise
    result = refresh("eu-west-1", [], clients=lambda s, r: client, now=NOW, cache_file=tmp_path / "p.json",
                     spot=False, capacity_blocks=False, availability=False)  # fmt: skip
    assert (result["service_rates"], result["cache_file"]) == ({}, None)


def test_interface_endpoint_and_io2_priced_per_region() -> None:
    endpoint = {"urn": "urn:x::aws:ec2/vpcEndpoint:VpcEndpoint::e", "type": "aws:ec2/vpcEndpoint:VpcEndpoint",
                "name": "e", "custom": True,
                "inputs": {"vpcEndpointType": "Interface", "subnetIds": ["a", "b"]}}  # fmt: skip
    vol = {"urn": "urn:x::aws:ebs/volume:Volume::v", "type": "aws:ebs/volume:Volume", "name": "v", "custom": True,
           "inputs": {"size": 100.0, "type": "io2", "iops": 1000.0}}  # fmt: skip
    us = price_resources([endpoint, vol], PricingOptions(region="us-west-2", as_of=date(2026, 8, 1)))
    assert [(i["unit_price"], i["quantity"], i["monthly"]) for i in us["items"]] == [
        (0.01, 2, 14.6),
        (0.125, 100, 12.5),
        (0.065, 1000, 65.0),
    ]
    # eu-central-1: 0.012 $/AZ-hour (pricing-page data, 2025-11-04) x 2 subnets x 730 = 17.52.
    eu = price_resources([endpoint, vol], PricingOptions(region="eu-central-1", as_of=date(2026, 8, 1)))
    assert [(i["unit_price"], i["monthly"]) for i in eu["items"]] == [(0.012, 17.52), (0.149, 14.9), (0.078, 78.0)]
    reasons = [u["reason"] for u in eu["unpriced"]]
    assert reasons == ["usage-billed: interface endpoint data processing is billed per GB"]


def test_cli_refresh_reads_service_rates_by_default(
    aws_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from gpucloud import aws as aws_mod
    from gpucloud.cli import main

    cache = tmp_path / "prices.json"
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    # The instance query first (nothing listed for it), then one per service family, then one per CPU type.
    stub.add_response(
        "get_products",
        {"FormatVersion": "aws_v1", "PriceList": []},
        {"ServiceCode": "AmazonEC2", "Filters": price_list_filters("g5.xlarge", "eu-west-1"), "MaxResults": 100},
    )
    for i, (service, extra) in enumerate(SERVICE_QUERIES):
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": EU_ANSWERS.get(i, [])},
            {"ServiceCode": service, "Filters": service_filters("eu-west-1", extra), "MaxResults": 100},
        )
    for itype in rates.CPU_TYPES:
        stub.add_response(
            "get_products",
            {"FormatVersion": "aws_v1", "PriceList": []},
            {"ServiceCode": "AmazonEC2", "Filters": price_list_filters(itype, "eu-west-1"), "MaxResults": 100},
        )
    stub.activate()

    def clients(service: str, region: str) -> Any:
        # Availability comes from a moto server; moto does not implement the Price List API.
        return client if service == "pricing" else boto3.client(service, region_name=region, endpoint_url=aws_env)  # type: ignore[call-overload]

    monkeypatch.setattr(aws_mod, "default_clients", clients)
    args = ["prices", "refresh", "--region", "eu-west-1", "--types", "g5.xlarge", "--no-spot"]
    assert main([*args, "--format", "json"]) == 0
    stub.assert_no_pending_responses()
    out = json.loads(capsys.readouterr().out)
    assert out["service_rates"] == {
        "ebs:gp3": 0.088,
        "ebs_throughput:gp3": 0.044,
        "interface_endpoint_az_hour": 0.011,
        "nat_gateway_gb": 0.048,
        "nat_gateway_hour": 0.048,
    }
    assert region_service_rates("eu-west-1", cache)["interface_endpoint_az_hour"] == {
        "usd": 0.011,
        "price_date": date.today().isoformat(),
        "price_source": "aws-price-list-api",
    }
    assert main(["prices", "show", "--region", "eu-west-1", "--format", "json"]) == 0
    shown = {r["item"]: r for r in json.loads(capsys.readouterr().out)["service_rates"]}
    assert (shown["NAT gateway"]["usd"], shown["NAT gateway"]["source"]) == (0.048, "aws-price-list-api")
    assert shown["EBS sc1"]["usd"] == 0.0168
