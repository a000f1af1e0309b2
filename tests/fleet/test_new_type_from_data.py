"""A new GPU instance type is catalog data only: add g5g.2xlarge (Graviton2, one NVIDIA T4G) to a copy of the
catalog file without its shipped g5g family and a price to the price cache, and a pool of it is priced, judged by
the pack and scheduled by conformance, with no code naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

import gpucloud.catalog as catalog_module
from gpucloud import fleet
from gpucloud.catalog import get_catalog
from gpucloud.conformance import ConformanceContext
from gpucloud.conformance.kube import selector_fits
from gpucloud.conformance.nodes import build_pools
from gpucloud.cost import price_plan
from gpucloud.guard import evaluate_plan
from gpucloud.plan import run_callable
from gpucloud.policies.gpucloud_policies import capacity
from gpucloud.prices.book import get_price_book
from gpucloud.prices.cache import write_cache

NEW = "g5g.2xlarge"
HOURLY = 1.372  # the price the cache below records for it in us-east-1


def _record() -> dict[str, Any]:
    return {
        "family": "g5g",
        "accelerator": "T4G",
        "ec2_accelerator_name": "t4g",
        "manufacturer": "nvidia",
        "accelerator_kind": "gpu",
        "accelerator_count": 1,
        "accelerator_memory_gib": 16,
        "memory_bandwidth_gbps": 320,
        "vcpu": 8,
        "memory_gib": 16,
        "cpu_manufacturer": "aws",
        "network_gbps": 10,
        "network_burst": True,
        "efa_interfaces": 0,
        "network_cards": 1,
        "efa_generation": None,
        "efa_only_supported": False,
        "local_nvme_gb": 0,
        "local_nvme_disks": 0,
        "interconnect": "PCIe",
        "bf16_tflops": None,
        "fp16_tflops": 65,
        "int8_tops": 130,
        "fp64_tflops": None,
        "fp64_tensor_tflops": None,
        "on_demand_usd": HOURLY,
        "price_source": "test",
        "price_date": "2026-07-28",
        "capacity_block_usd": None,
        "capacity_block_source": None,
        "capacity_block_price_date": None,
        "on_demand": True,
        "spot": True,
        "capacity_block": False,
        "deprecated": False,
        "spec_source": "reference",
        "notes": "added by a test",
    }


@pytest.fixture
def new_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    data = json.loads(resources.files("gpucloud.catalog").joinpath("instances.json").read_text(encoding="utf-8"))
    # The shipped catalog holds g5g since issue 27: drop the family so the test adds one type as new data.
    for name in [n for n in data["instances"] if n.startswith("g5g.")]:
        del data["instances"][name]
    data["instances"][NEW] = _record()
    data["families"]["g5g"] = {**data["families"]["g5"], "notes": "added by a test"}
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    # An absolute name: Catalog.load joins it to the package directory, which leaves it as it is.
    monkeypatch.setattr(catalog_module, "_DATA_FILE", str(path))
    cache = tmp_path / "prices.json"
    write_cache(
        "us-east-1",
        {NEW: {"on_demand_usd": HOURLY, "price_date": "2026-07-28", "price_source": "aws-price-list"}},
        "2026-07-28T00:00:00Z",
        path=cache,
    )
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    caches = (get_catalog, get_price_book, capacity.spec, capacity.is_accelerated, capacity.family_is_accelerated)
    for cached in caches:
        cached.cache_clear()
    yield
    monkeypatch.undo()
    for cached in caches:
        cached.cache_clear()


def _program() -> None:
    cluster = aws.eks.Cluster("c", name="c", role_arn="arn:aws:iam::123456789012:role/eks", version="1.33",
                              vpc_config={"subnet_ids": ["subnet-1", "subnet-2"]})  # fmt: skip
    aws.eks.NodeGroup(
        "arm-gpu",
        cluster_name=cluster.name,
        node_group_name="arm-gpu",
        node_role_arn="arn:aws:iam::123456789012:role/node",
        subnet_ids=["subnet-1"],
        instance_types=[NEW],
        ami_type="AL2023_ARM_64_NVIDIA",
        scaling_config={"min_size": 0, "desired_size": 2, "max_size": 3},
        labels={"gpucloud.io/pool": "arm-gpu"},
    )
    k8s.apiextensions.CustomResource(
        "t4g",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": "t4g", "annotations": {"gpucloud.io/expected-nodes": "1"}},
        spec={
            "template": {
                "spec": {
                    # Only the catalog's data says which type has a GPU named t4g.
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["t4g"]}
                    ],
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                }
            },
            "limits": {"nvidia.com/gpu": "4"},
        },
        opts=pulumi.ResourceOptions(),
    )


def test_a_gpu_type_added_as_data_is_priced_judged_and_scheduled(new_type: None) -> None:
    plan = run_callable(_program, region="us-east-1")
    # The fleet layer: both pools admit the new type, with its accelerator from the data.
    pools = {p.name: p for p in fleet.pools(plan.resources)}
    assert [(p.instance_types, [a.label for a in p.accelerators]) for p in pools.values()] == [
        ((NEW,), ["t4g"]),
        ((NEW,), ["t4g"]),
    ]
    # Priced: 2 nodes expected (3 at most) in the node group, 1 expected and 4 at most (4 GPUs / 1 per node)
    # in the NodePool, at the recorded $1.372/h.
    cost = price_plan(plan)
    priced = [(i["name"], i["instance_type"], i["quantity"], i["max_quantity"], i["unit_price"]) for i in cost["items"]
              if i["instance_type"] == NEW]  # fmt: skip
    assert priced == [("arm-gpu", NEW, 2, 3, HOURLY), ("t4g", NEW, 1, 4, HOURLY)]
    # Judged: an environment that allows only g5 flags both pools by the new type's family.
    policies = evaluate_plan(plan, policy_config={"gpu-family-allowlist": {"allowedFamilies": ["g5"]}}, cost=cost)
    flagged = sorted(
        v["urn"].rsplit("::", 1)[-1] for v in policies["violations"] if v["policy"] == "gpu-family-allowlist"
    )
    assert flagged == ["arm-gpu", "t4g"]
    # Scheduled: conformance's nodes carry the type's GPU, architecture and (Karpenter's) GPU-name label from
    # the data: a pod asking for the type on arm64 fits the node group, one asking for a t4g GPU the NodePool
    # (EKS managed nodes carry no Karpenter labels).
    nodes = {p.name: p for p in build_pools(ConformanceContext(plan=plan))}
    by_type = {"node.kubernetes.io/instance-type": NEW, "kubernetes.io/arch": "arm64"}
    by_gpu = {"karpenter.k8s.aws/instance-gpu-name": "t4g", "kubernetes.io/arch": "arm64"}
    found = {
        name: [
            (v.instance_type, v.nvidia_gpus, selector_fits(v.labels, {"nodeSelector": pod})[0])
            for v in nodes[name].variants
            for pod in (by_type, by_gpu)
        ]
        for name in ("arm-gpu", "t4g")
    }
    assert found == {"arm-gpu": [(NEW, 1, True), (NEW, 1, False)], "t4g": [(NEW, 1, True), (NEW, 1, True)]}
