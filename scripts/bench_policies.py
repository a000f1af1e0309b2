"""Guardrail throughput: resource-policy checks per second on a synthetic plan (not a timed test).

    .venv/bin/python scripts/bench_policies.py [--resources 5000] [--repeat 3] [--record]

A check is one resource policy run on one resource (the engine calls every resource policy for every
resource). The synthetic plan mixes GPU node groups, launch templates, security groups, buckets with their
sub-resources, IAM policies, subnets and Karpenter NodePools, with a few unknown values, as a large fleet's
preview would.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_record import Machine, record

from gpucloud.guard import evaluate
from gpucloud.plan.model import UNKNOWN, Plan, ResourceRecord

TAGS = {"CostCenter": "ml", "Team": "research", "Project": "bench", "Env": "dev", "ExpiresOn": "2027-01-01"}


def _urn(type_: str, name: str) -> str:
    return f"urn:pulumi:bench::bench::{type_}::{name}"


def synthetic_plan(n: int) -> Plan:
    records: list[ResourceRecord] = []

    def add(type_: str, name: str, inputs: dict, deps: dict[str, list[str]] | None = None) -> str:
        urn = _urn(type_, name)
        pd = deps or {}
        records.append(
            ResourceRecord(
                urn=urn,
                type=type_,
                name=name,
                parent=None,
                custom=True,
                dependencies=sorted({u for us in pd.values() for u in us}),
                inputs=inputs,
                property_dependencies=pd,
                retain_on_delete=True,
            )
        )
        return urn

    i = 0
    while len(records) < n:
        subnet = add("aws:ec2/subnet:Subnet", f"subnet-{i}", {"availabilityZone": "us-east-1a", "tags": TAGS})
        lt = add(
            "aws:ec2/launchTemplate:LaunchTemplate",
            f"lt-{i}",
            {
                "instanceType": "g6e.12xlarge",
                "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1.0},
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": UNKNOWN, "volumeSize": 200.0}}
                ],
                "networkInterfaces": [
                    {
                        "interfaceType": "efa",
                        "networkCardIndex": 0.0,
                        "deviceIndex": 0.0,
                        "associatePublicIpAddress": "false",
                    }
                ],
                "userData": "IyEvYmluL2Jhc2gKZWNobyBvawo=",
                "tags": TAGS,
                "tagSpecifications": [{"resourceType": k, "tags": TAGS} for k in ("instance", "volume")],
            },
        )
        add(
            "aws:eks/nodeGroup:NodeGroup",
            f"ng-{i}",
            {
                "clusterName": UNKNOWN,
                "capacityType": "SPOT" if i % 2 else "ON_DEMAND",
                "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 2.0},
                "labels": {"gpucloud.io/workload": "training" if i % 3 == 0 else "inference"},
                "launchTemplate": {"id": UNKNOWN, "version": "1"},
                "subnetIds": [UNKNOWN],
                "tags": TAGS,
            },
            {"launchTemplate": [lt], "subnetIds": [subnet]},
        )
        add(
            "aws:ec2/securityGroup:SecurityGroup",
            f"sg-{i}",
            {
                "ingress": [
                    {"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "self": True},
                    {"protocol": "tcp", "fromPort": 443.0, "toPort": 443.0, "cidrBlocks": ["10.0.0.0/16"]},
                ],
                "tags": TAGS,
            },
        )
        bucket = add("aws:s3/bucket:Bucket", f"data-{i}", {"bucket": f"data-{i}", "tags": TAGS})
        add(
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
            f"data-{i}-pab",
            {
                "bucket": UNKNOWN,
                "blockPublicAcls": True,
                "blockPublicPolicy": True,
                "ignorePublicAcls": True,
                "restrictPublicBuckets": True,
            },
            {"bucket": [bucket]},
        )
        add(
            "aws:iam/policy:Policy",
            f"policy-{i}",
            {
                "policy": json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": f"arn:aws:s3:::data-{i}/*"}
                        ],
                    }
                )
            },
        )
        add(
            "kubernetes:karpenter.sh/v1:NodePool",
            f"np-{i}",
            {
                "spec": {
                    "limits": {"nvidia.com/gpu": 8.0},
                    "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"},
                    "template": {
                        "spec": {
                            "expireAfter": "720h",
                            "requirements": [
                                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]},
                                {
                                    "key": "karpenter.sh/capacity-type",
                                    "operator": "In",
                                    "values": ["spot", "on-demand"],
                                },
                            ],
                        }
                    },
                }
            },
        )
        i += 1
    return Plan(project="bench", stack="bench", resources=records[:n])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="write docs/bench/policies.json and the docs' text")
    args = parser.parse_args()
    with Machine() as machine:
        result = measure(args.resources, args.repeat)
    print(
        f"resources: {result['resources']}  resource policies: {result['resource_policies']}  stack policies: "
        f"{result['stack_policies']}"
    )
    print(f"violations: {result['violations']}  not evaluated: {result['not_evaluated']}")
    print(
        f"best of {args.repeat}: {result['best_s']:.2f} s for {result['checks']} resource-policy checks (+ "
        f"{result['stack_policies']} stack policies over the whole plan)"
    )
    print(f"throughput: {result['checks_per_s']:,.0f} resource-policy checks/s  (cpus: {os.cpu_count()})")
    if args.record:
        record("policies", result, machine)
    return 0


def measure(resources: int, repeat: int) -> dict[str, Any]:
    plan = synthetic_plan(resources)
    config = {"gpu-count-cap": {"maxGpusPerStack": 1_000_000}}
    evaluate(plan, config)  # warm-up: imports, catalog, policy objects
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = evaluate(plan, config)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    from gpucloud.policies.gpucloud_policies import GUARDRAILS

    resource_policies = sum(1 for g in GUARDRAILS if g.kind == "resource")
    checks = len(plan) * resource_policies
    return {
        "resources": len(plan),
        "resource_policies": resource_policies,
        "stack_policies": len(GUARDRAILS) - resource_policies,
        "violations": len(result.violations),
        "not_evaluated": len(result.not_evaluated),
        "repeat": repeat,
        "best_s": best,
        "checks": checks,
        "checks_per_s": checks / best,
    }


if __name__ == "__main__":
    sys.exit(main())
