#!/usr/bin/env python3
"""Benchmark (not a test): what pricing adds to `gpucloud plan`. Target: < 50 ms for the prod plan.

Prints the prod plan's pricing time (cold: first call in the process, catalog load included; warm: median of
repeats) and the same for a synthetic plan of raw resources (100 node groups + 100 launch templates +
100 mixed-instances ASGs + 20 ODCRs + FSx/EKS/NAT). Run from the repository root:

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_cost.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GPUCLOUD_PRICE_CACHE", "off")

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def synthetic(n: int = 100) -> list[dict[str, Any]]:
    stack = "urn:pulumi:bench::synthetic::pulumi:pulumi:Stack"
    types = ["p5.48xlarge", "g6e.12xlarge", "p4d.24xlarge", "g5.48xlarge", "trn1.32xlarge"]
    out: list[dict[str, Any]] = []

    def res(type_: str, name: str, inputs: dict[str, Any], deps: dict[str, list[str]] | None = None) -> dict[str, Any]:
        r = {
            "urn": f"{stack}${type_}::{name}",
            "type": type_,
            "name": name,
            "parent": None,
            "custom": True,
            "dependencies": sorted({u for v in (deps or {}).values() for u in v}),
            "propertyDependencies": deps or {},
            "inputs": inputs,
        }
        out.append(r)
        return r

    for i in range(20):
        res(
            "aws:ec2/capacityReservation:CapacityReservation",
            f"odcr-{i}",
            {"instanceType": "p5.48xlarge", "instanceCount": 2.0, "availabilityZone": "us-east-1a"},
        )
    for i in range(n):
        itype = types[i % len(types)]
        lt = res(
            "aws:ec2/launchTemplate:LaunchTemplate",
            f"lt-{i}",
            {
                "instanceType": itype,
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 200.0, "volumeType": "gp3"}}],
            },
        )
        res(
            "aws:eks/nodeGroup:NodeGroup",
            f"ng-{i}",
            {
                "capacityType": "SPOT" if i % 3 == 0 else "ON_DEMAND",
                "scalingConfig": {"minSize": 0.0, "desiredSize": 2.0, "maxSize": 8.0},
                "launchTemplate": {"id": UNKNOWN, "version": UNKNOWN},
            },
            {"launchTemplate": [lt["urn"]]},
        )
        res(
            "aws:autoscaling/group:Group",
            f"asg-{i}",
            {
                "minSize": 0.0,
                "desiredCapacity": 10.0,
                "maxSize": 16.0,
                "mixedInstancesPolicy": {
                    "instancesDistribution": {"onDemandBaseCapacity": 2.0, "onDemandPercentageAboveBaseCapacity": 25.0},
                    "launchTemplate": {
                        "launchTemplateSpecification": {"launchTemplateId": UNKNOWN},
                        "overrides": [{"instanceType": itype}],
                    },
                },
            },
            {"mixedInstancesPolicy": [lt["urn"]]},
        )
    res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fsx",
        {"storageCapacity": 38400.0, "deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": 500.0},
    )
    res("aws:eks/cluster:Cluster", "eks", {"version": "1.34", "upgradePolicy": {"supportType": "STANDARD"}})
    for az in "abc":
        res("aws:ec2/natGateway:NatGateway", f"nat-{az}", {"subnetId": f"subnet-{az}"})
    return out


def timed(fn: Any, repeat: int) -> tuple[float, float]:
    start = time.perf_counter()
    fn()
    cold = (time.perf_counter() - start) * 1000
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return cold, statistics.median(runs)


def main() -> int:
    start = time.perf_counter()
    from gpucloud.catalog import get_catalog
    from gpucloud.cost import price_plan, price_resources
    from gpucloud.plan import run_program

    import_ms = (time.perf_counter() - start) * 1000
    plan = run_program(ROOT, "prod")
    # In `gpucloud plan` the spec validation has already loaded the catalog: the first call is what pricing adds.
    first, warm = timed(lambda: price_plan(plan), 50)
    get_catalog.cache_clear()
    start = time.perf_counter()
    get_catalog()
    catalog_ms = (time.perf_counter() - start) * 1000
    cost = price_plan(plan)
    print(f"import gpucloud.cost (+catalog module): {import_ms:.1f} ms; catalog load: {catalog_ms:.1f} ms")
    print(
        f"prod plan: {len(plan.resources)} resources, {len(cost['items'])} priced items, "
        f"{len(cost['unpriced'])} unpriced"
    )
    print(f"  price_plan first call after run_program: {first:.2f} ms; warm median: {warm:.2f} ms")
    resources = synthetic()
    cold, warm = timed(lambda: price_resources(resources), 20)
    cost = price_resources(resources)
    print(f"synthetic plan: {len(resources)} resources, {len(cost['items'])} priced items")
    print(f"  price_resources first call: {cold:.1f} ms; warm median: {warm:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
