"""The versions table: its shape and sources, agreement with the EKS calendar the cost engine bills by, and
`gpucloud versions refresh` through botocore's Stubber (no network)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpucloud import versions
from gpucloud.cli import main
from gpucloud.prices.rates import EKS_CALENDAR
from gpucloud.versions.refresh import refresh

CORE = {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent", "eks-node-monitoring-agent"}


def test_every_minor_pins_the_core_addons_the_al2023_release_of_its_minor_and_its_autoscaler() -> None:
    assert versions.minors() == ("1.32", "1.33", "1.34", "1.35", "1.36")
    for minor in versions.minors():
        row = versions.for_minor(minor)
        assert {a for a, b in row.addons.items() if b.version} >= CORE
        assert versions.minor_of(row.ami["al2023"].version) == minor
        assert row.addons["kube-proxy"].version.startswith(f"v{minor}.")
        assert "cluster-autoscaler" in row.charts


# Sourced builds of the storage and observability add-ons (awslabs/cdk-eks-blueprints versionMaps, eks.json
# `sources`): pinned where a source pairs the build with the minor, unpinned (None) where none does.
SOURCED = {
    "aws-ebs-csi-driver": {
        "1.32": "v1.56.0-eksbuild.1",
        "1.33": "v1.56.0-eksbuild.1",
        "1.34": "v1.56.0-eksbuild.1",
        "1.35": "v1.57.1-eksbuild.1",
        "1.36": None,
    },
    "amazon-cloudwatch-observability": {
        "1.32": "v4.10.1-eksbuild.1",
        "1.33": "v4.10.1-eksbuild.1",
        "1.34": "v4.10.1-eksbuild.1",
        "1.35": "v5.3.1-eksbuild.1",
        "1.36": None,
    },
    "aws-fsx-csi-driver": dict.fromkeys(("1.32", "1.33", "1.34", "1.35", "1.36")),
}


@pytest.mark.parametrize("addon", sorted(SOURCED))
def test_storage_and_observability_addons_are_pinned_only_where_a_source_pairs_build_and_minor(addon: str) -> None:
    table = {m: versions.for_minor(m).addons[addon] for m in versions.minors()}
    assert {m: b.version for m, b in table.items()} == SOURCED[addon]
    for minor, build in table.items():
        # A sourced pin is confirmed for its minor (no plan warning); an unsourced one is no pin at all.
        assert build.verified is (build.version is not None), minor
        assert build.compatible == ((build.version,) if build.version else ()), minor
        assert versions.addon_build(minor, addon) == SOURCED[addon][minor]
    doc = json.loads(versions.SNAPSHOT.read_text())
    assert "cdk-eks-blueprints" in doc["sources"][addon] or "no sourced build" in doc["sources"][addon]


def test_the_cost_engine_bills_by_the_versions_tables_calendar() -> None:
    # One copy: the `calendar` section of eks.json, older minors included; 1.36 has no sourced dates yet.
    calendar = versions.support_calendar()
    assert sorted(calendar, key=versions.minor_key) == [f"1.{m}" for m in range(28, 37)]
    assert EKS_CALENDAR["1.28"] == ("2023-09-26", "2024-11-26", "2025-11-26")
    assert EKS_CALENDAR["1.34"] == ("2025-10-06", "2026-12-02", "2027-12-02")
    assert EKS_CALENDAR["1.35"] == ("2026-01-28", "2027-03-27", "2028-03-27")
    assert "1.36" not in EKS_CALENDAR
    assert calendar["1.36"] == versions.SupportDates("1.36", None, None, None)
    for minor in versions.minors():
        row = versions.for_minor(minor)
        assert (row.released, row.end_of_standard_support) == (
            calendar[minor].released,
            calendar[minor].end_of_standard_support,
        )
    doc = json.loads(versions.SNAPSHOT.read_text())
    assert all("released" not in row for row in doc["minors"].values())
    assert "no source consulted" in doc["calendar"]["1.36"]["unsourced"]


def test_support_tiers_on_1_34s_last_day_of_standard_support() -> None:
    # 2026-12-02 is 1.34's end of standard support date: still standard (extended starts past it).
    day = date(2026, 12, 2)
    assert [versions.for_minor(m).support_on(day) for m in versions.minors()] == [
        "extended",
        "extended",
        "standard",
        "standard",
        "unknown",  # 1.36: no sourced dates
    ]


@pytest.mark.parametrize(
    ("day", "tier", "extended_price"),
    [
        (date(2026, 12, 1), "standard", False),  # the day before the end of standard support
        (date(2026, 12, 2), "standard", False),  # the end of standard support date itself
        (date(2026, 12, 3), "extended", True),  # the day after
        (date(2027, 12, 2), "extended", True),  # the end of extended support date itself
        (date(2027, 12, 3), "unsupported", True),
    ],
)
def test_the_calendar_boundary_day_is_one_rule_for_tiers_and_prices(day: date, tier: str, extended_price: bool) -> None:
    from gpucloud.prices import rates

    row = versions.for_minor("1.34")
    assert (row.end_of_standard_support, row.end_of_extended_support) == ("2026-12-02", "2027-12-02")
    assert row.support_on(day) == tier
    assert rates.eks_in_extended_support("1.34", day) is extended_price


def page(addon: str, builds: list[tuple[str, list[tuple[str, bool]]]]) -> dict[str, Any]:
    return {
        "addons": [
            {
                "addonName": addon,
                "type": "networking",
                "addonVersions": [
                    {
                        "addonVersion": build,
                        "architecture": ["amd64"],
                        "compatibilities": [
                            {"clusterVersion": cv, "defaultVersion": default, "platformVersions": ["*"]}
                            for cv, default in compat
                        ],
                    }
                    for build, compat in builds
                ],
            }
        ]
    }


# What the stubbed DescribeAddonVersions answers for 1.36 for the add-ons the snapshot leaves unpinned there.
REFRESHED = {
    "aws-ebs-csi-driver": "v1.60.0-eksbuild.1",
    "aws-fsx-csi-driver": "v1.9.0-eksbuild.1",
    "amazon-cloudwatch-observability": "v5.6.0-eksbuild.1",
}


def test_refresh_reads_every_page_and_writes_a_table_that_loads(tmp_path: Path) -> None:
    eks = boto3.client("eks", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(eks)
    source = json.loads(versions.SNAPSHOT.read_text())
    source["minors"] = {"1.36": source["minors"]["1.36"]}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(source))
    for addon in sorted(source["minors"]["1.36"]["addons"]):
        params = {"addonName": addon, "kubernetesVersion": "1.36"}
        if addon == "vpc-cni":
            first = page(addon, [("v1.21.0-eksbuild.2", [("1.36", False)]), ("v1.20.9-eksbuild.1", [("1.35", True)])])
            stub.add_response("describe_addon_versions", {**first, "nextToken": "t2"}, params)
            second = page(addon, [("v1.21.1-eksbuild.1", [("1.36", True), ("1.35", False)])])
            stub.add_response("describe_addon_versions", second, {**params, "nextToken": "t2"})
        elif addon in REFRESHED:
            # The add-ons the snapshot leaves unpinned on 1.36 get their build from the refresh like any other.
            stub.add_response("describe_addon_versions", page(addon, [(REFRESHED[addon], [("1.36", True)])]), params)
        else:
            stub.add_response("describe_addon_versions", {"addons": []}, params)
    out = tmp_path / "out.json"
    with stub:
        result = refresh(src, out, clients=lambda service, region: eks, now=datetime(2026, 12, 1, tzinfo=UTC))
    stub.assert_no_pending_responses()
    written = json.loads(out.read_text())
    vpc = written["minors"]["1.36"]["addons"]["vpc-cni"]
    assert vpc == {
        "version": "v1.21.1-eksbuild.1",
        "verified": True,
        "compatible": ["v1.21.1-eksbuild.1", "v1.21.0-eksbuild.2"],
        "complete": True,
    }
    # An add-on EKS does not offer for the minor: no build, so the plan warns instead of pinning a guess.
    assert written["minors"]["1.36"]["addons"]["coredns"]["version"] is None
    for addon, build in REFRESHED.items():
        assert written["minors"]["1.36"]["addons"][addon] == {
            "version": build,
            "verified": True,
            "compatible": [build],
            "complete": True,
        }
        assert result["changed"]["1.36"][addon] == build
    assert result["changed"]["1.36"]["vpc-cni"] == "v1.21.1-eksbuild.1"
    assert written["assembled"] == "2026-12-01"
    assert versions.parse(written, "out.json")["1.36"].addons["vpc-cni"].complete is True
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_refresh_of_an_unknown_minor_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["versions", "refresh", "--minor", "1.29", "--out", str(tmp_path / "x.json")])
    assert code == 2
    assert "the versions table carries no Kubernetes ['1.29']" in capsys.readouterr().err


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["versions", "show", "--as-of", "2026-12-02", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(m["minor"], m["support"]) for m in shown["minors"]][3] == ("1.35", "standard")
    assert shown["minors"][4]["charts"]["cluster-autoscaler"] == "9.59.0 (image v1.36.1)"
