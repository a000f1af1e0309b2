#!/usr/bin/env python3
"""Benchmark (not a test): what pricing adds to `gpucloud plan`. Target: < 50 ms for the prod plan.

Prints the prod plan's pricing time (cold: first call in the process, catalog load included; warm: median of
repeats) and the same for a synthetic plan of raw resources (100 node groups + 100 launch templates +
100 mixed-instances ASGs + 20 ODCRs + FSx/EKS/NAT). Run from the repository root:

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_cost.py [--record]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GPUCLOUD_PRICE_CACHE", "off")

from bench_record import Machine, record  # noqa: E402  (scripts/ is on sys.path when run as a script)

WARM_RUNS = 50

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write docs/bench/cost.json and the docs' table")
    args = parser.parse_args()
    with Machine() as machine:
        result = measure()
    for line in (
        f"import gpucloud.cost (+catalog module): {result['import_ms']:.1f} ms; catalog load: "
        f"{result['catalog_ms']:.1f} ms",
        f"prod plan: {result['prod_resources']} resources, {result['prod_items']} priced items, "
        f"{result['prod_unpriced']} unpriced",
        f"  price_plan first call after run_program: {result['prod_first_ms']:.2f} ms; warm median: "
        f"{result['prod_warm_ms']:.2f} ms",
        f"synthetic plan: {result['synthetic_resources']} resources, {result['synthetic_items']} priced items",
        f"  price_resources first call: {result['synthetic_first_ms']:.1f} ms; warm median: "
        f"{result['synthetic_warm_ms']:.2f} ms",
    ):
        print(line)
    if args.record:
        record("cost", result, machine)
    return 0


def measure() -> dict[str, Any]:
    start = time.perf_counter()
    from gpucloud.catalog import get_catalog
    from gpucloud.cost import price_plan, price_resources
    from gpucloud.plan import run_program

    import_ms = (time.perf_counter() - start) * 1000
    plan = run_program(ROOT, "prod")
    # In `gpucloud plan` the spec validation has already loaded the catalog: the first call is what pricing adds.
    first, warm = timed(lambda: price_plan(plan), WARM_RUNS)
    get_catalog.cache_clear()
    start = time.perf_counter()
    get_catalog()
    catalog_ms = (time.perf_counter() - start) * 1000
    cost = price_plan(plan)
    resources = synthetic()
    synthetic_first, synthetic_warm = timed(lambda: price_resources(resources), 20)
    synthetic_cost = price_resources(resources)
    return {
        "import_ms": import_ms,
        "catalog_ms": catalog_ms,
        "prod_resources": len(plan.resources),
        "prod_items": len(cost["items"]),
        "prod_unpriced": len(cost["unpriced"]),
        "prod_first_ms": first,
        "prod_warm_ms": warm,
        "warm_runs": WARM_RUNS,
        "synthetic_resources": len(resources),
        "synthetic_items": len(synthetic_cost["items"]),
        "synthetic_first_ms": synthetic_first,
        "synthetic_warm_ms": synthetic_warm,
    }


if __name__ == "__main__":
    sys.exit(main())
