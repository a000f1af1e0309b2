"""No hang, ever: resource references as inputs resolve as the engine resolves them, and a program that really
deadlocks stops with exit 2 within the deadline, naming what it waited for. Every program here runs under a
timeout (the engine's own, and a subprocess limit for the CLI runs)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpucloud.plan import UNKNOWN, PlanInputError, run_program
from gpucloud.plan.deadline import DEFAULT_TIMEOUT_S, TIMEOUT_ENV, resolve_timeout

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "programs"
LIMIT = 60.0  # seconds any one of these programs may take before the test fails instead of hanging


def test_resource_object_as_input_plans_as_its_id() -> None:
    plan = run_program(PROGRAMS / "resource_ref", "dev", timeout=LIMIT)
    vpc = plan.find("aws:ec2/vpc:Vpc", "app-vpc")
    subnet = plan.find("aws:ec2/subnet:Subnet", "app-subnet")
    # The engine hands a provider a reference as the resource's ID: unknown in a preview of a new VPC.
    assert subnet.inputs["vpcId"] == UNKNOWN
    assert subnet.dependencies == [vpc.urn]
    assert plan.find("aws:ec2/mainRouteTableAssociation:MainRouteTableAssociation", "main-rt").inputs["vpcId"] == (
        UNKNOWN
    )
    # A resource read by ID (Vpc.get) has that ID, so the reference is known.
    assert plan.find("aws:ec2/securityGroup:SecurityGroup", "sg").inputs["vpcId"] == "vpc-0aaaabbbbccccdddd"
    assert plan.find("aws:rds/subnetGroup:SubnetGroup", "db-subnets").inputs["subnetIds"] == [UNKNOWN]
    assert plan.outputs == {
        "subnetVpc": "[unknown]",
        "sgVpc": "vpc-0aaaabbbbccccdddd",
        "vpc": "urn:pulumi:dev::resource-ref::aws:ec2/vpc:Vpc::app-vpc",
    }
    assert len(plan) == 5


def test_dynamic_resource_with_resource_inputs_plans() -> None:
    plan = run_program(PROGRAMS / "dynamic", "dev", timeout=LIMIT)
    schema = plan.find("pulumi-python:dynamic:Resource", "votes-table")
    db = plan.find("aws:rds/instance:Instance", "mysql-server")
    assert schema.inputs["instance"] == UNKNOWN
    assert schema.inputs["server_address"] == UNKNOWN
    assert schema.inputs["database_name"] == "votes"
    assert schema.dependencies == [db.urn]
    assert plan.outputs == {"schemaId": "[unknown]", "database": "votes"}


def test_component_outputs_and_chains_across_components_plan() -> None:
    plan = run_program(PROGRAMS / "component_outputs", "dev", timeout=LIMIT)
    prefix = "urn:pulumi:dev::component-outputs::"
    assert sorted((r.type, r.name) for r in plan.resources) == [
        ("aws:ec2/securityGroup:SecurityGroup", "gpu-sg"),
        ("aws:ec2/subnet:Subnet", "net-subnet"),
        ("aws:ec2/vpc:Vpc", "net-vpc"),
        ("aws:iam/role:Role", "node-role"),
        ("example-remote:index:NodeGroup", "gpu-nodes"),
        ("example:eks:Cluster", "gpu"),
        ("example:net:Network", "net"),
    ]
    cluster = plan.find("example:eks:Cluster", "gpu")
    # A component reference has no ID: it travels as the component's URN.
    assert cluster.inputs == {"network": f"{prefix}example:net:Network::net", "vpcId": UNKNOWN}
    nodes = plan.find("example-remote:index:NodeGroup", "gpu-nodes")
    assert nodes.inputs == {
        "cluster": f"{prefix}example:eks:Cluster::gpu",
        "nodeRole": UNKNOWN,
        "instanceTypes": ["g5.xlarge"],
    }
    sg = plan.find("aws:ec2/securityGroup:SecurityGroup", "gpu-sg")
    # dependsOn a component means on its children (the engine expands it).
    assert f"{prefix}example:net:Network$aws:ec2/vpc:Vpc::net-vpc" in sg.dependencies
    assert plan.outputs["securityGroupVpc"] == "[unknown]"


def test_deadlock_names_every_pending_resource_and_what_it_waited_for() -> None:
    started = time.monotonic()
    with pytest.raises(PlanInputError) as info:
        run_program(PROGRAMS / "deadlock", "dev", timeout=3)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < 3 + 10
    assert message.startswith("the program did not finish within 3 s: 3 resource registrations never completed: ")
    # The root cause first, then what waits on it.
    assert (
        "aws:s3/bucket:Bucket 'stuck' waited for its input 'bucket', an awaitable nothing completes (a Future or "
        "Output the program never resolved); "
    ) in message
    assert (
        "aws:s3/bucket:Bucket 'after' waited for its dependsOn, an output of aws:s3/bucket:Bucket 'stuck', "
        "itself pending" in message
    )
    assert (
        "aws:s3/bucketPolicy:BucketPolicy 'waits' waited for its input 'bucket', an output of aws:s3/bucket:Bucket "
        "'stuck', itself pending"
    ) in message
    assert message.index("'stuck' waited") < message.index("'after' waited")
    assert "'fine'" not in message
    assert message.endswith(f"raise the limit with `gpucloud plan --timeout SECONDS` or {TIMEOUT_ENV}=SECONDS")


def test_program_blocked_in_synchronous_code_is_interrupted() -> None:
    started = time.monotonic()
    with pytest.raises(PlanInputError) as info:
        run_program(PROGRAMS / "blocked", "dev", timeout=2)
    assert time.monotonic() - started < 2 + 10
    assert str(info.value).startswith(
        "the program did not finish within 2 s: it was blocked in synchronous code at __main__.py:12 in wait_forever"
    )


def test_a_plan_after_a_deadlock_still_plans() -> None:
    with pytest.raises(PlanInputError):
        run_program(PROGRAMS / "deadlock", "dev", timeout=2)
    plan = run_program(PROGRAMS / "resource_ref", "dev", timeout=LIMIT)
    assert len(plan) == 5


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpucloud", *args],
        capture_output=True,
        text=True,
        timeout=LIMIT * 2,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
    )


def test_cli_deadlock_exits_2_within_the_timeout_flag() -> None:
    started = time.monotonic()
    done = _cli("plan", "--program", str(PROGRAMS / "deadlock"), "--no-policy-config", "--timeout", "3")
    assert done.returncode == 2
    assert time.monotonic() - started < LIMIT
    assert "the program did not finish within 3 s: 3 resource registrations never completed" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_timeout_from_the_environment_and_bad_values() -> None:
    done = _cli("plan", "--program", str(PROGRAMS / "deadlock"), "--no-policy-config", env={TIMEOUT_ENV: "2"})
    assert done.returncode == 2
    assert "the program did not finish within 2 s" in done.stderr
    bad = _cli("plan", "--program", str(PROGRAMS / "deadlock"), "--timeout", "0")
    assert bad.returncode == 2
    assert "--timeout: '0' is not a number of seconds above 0; give e.g. --timeout 120" in bad.stderr


def test_timeout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    assert resolve_timeout() == DEFAULT_TIMEOUT_S == 120.0
    monkeypatch.setenv(TIMEOUT_ENV, "45")
    assert resolve_timeout() == 45.0
    assert resolve_timeout(7) == 7.0
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(PlanInputError) as info:
        run_program(PROGRAMS / "resource_ref", "dev")
    assert str(info.value) == (
        f"{TIMEOUT_ENV}='soon' is not a number of seconds above 0; set it to e.g. 120, or unset it for the default "
        "(120 s)"
    )
