"""Shared helpers for the node pool tests: a literal ClusterHandle, pool specs and a runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpucloud.components.interfaces import ClusterHandle
from gpucloud.plan import Plan, run_callable
from gpucloud.spec.pools import NodePoolSpec

TAGS = {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud", "Env": "dev", "ManagedBy": "gpucloud"}
REGION = "us-east-1"
NODE_SG = "sg-0node000000000000"
EFA_SG = "sg-0efa0000000000000"
NODE_ROLE_ARN = "arn:aws:iam::123456789012:role/gpucloud-test-node"
KMS_ARN = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
SUBNETS = {"us-east-1a": "subnet-0aaaaaaaaaaaaaaaa", "us-east-1b": "subnet-0bbbbbbbbbbbbbbbb"}


def cluster_handle(**extra: Any) -> ClusterHandle:
    return ClusterHandle(
        name="gpucloud-test",
        kubernetes_version="1.34",
        endpoint="https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com",
        certificate_authority="LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
        vpc_id="vpc-0123456789abcdef0",
        vpc_cidr="10.40.0.0/16",
        subnet_ids_by_az=dict(SUBNETS),
        node_security_group_id=NODE_SG,
        cluster_security_group_id="sg-0cluster0000000000",
        efa_security_group_id=EFA_SG,
        node_role_arn=NODE_ROLE_ARN,
        node_role_name="gpucloud-test-node",
        oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
        oidc_provider_url="oidc.eks.us-east-1.amazonaws.com/id/ABC",
        kms_key_arn=KMS_ARN,
        k8s_provider=None,
        extra=extra,
    )


def pool(**fields: Any) -> NodePoolSpec:
    data: dict[str, Any] = {
        "name": "pool",
        "workload": "inference",
        "instanceTypes": ["g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge"],
        "minSize": 0,
        "desiredSize": 1,
        "maxSize": 4,
    }
    data.update(fields)
    return NodePoolSpec.model_validate(data)


def run(fn: Callable[[], Any], preview: bool = False) -> Plan:
    return run_callable(fn, preview=preview, region=REGION)


def build_pool(
    spec: NodePoolSpec, *, name: str = "p", interruption: bool = False, preview: bool = False, **config: Any
) -> Plan:
    """Plan one GpuNodePool (with Karpenter / an NTH-consumed queue when asked)."""
    from gpucloud.components.interruption import GpuInterruptionQueue, GpuInterruptionQueueConfig
    from gpucloud.components.karpenter import GpuKarpenter, GpuKarpenterConfig
    from gpucloud.components.nodepools import GpuNodePool, GpuNodePoolConfig

    def program() -> None:
        cluster = cluster_handle()
        queue = None
        karpenter = None
        if spec.backend == "karpenter":
            queue = GpuInterruptionQueue(
                "q", GpuInterruptionQueueConfig(region=REGION, tags=TAGS, consumers=["karpenter"])
            )
            karpenter = GpuKarpenter(
                "karpenter",
                GpuKarpenterConfig(
                    region=REGION,
                    tags=TAGS,
                    cluster=cluster,
                    interruption_queue_name=queue.queue_name,
                    interruption_queue_arn=queue.queue_arn,
                ),
            )
        elif interruption:
            queue = GpuInterruptionQueue(
                "q", GpuInterruptionQueueConfig(region=REGION, tags=TAGS, consumers=["node-termination-handler"])
            )
        GpuNodePool(
            name,
            GpuNodePoolConfig(
                region=REGION,
                tags=TAGS,
                environment="dev",
                pool=spec,
                cluster=cluster,
                interruption_queue=queue if spec.backend != "karpenter" else None,
                karpenter=karpenter,
                **config,
            ),
        )

    return run(program, preview=preview)


def types_of(plan: Plan, parent_name: str = "p") -> list[tuple[str, str]]:
    """(type, name) of the pool component's children, sorted."""
    comp = next(r for r in plan.resources if r.type == "gpucloud:nodepool:GpuNodePool" and r.name == parent_name)
    return sorted((r.type, r.name) for r in plan.children(comp.urn))
