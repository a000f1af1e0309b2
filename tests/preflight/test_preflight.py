"""Preflight against a moto server (STS, offerings, instance types, SSM) with botocore Stubber for what moto does
not implement (Service Quotas listing, spot placement scores, capacity reservations, Capacity Block offerings)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from gpucloud import aws as aws_mod
from gpucloud.cli import main
from gpucloud.preflight.checks import parse_quotas, pool_markets, quota_for, run_preflight
from gpucloud.spec import parse_platform

ROOT = Path(__file__).resolve().parents[2]
CB_ID = "cr-0a1b2c3d4e5f60789"
# The pinned release's own parameter (versions table: 1.35 -> 1.35.6-20260714), never `recommended`.
AL2023_NVIDIA = (
    "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/"
    "amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260714/image_id"
)

QUOTAS = [
    ("Running On-Demand P instances", "L-417A185B", 1536.0),
    ("Running On-Demand G and VT instances", "L-DB2E81BA", 256.0),
    ("Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", "L-1216C47A", 1152.0),
    ("All P4, P3 and P2 Spot Instance Requests", "L-7212CCBC", 0.0),
    ("All P5 Spot Instance Requests", "L-C4BD4855", 384.0),
    ("All G and VT Spot Instance Requests", "L-3819A6DF", 512.0),
    ("Running On-Demand Trn instances", "L-2C3B7624", 0.0),
]


def quota_page() -> dict[str, Any]:
    return {
        "Quotas": [
            {
                "ServiceCode": "ec2",
                "ServiceName": "Amazon EC2",
                "QuotaName": n,
                "QuotaCode": c,
                "Value": v,
                "Unit": "None",
            }
            for n, c, v in QUOTAS
        ]
    }


class Hybrid:
    """Routes the named operations to a stubbed client and everything else to the real (moto) one."""

    def __init__(self, real: Any, stubbed: Any, ops: set[str]) -> None:
        self._real, self._stubbed, self._ops = real, stubbed, ops

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stubbed if name in self._ops else self._real, name)


def prod_spec() -> Any:
    from gpucloud.plan.engine import Project

    data = Project(ROOT).config("prod")["gpucloud:platform"]
    # The stubbed responses below were recorded for an all-on-demand H100 pool; pin that shape so these tests
    # follow the preflight logic, not later edits of the shipped prod stack.
    data["nodePools"][0]["capacity"] = {"onDemandBase": 2, "onDemandPercentageAboveBase": 100}
    return parse_platform(data)


def make_factory(endpoint: str, *, block_state: str = "active", ssm_ok: bool = False) -> tuple[Any, list[Stubber]]:
    stubbers: list[Stubber] = []
    quotas = boto3.client("service-quotas", region_name="us-east-1", endpoint_url=endpoint)
    sq = Stubber(quotas)
    sq.add_response("list_service_quotas", quota_page(), {"ServiceCode": "ec2"})
    sq.activate()
    stubbers.append(sq)
    ec2_stub_client = boto3.client("ec2", region_name="us-east-1", endpoint_url=endpoint)
    es = Stubber(ec2_stub_client)
    es.add_response(
        "get_spot_placement_scores",
        {"SpotPlacementScores": [
            {"Region": "us-east-1", "AvailabilityZoneId": "use1-az6", "Score": 8},
            {"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 3},
            {"Region": "us-east-1", "AvailabilityZoneId": "use1-az4", "Score": 9},
        ]},
        {"InstanceTypes": ["g6e.12xlarge", "g6e.24xlarge", "g6e.16xlarge"], "TargetCapacity": 5,
         "TargetCapacityUnitType": "units", "SingleAvailabilityZone": True, "RegionNames": ["us-east-1"]},
    )  # fmt: skip
    es.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [{
            "CapacityReservationId": CB_ID, "InstanceType": "p5en.48xlarge", "AvailabilityZone": "us-east-1a",
            "TotalInstanceCount": 4, "State": block_state, "ReservationType": "capacity-block",
            "EndDate": datetime(2026, 9, 1, 11, 30, tzinfo=UTC)}]},
        {"CapacityReservationIds": [CB_ID]},
    )  # fmt: skip
    es.activate()
    stubbers.append(es)
    ssm_client: Any = None
    if ssm_ok:
        ssm_client = boto3.client("ssm", region_name="us-east-1", endpoint_url=endpoint)
        ss = Stubber(ssm_client)
        names = [AL2023_NVIDIA]
        ss.add_response(
            "get_parameters",
            {"Parameters": [{"Name": names[0], "Type": "String", "Value": "ami-0123456789abcdef0", "Version": 1}]},
            {"Names": names},
        )  # fmt: skip
        ss.activate()
        stubbers.append(ss)

    def factory(service: str, region: str) -> Any:
        if service == "service-quotas":
            return quotas
        real = boto3.client(service, region_name=region, endpoint_url=endpoint)  # type: ignore[call-overload]
        if service == "ec2":
            return Hybrid(
                real,
                ec2_stub_client,
                {"get_spot_placement_scores", "describe_capacity_reservations", "describe_capacity_block_offerings"},
            )
        if service == "ssm" and ssm_client is not None:
            return ssm_client
        return real

    return factory, stubbers


def statuses(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["check"], c["subject"]): c["status"] for c in report["checks"]}


def test_quota_lookup_by_name_p5_spot_has_its_own() -> None:
    quotas = parse_quotas(quota_page()["Quotas"])
    assert quota_for(quotas, "spot", "p5en.48xlarge").code == "L-C4BD4855"  # type: ignore[union-attr]
    assert quota_for(quotas, "spot", "p4d.24xlarge").code == "L-7212CCBC"  # type: ignore[union-attr]
    assert quota_for(quotas, "on-demand", "p5.48xlarge").code == "L-417A185B"  # type: ignore[union-attr]
    assert quota_for(quotas, "on-demand", "g6e.12xlarge").code == "L-DB2E81BA"  # type: ignore[union-attr]
    assert quota_for(quotas, "on-demand", "m7i.xlarge").code == "L-1216C47A"  # type: ignore[union-attr]
    assert quota_for(quotas, "on-demand", "trn1.32xlarge").code == "L-2C3B7624"  # type: ignore[union-attr]
    assert quota_for(quotas, "on-demand", "inf2.xlarge") is None


def test_pool_markets_at_max_size() -> None:
    spec = prod_spec()
    assert [pool_markets(p) for p in spec.node_pools] == [
        {"on-demand": 8, "spot": 0, "capacity-block": 0},
        {"on-demand": 0, "spot": 0, "capacity-block": 4},
        {"on-demand": 7, "spot": 5, "capacity-block": 0},  # base 2 + ceil(10 x 50%) on-demand
    ]


def test_prod_preflight_against_moto(aws_env: str) -> None:
    factory, stubbers = make_factory(aws_env)
    report = run_preflight(prod_spec(), factory)
    for s in stubbers:
        s.assert_no_pending_responses()
    assert report["account"] == "123456789012"
    assert statuses(report) == {
        ("credentials", "123456789012"): "pass",
        ("quota", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances (L-1216C47A)"): "pass",
        ("quota", "Running On-Demand P instances (L-417A185B)"): "pass",
        ("quota", "Running On-Demand G and VT instances (L-DB2E81BA)"): "fail",
        ("quota", "All G and VT Spot Instance Requests (L-3819A6DF)"): "pass",
        ("offering", "train-h100: p5.48xlarge"): "pass",
        ("offering", "train-h200: p5en.48xlarge"): "pass",
        ("offering", "infer-l40s: g6e.12xlarge"): "pass",
        ("spot-score", "infer-l40s: 5 spot x g6e.12xlarge/g6e.24xlarge/g6e.16xlarge"): "pass",
        ("reservation", f"train-h200: {CB_ID}"): "pass",
        ("ami", f"train-h100, train-h200, infer-l40s: {AL2023_NVIDIA}"): "fail",
    }  # fmt: skip
    messages = {c["subject"]: c["message"] for c in report["checks"]}
    assert messages["Running On-Demand G and VT instances (L-DB2E81BA)"] == (
        "need 336 vCPUs at max size (infer-l40s=7xg6e.12xlarge), quota 256 in us-east-1: short by 80 vCPUs; "
        "request an increase in Service Quotas (L-DB2E81BA)"
    )
    assert messages["Running On-Demand P instances (L-417A185B)"].startswith("need 1536 vCPUs at max size")
    assert "best score 8/10 in us-east-1a" in messages["infer-l40s: 5 spot x g6e.12xlarge/g6e.24xlarge/g6e.16xlarge"]
    assert report["summary"] == {"pass": 9, "warn": 0, "fail": 2}
    assert report["ok"] is False


def test_expired_block_fails(aws_env: str) -> None:
    factory, _ = make_factory(aws_env, block_state="expired", ssm_ok=True)
    report = run_preflight(prod_spec(), factory)
    block = next(c for c in report["checks"] if c["check"] == "reservation")
    assert block["status"] == "fail"
    assert (
        block["message"]
        == "p5en.48xlarge x4 in us-east-1a, state expired, ends 2026-09-01 11:30:00+00:00: state is expired"
    )


def pinned_prod_project(tmp_path: Path) -> Path:
    """The prod stack with the pool shapes the stubs were recorded for (see prod_spec), as a project dir."""
    import yaml

    (tmp_path / "stacks").mkdir()
    doc = {
        "config": {
            "aws:region": "us-east-1",
            "gpucloud:platform": prod_spec().model_dump(by_alias=True, exclude_none=True),
        }
    }
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "Pulumi.yaml").write_text(
        yaml.safe_dump(
            {"name": "gpucloud", "runtime": "python", "stackConfigDir": "stacks", "main": str(ROOT / "__main__.py")}
        )
    )
    return tmp_path


def test_cli_preflight_json_exit_3_and_text(
    aws_env: str, monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    project = pinned_prod_project(tmp_path)
    factory, _ = make_factory(aws_env)
    monkeypatch.setattr(aws_mod, "default_clients", factory)
    assert main(["preflight", "--stack", "prod", "--program", str(project), "--format", "json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["schema"] == "gpucloud.preflight/v1" and report["stack"] == "prod"
    assert report["summary"]["fail"] == 2
    factory, _ = make_factory(aws_env, ssm_ok=True)
    monkeypatch.setattr(aws_mod, "default_clients", factory)
    assert main(["preflight", "--stack", "prod", "--program", str(project)]) == 3
    out = capsys.readouterr().out
    assert "FAIL" in out and "10 pass, 0 warn, 1 fail" in out


def test_missing_credentials_is_one_message_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert main(["preflight", "--stack", "prod", "--program", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpucloud: error: preflight credentials: no AWS credentials found")
    assert "Traceback" not in err


def test_access_denied_is_one_message_exit_2(aws_env: str, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    sts = boto3.client("sts", region_name="us-east-1", endpoint_url=aws_env)
    stub = Stubber(sts)
    stub.add_client_error("get_caller_identity", "AccessDenied", "User is not authorized", 403)
    stub.activate()
    monkeypatch.setattr(aws_mod, "default_clients", lambda service, region: sts)
    assert main(["preflight", "--stack", "prod", "--program", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert "AWS denied GetCallerIdentity (AccessDenied: User is not authorized)" in err


def test_unknown_stack_and_bad_program_exit_2(capsys: Any) -> None:
    assert main(["preflight", "--stack", "nope", "--program", str(ROOT)]) == 2
    assert "unknown stack 'nope'" in capsys.readouterr().err
    assert main(["preflight", "--stack", "prod", "--program", "/nonexistent"]) == 2


def test_missing_capacity_block_fails_with_offering_hint(aws_env: str) -> None:
    from gpucloud.preflight.checks import Preflight

    ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=aws_env)
    stub = Stubber(ec2)
    stub.add_client_error("describe_capacity_reservations", "InvalidCapacityReservationId.NotFound", "not found", 400)
    stub.add_response(
        "describe_capacity_block_offerings",
        {"CapacityBlockOfferings": [
            {"CapacityBlockOfferingId": "cbo-1", "InstanceType": "p5en.48xlarge", "AvailabilityZone": "us-east-1a",
             "InstanceCount": 4, "StartDate": datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
             "EndDate": datetime(2026, 12, 2, 11, 30, tzinfo=UTC), "CapacityBlockDurationHours": 24,
             "UpfrontFee": "5272.32", "CurrencyCode": "USD", "Tenancy": "default"},
            {"CapacityBlockOfferingId": "cbo-2", "InstanceType": "p5en.48xlarge", "AvailabilityZone": "us-east-1c",
             "InstanceCount": 4, "StartDate": datetime(2026, 12, 3, 11, 30, tzinfo=UTC),
             "EndDate": datetime(2026, 12, 4, 11, 30, tzinfo=UTC), "CapacityBlockDurationHours": 24,
             "UpfrontFee": "6000.00", "CurrencyCode": "USD", "Tenancy": "default"},
        ]},
        {"InstanceType": "p5en.48xlarge", "InstanceCount": 4, "CapacityDurationHours": 24},
    )  # fmt: skip
    stub.activate()
    pre = Preflight(prod_spec(), lambda service, region: ec2)
    pre.reservations()
    stub.assert_no_pending_responses()
    assert [c.to_json() for c in pre.checks] == [
        {
            "check": "reservation",
            "subject": f"train-h200: {CB_ID}",
            "status": "fail",
            "message": "not found in us-east-1; 2 1-day offerings available, cheapest 5272.32 USD up front in "
            "us-east-1a starting 2026-12-01 11:30:00+00:00",
        }
    ]


def test_the_ami_check_reads_the_pinned_release_not_the_recommended_one() -> None:
    from gpucloud.preflight.checks import ssm_parameter

    spec = parse_platform(
        yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["gpucloud:platform"]
    )
    names = {p.name: ssm_parameter(p, spec) for p in spec.node_pools}
    # dev runs 1.35 and pins no release of its own: the versions table's 1.35.6-20260714.
    assert names == {"infer-l40s": AL2023_NVIDIA, "dev-l4": AL2023_NVIDIA}
