"""Golden files: rendered node bootstrap and launch template EFA interface lists, compared exactly.

Run with GPUCLOUD_UPDATE_GOLDEN=1 to rewrite them after a deliberate change (and review the diff).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from nodepool_fixtures import build_pool, pool

from gpucloud.components.nodepools import ClusterInfo, NodeBootstrap, Taint, render_bottlerocket, render_nodeadm

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("GPUCLOUD_UPDATE_GOLDEN") == "1"
LT = "aws:ec2/launchTemplate:LaunchTemplate"

CLUSTER = ClusterInfo(
    name="gpucloud-test",
    endpoint="https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com",
    certificate_authority="LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
    service_cidr="172.20.0.0/16",
)
LABELS = {
    "gpucloud.io/pool": "train",
    "gpucloud.io/workload": "training",
    "gpucloud.io/accelerator": "h100",
    "gpucloud.io/capacity-type": "on-demand",
}
TAINT = (Taint("nvidia.com/gpu", "true", "NoSchedule"),)


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"{path} missing; run with GPUCLOUD_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(), f"{name} differs from the golden file"


def test_nodeadm_full() -> None:
    check("nodeadm-self-managed-p5.48xlarge.txt", render_nodeadm(NodeBootstrap(CLUSTER, LABELS, TAINT, raid0=True)))


def test_nodeadm_managed_extras_only() -> None:
    check("nodeadm-managed-raid0.txt", render_nodeadm(NodeBootstrap(raid0=True)))


def test_nodeadm_without_raid0() -> None:
    text = render_nodeadm(NodeBootstrap(CLUSTER, LABELS, TAINT, raid0=False))
    check("nodeadm-self-managed-no-raid0.txt", text)
    assert "localStorage" not in text


def test_nodeadm_nothing_to_say() -> None:
    assert render_nodeadm(NodeBootstrap()) == ""


def test_bottlerocket_full() -> None:
    check(
        "bottlerocket-self-managed-p5.48xlarge.toml",
        render_bottlerocket(NodeBootstrap(CLUSTER, LABELS, TAINT, raid0=True)),
    )


def test_rendered_user_data_in_plan_matches_golden() -> None:
    spec = pool(
        name="train",
        workload="training",
        backend="self-managed",
        instanceTypes=["p5.48xlarge"],
        availabilityZones=["us-east-1a"],
    )
    lt = build_pool(spec).find(LT, "p-lt")
    check("nodeadm-plan-self-managed-p5.48xlarge.txt", base64.b64decode(lt.get("userData")).decode())


@pytest.mark.parametrize(("instance_type", "count"), [("p4d.24xlarge", 4), ("p5.48xlarge", 32), ("p5en.48xlarge", 16)])
def test_launch_template_network_interfaces(instance_type: str, count: int) -> None:
    spec = pool(
        workload="training",
        instanceTypes=[instance_type],
        availabilityZones=["us-east-1a"],
        efa={"enabled": True},
    )
    nis = build_pool(spec).find(LT, "p-on-demand-lt").get("networkInterfaces")
    assert len(nis) == count
    check(f"lt-network-interfaces-{instance_type}.json", json.dumps(nis, indent=2, sort_keys=True) + "\n")
