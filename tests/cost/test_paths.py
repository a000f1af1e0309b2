"""Every billable path: Karpenter NodePools, EKS by version and date, provisioned EBS performance, KMS rotation,
FSx backups, Container Insights, and the engine paths the mutation run found untested. Rates are read from the
snapshot JSON and the rate table and recomputed here."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from engine_fixtures import NODEPOOL, SNAP, STACK, US, capacity, nodepool, od, res, spot_estimate, types_in

from gpucloud.catalog import get_catalog
from gpucloud.cost import PricingOptions, price_resources
from gpucloud.cost.engine import UNKNOWN

POOL = NODEPOOL


def pool(
    name: str,
    requirements: list[dict[str, Any]],
    limits: dict[str, str] | None = None,
    expected: int | None = None,
    replicas: float | None = None,
    type_: str = POOL,
) -> dict[str, Any]:
    annotations = None if expected is None else {"gpucloud.io/expected-nodes": str(expected)}
    return nodepool(name, requirements, limits, replicas, annotations, type_)


def rows(cost: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (i["instance_type"], i["pricing"], i["quantity"], i["max_quantity"], i["unit_price"], i["monthly"],
         i["monthly_ceiling"])
        for i in cost["items"]
    ]  # fmt: skip


# --- Karpenter ---------------------------------------------------------------------------------------------------


def test_staging_like_pool_expected_on_spot_ceiling_from_the_gpu_limit() -> None:
    p = pool(
        "infer",
        [capacity("spot", "on-demand"), types_in("g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge")],
        {"nvidia.com/gpu": "6"},
        expected=2,
    )
    cost = price_resources([p], US)
    s, dear = spot_estimate("g6e.xlarge"), od("g6e.4xlarge")
    assert rows(cost) == [
        ("g6e.xlarge", "spot", 2, 0, s, round(2 * s * 730, 2), 0.0),
        ("g6e.4xlarge", "on-demand", 0, 6, dear, 0.0, round(6 * dear * 730, 2)),
    ]
    assert cost["ceiling_unbounded"] is False and cost["warnings"] == []


def test_cpu_and_memory_limits_resolve_to_instance_counts() -> None:
    reqs = [types_in("g6e.xlarge", "g6e.12xlarge")]
    by_cpu = price_resources([pool("p", reqs, {"cpu": "96"}, expected=0)], US)
    # 96 vCPU: 24 x g6e.xlarge (4 vCPU) = 24 * 1.861 beats 2 x g6e.12xlarge (48 vCPU).
    assert rows(by_cpu)[-1][:4] == ("g6e.xlarge", "on-demand", 0, 24)
    by_mem = price_resources([pool("p", reqs, {"memory": "512Gi"}, expected=0)], US)
    # 512 GiB: 16 x g6e.xlarge (32 GiB) vs 1 x g6e.12xlarge (384 GiB).
    assert rows(by_mem)[-1][:4] == ("g6e.xlarge", "on-demand", 0, 16)
    tight = price_resources([pool("p", reqs, {"cpu": "96", "memory": "200Gi", "nvidia.com/gpu": "100"}, 0)], US)
    assert rows(tight)[-1][:4] == ("g6e.xlarge", "on-demand", 0, 6)
    milli = price_resources([pool("p", [types_in("g6e.12xlarge")], {"cpu": "96000m"}, expected=1)], US)
    assert rows(milli) == [
        ("g6e.12xlarge", "on-demand", 1, 2, od("g6e.12xlarge"), round(od("g6e.12xlarge") * 730, 2),
         round(2 * od("g6e.12xlarge") * 730, 2)),
    ]  # fmt: skip


def test_unbounded_gpu_pool_is_said_loudly() -> None:
    cost = price_resources([pool("gpu", [types_in("p5.48xlarge")], None, expected=1)], US)
    assert cost["ceiling_unbounded"] is True
    assert cost["unbounded"] == [
        {
            "urn": f"{STACK}${POOL}::gpu",
            "reason": "UNBOUNDED CEILING: Karpenter GPU NodePool gpu sets no limits that bound p5.48xlarge: it can "
            "launch nodes without end; set spec.limits (cpu, memory, nvidia.com/gpu)",
        }
    ]
    assert cost["warnings"] == [cost["unbounded"][0]["reason"]]
    # The expected node is still priced (On-Demand: the pool allows no spot).
    assert rows(cost) == [("p5.48xlarge", "on-demand", 1, 0, 55.04, round(55.04 * 730, 2), 0.0)]
    # A GPU limit does not bound a CPU type the pool also admits.
    mixed = price_resources([pool("m", [types_in("g6e.xlarge", "m7i.xlarge")], {"nvidia.com/gpu": "4"}, 0)], US)
    assert mixed["ceiling_unbounded"] is True and "bound m7i.xlarge" in mixed["unbounded"][0]["reason"]


def test_requirements_narrow_the_admitted_types() -> None:
    reqs = [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["3"]},
        {"key": "karpenter.k8s.aws/instance-size", "operator": "NotIn", "values": ["48xlarge"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    ]
    cost = price_resources([pool("p", reqs, {"nvidia.com/gpu": "8"}, expected=1)], US)
    # 4-GPU g6e sizes: 12xlarge and 24xlarge; the cheapest runs the expected node, the dearest fills the limit.
    assert rows(cost) == [
        ("g6e.12xlarge", "on-demand", 1, 0, od("g6e.12xlarge"), round(od("g6e.12xlarge") * 730, 2), 0.0),
        ("g6e.24xlarge", "on-demand", 0, 2, od("g6e.24xlarge"), 0.0, round(2 * od("g6e.24xlarge") * 730, 2)),
    ]
    lt = [
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Lt", "values": ["5"]},
        {"key": "karpenter.k8s.aws/instance-gpu-manufacturer", "operator": "In", "values": ["nvidia"]},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["5"]},
    ]
    small = price_resources([pool("p", lt, {"nvidia.com/gpu": "2"}, expected=1)], US)
    assert [r[:4] for r in rows(small)] == [("g4dn.xlarge", "on-demand", 1, 2)]


def test_pool_expected_from_replicas_or_warned_when_absent() -> None:
    static = price_resources([pool("s", [types_in("g5.xlarge")], {"cpu": "8"}, replicas=2.0)], US)
    assert rows(static) == [("g5.xlarge", "on-demand", 2, 2, 1.006, 1468.76, 1468.76)]
    silent = price_resources([pool("q", [types_in("g5.xlarge")], {"cpu": "8"})], US)
    assert rows(silent) == [("g5.xlarge", "on-demand", 0, 2, 1.006, 0.0, 1468.76)]
    assert silent["warnings"] == [
        "q: Karpenter launches nodes for pending pods only and the NodePool states no expected size (spec.replicas "
        "or the gpucloud.io/expected-nodes annotation): expected cost 0, ceiling from limits"
    ]
    beta = price_resources(
        [pool("b", [types_in("g5.xlarge")], {"cpu": "4"}, 1, type_=POOL.replace("v1", "v1beta1"))], US
    )
    assert rows(beta) == [("g5.xlarge", "on-demand", 1, 1, 1.006, 734.38, 734.38)]


def test_pool_admitting_nothing_priceable_is_listed() -> None:
    cost = price_resources([pool("p", [types_in("p5e.48xlarge")], {"nvidia.com/gpu": "8"}, 1)], US)
    assert cost["items"] == []
    assert cost["unpriced"][0]["reason"].startswith("no on-demand rate for any admitted type in us-east-1")
    none = price_resources([pool("n", [types_in("p9.48xlarge")], {"cpu": "8"}, 1)], US)
    assert none["unpriced"][0]["reason"] == (
        "Karpenter NodePool admits no instance type gpucloud can price in us-east-1: "
        "'p9.48xlarge' is not an EC2 instance type"
    )
    unknown = price_resources([res(POOL, "u", {"spec": {"template": {"spec": {"requirements": UNKNOWN}}}})], US)
    assert unknown["unpriced"][0]["reason"] == "spec.template.spec.requirements is unknown at preview"


# --- EKS by version and date -------------------------------------------------------------------------------------


def eks(version: str | None, support: str | None = None, **extra: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = dict(extra)
    if version is not None:
        inputs["version"] = version
    if support is not None:
        inputs["upgradePolicy"] = {"supportType": support}
    return res("aws:eks/cluster:Cluster", "prod", inputs)


@pytest.mark.parametrize(
    ("as_of", "monthly", "warned"),
    [
        (date(2026, 9, 1), 73.0, False),  # 92 days before the end of standard support
        (date(2026, 10, 3), 73.0, True),  # 60 days before
        (date(2026, 11, 30), 73.0, True),
        (date(2026, 12, 2), 73.0, True),  # the last day of standard support
        (date(2026, 12, 3), 438.0, False),
    ],
)
def test_eks_1_34_tier_by_date(as_of: date, monthly: float, warned: bool) -> None:
    cost = price_resources([eks("1.34")], PricingOptions(region="us-east-1", as_of=as_of))
    assert cost["monthly"] == monthly and cost["as_of"] == as_of.isoformat()
    expected = (
        f"prod: Kubernetes 1.34 leaves EKS standard support on 2026-12-02 "
        f"({date(2026, 12, 2).toordinal() - as_of.toordinal()} days after {as_of.isoformat()}): the control plane "
        "goes from $0.1/h to $0.6/h ($73 to $438 a month) (Amazon EKS Kubernetes release calendar "
        "(docs.aws.amazon.com/eks, kubernetes-versions))"
    )
    assert cost["warnings"] == ([expected] if warned else [])


def test_eks_extended_end_and_standard_policy() -> None:
    ext = price_resources([eks("1.31")], PricingOptions(region="us-east-1", as_of=date(2026, 10, 15)))
    assert ext["monthly"] == 438.0
    assert ext["warnings"][0].startswith("prod: Kubernetes 1.31 leaves EKS extended support on 2026-11-26")
    std = price_resources([eks("1.29", "STANDARD")], PricingOptions(region="us-east-1", as_of=date(2026, 10, 15)))
    assert std["monthly"] == 73.0 and std["warnings"] == []


def test_eks_without_version_gets_the_default_version() -> None:
    cost = price_resources([eks(None)], US)
    (item,) = cost["items"]
    assert (item["quantity"], item["max_quantity"], item["monthly"], item["monthly_ceiling"]) == (1, 6, 73.0, 438.0)
    assert "the default version available in EKS" in item["rate_source"]
    assert cost["warnings"][0].startswith("prod: no version given, so EKS picks its default version")
    std = price_resources([eks(None, "STANDARD")], US)
    assert std["monthly_ceiling"] == 73.0 and std["warnings"] == []


def test_eks_logs_and_container_insights_are_listed_with_units() -> None:
    cost = price_resources(
        [
            eks("1.35", enabledClusterLogTypes=["api", "audit"]),
            res("aws:eks/addon:Addon", "cw", {"addonName": "amazon-cloudwatch-observability"}),
            res("aws:eks/addon:Addon", "cni", {"addonName": "vpc-cni"}),
        ],
        US,
    )
    assert [(u["urn"].rsplit("::", 1)[1], u["unit"]) for u in cost["unpriced"]] == [
        ("prod", "GB ingested"),
        ("cw", "observations / metrics / GB ingested"),
    ]
    assert "control plane logs (api, audit)" in cost["unpriced"][0]["reason"]


# --- storage, keys -----------------------------------------------------------------------------------------------


def test_gp3_and_io2_provisioned_performance() -> None:
    cost = price_resources(
        [
            res("aws:ebs/volume:Volume", "fast", {"size": 500.0, "type": "gp3", "iops": 6000.0, "throughput": 500.0}),
            res("aws:ebs/volume:Volume", "base", {"size": 100.0, "type": "gp3", "iops": 3000.0, "throughput": 125.0}),
            res("aws:ebs/volume:Volume", "db", {"size": 100.0, "type": "io2", "iops": 10000.0}),
        ],
        US,
    )
    assert [(i["name"], i["unit"], i["quantity"], i["monthly"]) for i in cost["items"]] == [
        ("fast", "GiB-month", 500, 40.0),
        ("fast gp3 IOPS above 3,000", "IOPS-month", 3000, 15.0),
        ("fast gp3 throughput above 125 MB/s", "MBps-month", 375, 15.0),
        ("base", "GiB-month", 100, 8.0),
        ("db", "GiB-month", 100, 12.5),
        ("db io2 provisioned IOPS", "IOPS-month", 10000, 650.0),
    ]


def test_launch_template_root_volume_throughput_scales_with_nodes() -> None:
    lt = res(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "lt",
        {"blockDeviceMappings": [{"ebs": {"volumeSize": 200.0, "volumeType": "gp3", "throughput": 250.0}}]},
    )
    ng = res(
        "aws:eks/nodeGroup:NodeGroup",
        "ng",
        {"instanceTypes": ["g5.xlarge"], "scalingConfig": {"desiredSize": 2.0, "maxSize": 4.0},
         "launchTemplate": {"id": UNKNOWN}},
        {"launchTemplate": [lt["urn"]]},
    )  # fmt: skip
    cost = price_resources([lt, ng], US)
    assert [(i["name"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"]) for i in cost["items"]][
        1:
    ] == [
        ("ng root volumes (gp3)", 400, 800, 32.0, 64.0),
        ("ng root volumes gp3 throughput above 125 MB/s", 250, 500, 10.0, 20.0),
    ]


def test_kms_rotation_adds_two_billed_key_versions_to_the_ceiling() -> None:
    cost = price_resources([res("aws:kms/key:Key", "k", {"enableKeyRotation": True})], US)
    assert [
        (i["name"], i["quantity"], i["max_quantity"], i["monthly"], i["monthly_ceiling"]) for i in cost["items"]
    ] == [
        ("k", 1, 1, 1.0, 1.0),
        ("k rotated key versions", 0, 2, 0.0, 2.0),
    ]
    replica = price_resources([res("aws:kms/replicaKey:ReplicaKey", "r", {})], US)
    assert replica["monthly"] == 1.0


def test_fsx_backups_are_listed_with_their_unit() -> None:
    fs = res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fs",
        {"storageCapacity": 1200.0, "deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": 125.0,
         "automaticBackupRetentionDays": 7.0},
    )  # fmt: skip
    cost = price_resources([fs], US)
    assert cost["monthly"] == 174.0
    assert cost["unpriced"] == [
        {
            "urn": fs["urn"],
            "reason": "usage-billed: automatic daily backups kept 7 days are billed by backup storage ($0.05/GB-month "
            "in us-east-1, incremental after the first full backup)",
            "unit": "GB-month",
        }
    ]


# --- paths the old tests missed ----------------------------------------------------------------------------------


def test_launch_configuration_groups() -> None:
    lc = res("aws:ec2/launchConfiguration:LaunchConfiguration", "lc", {"instanceType": "g5.xlarge"})
    spot_lc = res(
        "aws:ec2/launchConfiguration:LaunchConfiguration", "slc", {"instanceType": "g5.xlarge", "spotPrice": "0.5"}
    )
    unknown_lc = res("aws:ec2/launchConfiguration:LaunchConfiguration", "ulc", {"instanceType": UNKNOWN})
    asg = "aws:autoscaling/group:Group"
    groups = [
        res(asg, "od", {"minSize": 1.0, "maxSize": 3.0, "launchConfiguration": UNKNOWN},
            {"launchConfiguration": [lc["urn"]]}),
        res(asg, "sp", {"desiredCapacity": 2.0, "maxSize": 2.0, "launchConfiguration": UNKNOWN},
            {"launchConfiguration": [spot_lc["urn"]]}),
        res(asg, "un", {"minSize": 1.0, "maxSize": 1.0, "launchConfiguration": UNKNOWN},
            {"launchConfiguration": [unknown_lc["urn"]]}),
        res(asg, "none", {"minSize": 1.0, "maxSize": 1.0}),
    ]  # fmt: skip
    cost = price_resources([lc, spot_lc, unknown_lc, *groups], US)
    s = spot_estimate("g5.xlarge")
    assert rows(cost) == [
        ("g5.xlarge", "on-demand", 1, 3, 1.006, 734.38, 2203.14),
        ("g5.xlarge", "spot", 2, 2, s, round(2 * s * 730, 2), round(2 * s * 730, 2)),
    ]
    assert [u["reason"] for u in cost["unpriced"]] == [
        "the launch configuration's instanceType is unknown at preview",
        "no launch template or launch configuration found for the group",
    ]


def test_attribute_based_overrides_weighted_capacity_and_spot_without_price() -> None:
    asg = "aws:autoscaling/group:Group"
    abis = res(asg, "abis", {"desiredCapacity": 1.0, "maxSize": 2.0, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceRequirements": {"vcpuCount": {"min": 4.0}}}]}}})  # fmt: skip
    weighted = res(asg, "w", {"desiredCapacity": 4.0, "maxSize": 8.0, "mixedInstancesPolicy": {
        "instancesDistribution": {"onDemandBaseCapacity": 0.0, "onDemandPercentageAboveBaseCapacity": 50.0},
        "launchTemplate": {"overrides": [{"instanceType": "g6e.12xlarge", "weightedCapacity": "2"}]}}})  # fmt: skip
    cpu_spot = res("aws:eks/nodeGroup:NodeGroup", "cs", {"capacityType": "SPOT", "instanceTypes": ["m7i.xlarge"],
                   "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}})  # fmt: skip
    cost = price_resources([abis, weighted, cpu_spot], US)
    g, s = od("g6e.12xlarge"), spot_estimate("g6e.12xlarge")
    # 4 units at 50 %: 2 On-Demand units = 1 node of weight 2, 1 spot node; 8 units: 2 and 2.
    assert rows(cost) == [
        ("g6e.12xlarge", "on-demand", 1, 2, g, round(g * 730, 2), round(2 * g * 730, 2)),
        ("g6e.12xlarge", "spot", 1, 2, s, round(s * 730, 2), round(2 * s * 730, 2)),
    ]
    assert [u["reason"] for u in cost["unpriced"]] == [
        "instance type unknown: overrides use instanceRequirements (types are chosen at launch)",
        "no spot price for m7i.xlarge in us-east-1: CPU spot prices are not estimated; run `gpucloud prices "
        "refresh --region us-east-1 --types m7i.xlarge`",
    ]


def test_unknown_sizes_and_types() -> None:
    cost = price_resources(
        [
            res("aws:ec2/instance:Instance", "a", {"instanceType": "p5.96xlarge"}),
            res("aws:ec2/instance:Instance", "b", {"instanceType": "x2iedn.32xlarge"}),
            res("aws:ec2/instance:Instance", "c",
                {"instanceType": "trn2.48xlarge", "instanceMarketOptions": {"marketType": "spot"}}),
        ],
        US,
    )  # fmt: skip
    assert [u["reason"] for u in cost["unpriced"]] == [
        "'p5.96xlarge' is not an EC2 instance type",
        "x2iedn.32xlarge is not in the gpucloud catalog or the cost rate table; run `gpucloud prices refresh "
        "--region us-east-1 --types x2iedn.32xlarge` to price it",
        "trn2.48xlarge in us-east-1: no On-Demand SKU in the us-east-1, us-east-2 or us-west-2 price feeds: sold "
        "through Capacity Blocks only",
    ]


def test_fixed_price_items_carry_quantity_and_ceiling() -> None:
    cost = price_resources(
        [
            res("aws:ec2/natGateway:NatGateway", "nat", {}),
            res("aws:ec2/eip:Eip", "ip", {}),
            res("aws:ec2/vpcEndpoint:VpcEndpoint", "ep", {"vpcEndpointType": "Interface", "subnetIds": ["a", "b"]}),
            res("aws:ec2/vpcEndpoint:VpcEndpoint", "gw", {}),
            res("aws:ec2/vpcEndpoint:VpcEndpoint", "gwlb", {"vpcEndpointType": "GatewayLoadBalancer"}),
        ],
        US,
    )
    assert [(i["name"], i["quantity"], i["max_quantity"], i["unit_price"], i["monthly"], i["monthly_ceiling"],
             i["rate_as_of"]) for i in cost["items"]] == [
        ("nat", 1, 1, 0.045, 32.85, 32.85, "2025-06-01"),
        ("ip", 1, 1, 0.005, 3.65, 3.65, "2024-02-01"),
        ("ep", 2, 2, 0.01, 14.6, 14.6, "2025-06-01"),
    ]  # fmt: skip
    assert (cost["monthly"], cost["monthly_ceiling"]) == (51.1, 51.1)
    assert cost["unpriced"][-1]["reason"] == "GatewayLoadBalancer endpoint: type or subnets unknown at preview"


def test_pricing_config_as_of() -> None:
    from gpucloud.cost import PricingConfigError

    assert PricingOptions.from_config({"asOf": "2026-12-15"}).as_of == date(2026, 12, 15)
    with pytest.raises(PricingConfigError, match=r"gpucloud:pricing\.asOf: 'soon' is not an ISO date"):
        PricingOptions.from_config({"asOf": "soon"})


def test_cli_as_of_rejects_a_bad_date(capsys: Any) -> None:
    from gpucloud.cli import main

    assert main(["plan", "--stack", "dev", "--as-of", "15/12/2026"]) == 2
    assert "--as-of '15/12/2026' is not a date; give YYYY-MM-DD" in capsys.readouterr().err


def test_gpu_labels_exclude_types_without_gpus_and_unknown_labels_admit() -> None:
    reqs = [
        types_in("g5.xlarge", "inf2.xlarge", "m7i.xlarge"),
        {"key": "karpenter.k8s.aws/instance-gpu-manufacturer", "operator": "In", "values": ["nvidia"]},
        {"key": "example.com/team", "operator": "In", "values": ["ml"]},
    ]
    cost = price_resources([pool("p", reqs, {"cpu": "16"}, expected=1)], US)
    assert [r[:4] for r in rows(cost)] == [("g5.xlarge", "on-demand", 1, 4)]
    no_gpu = [
        types_in("g5.xlarge", "m7i.xlarge"),
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"},
    ]
    cpu_only = price_resources([pool("c", no_gpu, {"cpu": "16"}, expected=1)], US)
    assert [r[:4] for r in rows(cpu_only)] == [("m7i.xlarge", "on-demand", 1, 0)]
    # m7i.xlarge has no spec in the catalog, so a cpu limit cannot bound it: the ceiling is unbounded.
    assert cpu_only["ceiling_unbounded"] is True
    sized = [types_in("m7i.xlarge"), {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["2"]}]
    assert rows(price_resources([pool("s", sized, None, expected=1)], US))[0][:3] == ("m7i.xlarge", "on-demand", 1)


def test_commitments_use_the_regions_published_1y_rate_and_the_family_3y_discount() -> None:
    ng = res("aws:eks/nodeGroup:NodeGroup", "ng", {"instanceTypes": ["g5.12xlarge"],
                                                   "scalingConfig": {"desiredSize": 1.0, "maxSize": 1.0}})  # fmt: skip
    one = PricingOptions.from_config({"commitments": [{"match": "g5", "kind": "ri", "term": "1y"}]})
    three = PricingOptions.from_config({"commitments": [{"match": "g5", "term": "3y"}]})
    eu1 = price_resources([ng], PricingOptions(commitments=one.commitments, region="eu-west-1"))
    eu3 = price_resources([ng], PricingOptions(commitments=three.commitments, region="eu-west-1"))
    ri_1y = SNAP["regions"]["eu-west-1"]["g5.12xlarge"]["reserved_1y"]["usd"]
    three_y = round(od("g5.12xlarge", "eu-west-1") * (1 - get_catalog().family_pricing("g5").reserved_3y), 6)
    assert (eu1["items"][0]["pricing"], eu1["items"][0]["unit_price"]) == ("reserved", ri_1y)
    assert eu1["items"][0]["rate_source"] == "vantage+1y ri"
    assert (eu3["items"][0]["pricing"], eu3["items"][0]["unit_price"]) == ("reserved", three_y)


def test_instances_read_type_and_market_from_their_launch_template() -> None:
    lt = res("aws:ec2/launchTemplate:LaunchTemplate", "lt",
             {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}})  # fmt: skip
    plain = res("aws:ec2/launchTemplate:LaunchTemplate", "plain", {"instanceType": "g5.2xlarge"})
    from_lt = res(
        "aws:ec2/instance:Instance", "a", {"launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [lt["urn"]]}
    )
    od_lt = res(
        "aws:ec2/instance:Instance", "b", {"launchTemplate": {"id": UNKNOWN}}, {"launchTemplate": [plain["urn"]]}
    )
    spot_req = res("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "c", {"instanceType": "g5.xlarge"})
    direct = res("aws:ec2/instance:Instance", "d",
                 {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}})  # fmt: skip
    cost = price_resources([lt, plain, from_lt, od_lt, spot_req, direct], US)
    s = spot_estimate("g5.xlarge")
    assert [(i["name"], i["instance_type"], i["pricing"], i["unit_price"]) for i in cost["items"]] == [
        ("a", "g5.xlarge", "spot", s),
        ("b", "g5.2xlarge", "on-demand", 1.212),
        ("c", "g5.xlarge", "spot", s),
        ("d", "g5.xlarge", "spot", s),
    ]


def test_exact_reasons_for_reservations_addons_and_volumes() -> None:
    cr = res(
        "aws:ec2/capacityReservation:CapacityReservation",
        "cr",
        {"instanceType": "p5.48xlarge", "instanceCount": UNKNOWN},
    )
    cbr = res("aws:ec2/capacityBlockReservation:CapacityBlockReservation", "cbr", {})
    cw = res("aws:eks/addon:Addon", "cw", {"addonName": "amazon-cloudwatch-observability"})
    vol = res("aws:ebs/volume:Volume", "v", {"size": UNKNOWN, "type": "gp3"})
    gw = res("aws:ec2/vpcEndpoint:VpcEndpoint", "gw", {"subnetIds": ["a"]})
    cost = price_resources([cr, cbr, cw, vol, gw], US)
    assert cost["items"] == []
    assert cost["unpriced"] == [
        {"urn": cr["urn"], "reason": "instanceType/instanceCount are unknown at preview"},
        {
            "urn": cbr["urn"],
            "reason": "Capacity Block purchase: the whole fee (the offering's UpfrontFee) is charged up front at "
            "purchase; node groups running in the block are priced at the catalog's Capacity Block rate",
        },
        {
            "urn": cw["urn"],
            "reason": "usage-billed: Container Insights (amazon-cloudwatch-observability) is billed per observation "
            "or custom metric sent and by the GB of performance logs ingested into CloudWatch Logs",
            "unit": "observations / metrics / GB ingested",
        },
        {"urn": vol["urn"], "reason": "size/type are unknown at preview (or the volume comes from a snapshot)"},
    ]


def test_karpenter_edge_cases() -> None:
    zero = price_resources([pool("z", [types_in("g5.xlarge")], {"nvidia.com/gpu": "0", "memory": "0Gi"}, 0)], US)
    assert rows(zero) == [("g5.xlarge", "on-demand", 0, 0, 1.006, 0.0, 0.0)] and zero["ceiling_unbounded"] is False
    six = ["g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.16xlarge", "g5.12xlarge"]
    many = price_resources([pool("m", [types_in(*six)], None, 0)], US)
    assert many["unbounded"][0]["reason"].startswith(
        "UNBOUNDED CEILING: Karpenter GPU NodePool m sets no limits that bound g5.12xlarge, g5.16xlarge, g5.2xlarge, "
        "g5.4xlarge, g5.8xlarge ...: it can"
    )
    five = price_resources([pool("f", [types_in(*six[:5])], None, 0)], US)
    assert "g5.xlarge: it can launch" in five["unbounded"][0]["reason"]
    cpu_mem = price_resources([pool("c", [types_in("m7i.xlarge")], {"memory": "64Gi"}, 0)], US)
    assert cpu_mem["ceiling_unbounded"] is True
    neuron = price_resources([pool("n", [types_in("inf2.xlarge")], {"aws.amazon.com/neuron": "2"}, 0)], US)
    assert rows(neuron)[0][:4] == ("inf2.xlarge", "on-demand", 0, 2)
    wrong_device = price_resources([pool("w", [types_in("inf2.xlarge")], {"nvidia.com/gpu": "2"}, 0)], US)
    assert wrong_device["ceiling_unbounded"] is True
    reserved = price_resources([pool("r", [capacity("reserved"), types_in("g5.xlarge")], {"cpu": "4"}, 1)], US)
    assert rows(reserved) == [("g5.xlarge", "on-demand", 1, 1, 1.006, 734.38, 734.38)]
    spot = price_resources([pool("s", [capacity("spot"), types_in("g5.xlarge")], {"cpu": "4"}, 1)], US)
    assert [(i["pricing"], i["rate_source"]) for i in spot["items"]] == [("spot", "vantage+family-spot-discount")]


def test_karpenter_requirement_parsing() -> None:
    reqs = [
        None,
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": ["g6e.xlarge", UNKNOWN, "g6e.12xlarge"],
        },
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["l40s"]},
        {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gt", "values": ["200000"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": []},
    ]
    cost = price_resources([pool("p", reqs, {"nvidia.com/gpu": "8"}, 1)], US)
    assert [r[:4] for r in rows(cost)] == [("g6e.12xlarge", "on-demand", 1, 2)]
    not_in = [
        types_in("m7i.xlarge"),
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "NotIn", "values": ["1"]},
    ]
    assert rows(price_resources([pool("n", not_in, None, 1)], US))[0][0] == "m7i.xlarge"
    bad = price_resources([pool("b", [types_in("p9.a", "p9.b", "p9.c", "p9.d")], {"cpu": "8"}, 1)], US)
    assert bad["unpriced"][0]["reason"] == (
        "Karpenter NodePool admits no instance type gpucloud can price in us-east-1: 'p9.a' is not an EC2 instance "
        "type; 'p9.b' is not an EC2 instance type; 'p9.c' is not an EC2 instance type"
    )


def test_groups_and_volumes_edge_cases() -> None:
    asg = "aws:autoscaling/group:Group"
    lt_unknown = res("aws:ec2/launchTemplate:LaunchTemplate", "ltu", {"instanceType": UNKNOWN})
    mappings = [None, {"ebs": {"volumeSize": 100.0, "volumeType": "gp3"}}]
    lt_vol = res(
        "aws:ec2/launchTemplate:LaunchTemplate", "ltv", {"instanceType": "g5.xlarge", "blockDeviceMappings": mappings}
    )
    resources = [
        lt_unknown,
        lt_vol,
        res(asg, "sizes", {"maxSize": UNKNOWN}),
        res(asg, "ltu", {"desiredCapacity": 1.0, "maxSize": 1.0, "launchTemplate": {"id": UNKNOWN}},
            {"launchTemplate": [lt_unknown["urn"]]}),
        res(asg, "ext", {"desiredCapacity": 1.0, "maxSize": 1.0, "launchTemplate": {"id": "lt-0abc"}}),
        {**res(asg, "vol", {"desiredCapacity": 2.0, "maxSize": 3.0, "launchTemplate": {"id": UNKNOWN}}),
         "propertyDependencies": None, "property_dependencies": {"launchTemplate": [lt_vol["urn"]]}},
        res(asg, "pct", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": {
            "instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 150.0}}}),
        res(asg, "noprice", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": {
            "launchTemplate": {"overrides": [{"instanceType": "p5e.48xlarge"}]}}}),
        res(asg, "ltmix", {"desiredCapacity": 1.0, "maxSize": 1.0, "mixedInstancesPolicy": {
            "launchTemplate": {"launchTemplateSpecification": {"launchTemplateId": UNKNOWN}}}},
            {"mixedInstancesPolicy": [lt_unknown["urn"]]}),
        res("aws:fsx/lustreFileSystem:LustreFileSystem", "fs3", {"storageCapacity": 1200.0, "deploymentType":
            "PERSISTENT_2", "perUnitStorageThroughput": 300.0}),
        res("aws:fsx/lustreFileSystem:LustreFileSystem", "hdd", {"storageCapacity": 6000.0, "deploymentType":
            "PERSISTENT_1", "perUnitStorageThroughput": 12.0, "storageType": "HDD"}),
        res("aws:ebs/volume:Volume", "gp2", {"size": 100.0, "type": "gp2", "iops": 300.0}),
    ]  # fmt: skip
    cost = price_resources(resources, US)
    assert [(i["name"], i["quantity"], i["max_quantity"], i["monthly"]) for i in cost["items"]] == [
        ("vol", 2, 3, round(2 * 1.006 * 730, 2)),
        ("vol root volumes (gp3)", 200, 300, 16.0),
        ("hdd", 6000, 6000, 150.0),
        ("gp2", 100, 100, 10.0),
    ]
    assert [u["reason"] for u in cost["unpriced"]] == [
        "desiredCapacity/minSize/maxSize are unknown at preview",
        "the launch template's instanceType is unknown at preview",
        "instance type unknown: launch template lt-0abc is not in this program, so its instance type is unknown",
        "instancesDistribution base/percentage are unknown at preview or out of range",
        "instance type unknown: no price for override p5e.48xlarge",
        "instance type unknown: no instance type in the overrides or the launch template",
        "no FSx for Lustre rate for PERSISTENT_2 SSD at 300 MB/s/TiB",
    ]
