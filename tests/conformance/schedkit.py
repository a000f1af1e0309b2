"""Small raw Pulumi programs for the scheduling tests: a 1.34 EKS cluster with a tainted GPU node group, plus
whatever a test adds (resources created inside the callable), planned with gpucloud.plan.run_callable."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from gpucloud.conformance import ConformanceContext, DerivedObject, Finding, kubernetes_version
from gpucloud.conformance.invariants import check_invariants
from gpucloud.conformance.scheduling import check_scheduling
from gpucloud.plan.engine import run_callable
from gpucloud.plan.model import Plan

CLUSTER = "sched-test"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
ACCOUNT_ROOT = "arn:aws:iam::123456789012:root"


def base_cluster(
    *, gpu_max: int = 2, gpu_types: Iterable[str] = ("g6e.12xlarge",), system: bool = True, gpu: bool = True
) -> Any:
    """EKS 1.34, a system node group and a fixed-size tainted GPU node group labelled gpucloud.io/pool=gpu."""
    import pulumi_aws as aws

    cluster = aws.eks.Cluster(
        "c",
        name=CLUSTER,
        version="1.34",
        role_arn="arn:aws:iam::123456789012:role/c",
        vpc_config={"subnet_ids": ["s-1"]},
    )
    if system:
        aws.eks.NodeGroup(
            "system",
            cluster_name=cluster.name,
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["s-1"],
            instance_types=["m7i.large"],
            labels={"gpucloud.io/node-class": "system"},
            scaling_config={"min_size": 1, "max_size": 3, "desired_size": 2},
        )
    if not gpu:
        return cluster
    aws.eks.NodeGroup(
        "gpu",
        cluster_name=cluster.name,
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["s-1"],
        instance_types=list(gpu_types),
        ami_type="AL2023_x86_64_NVIDIA",
        labels={"gpucloud.io/pool": "gpu"},
        taints=[GPU_TAINT],
        scaling_config={"min_size": gpu_max, "max_size": gpu_max, "desired_size": gpu_max},
    )
    return cluster


def release(name: str, chart: str, version: str, namespace: str = "kube-system", values: Any = None) -> Any:
    import pulumi_kubernetes as k8s

    return k8s.helm.v3.Release(name, name=name, chart=chart, version=version, namespace=namespace, values=values or {})


def plan_of(fn: Callable[[], None]) -> Plan:
    return run_callable(fn, project="sched", stack="test", preview=True)


def derived(plan: Plan, release_name: str, source: str, manifests: Iterable[dict[str, Any]]) -> list[DerivedObject]:
    owner = next(r.urn for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.name == release_name)
    return [DerivedObject(owner, source, m) for m in manifests]


def run(plan: Plan, extra: Iterable[DerivedObject] = ()) -> tuple[ConformanceContext, list[Finding]]:
    ctx = ConformanceContext(plan=plan, derived=list(extra), kubernetes_version=kubernetes_version(plan))
    return ctx, list(check_scheduling(ctx)) + list(check_invariants(ctx))


def keyed(findings: Iterable[Finding]) -> list[tuple[str, str, str, str | None]]:
    """(check, resource name, field, derived object) per finding: what the tests pin."""
    return sorted((f.check, f.urn.rsplit("::", 1)[-1], f.field, f.object) for f in findings)


def gpu_job(name: str = "train", *, gpus: int = 4, pods: int = 1, extra_spec: Any = None, **meta: Any) -> Any:
    import pulumi_kubernetes as k8s

    spec = {
        "restartPolicy": "Never",
        "tolerations": [GPU_TOLERATION],
        "nodeSelector": {"gpucloud.io/pool": "gpu"},
        "containers": [
            {
                "name": "trainer",
                "image": "example/train:1",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "1", "memory": "4Gi"}},
            }
        ],
        **(extra_spec or {}),
    }
    return k8s.batch.v1.Job(
        name,
        metadata={"name": name, "namespace": meta.get("namespace", "ml"), "labels": {"app": name}},
        spec={
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    )


def key_policy(*statements: dict[str, Any]) -> str:
    root = {"Sid": "Root", "Effect": "Allow", "Principal": {"AWS": ACCOUNT_ROOT}, "Action": "kms:*", "Resource": "*"}
    return json.dumps({"Version": "2012-10-17", "Statement": [root, *statements]})
