"""AWS Load Balancer Controller: NLBs (and ALBs) for the cluster's Services, with its IAM policy on Pod Identity.

Installed from the pinned chart (aws-load-balancer-controller in the charts lock). Its IAM permissions are the
controller's documented policy (kubernetes-sigs/aws-load-balancer-controller docs/install/iam_policy.json, vendored
at the chart's appVersion): read-only discovery everywhere; creating load balancers, target groups and security
groups only with the controller's elbv2.k8s.aws/cluster request tag; deleting and reconfiguring them only when
they carry that tag. Listener, rule, certificate and WAF calls and security-group ingress rules are not
tag-conditioned upstream (the ELB API does not support it for all of them) and are not here either.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pulumi
from pydantic import Field

from gpucloud.charts.lock import artifact
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.base import ComponentConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.spec import AddonsSpec

SERVICE_ACCOUNT = "aws-load-balancer-controller"
# Annotations a Service needs to get an NLB from this controller (its "Network Load Balancer" guide): the
# `external` type hands the Service to this controller instead of the in-tree cloud provider; `ip` targets
# register pod IPs directly (no NodePort hop, works with the VPC CNI).
LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
LB_TARGET_TYPE = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"
LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"

# The controller's documented policy at the chart's appVersion, vendored as a lock artifact (PROVENANCE.md).
POLICY_ARTIFACT = "aws-load-balancer-controller-iam-policy"


@functools.cache
def _upstream_policy_text() -> str:
    return (artifact(POLICY_ARTIFACT).artifact_dir / "iam_policy.json").read_text()


def controller_policy(partition: str) -> dict[str, Any]:
    """The controller's IAM policy: upstream's docs/install/iam_policy.json at the pinned version, with its
    `arn:aws:` resources moved to the cluster's partition (upstream ships per-partition copies that differ only
    there). A hand copy drifted from it once: it granted target registration on every tagged resource as well."""
    policy: dict[str, Any] = json.loads(_upstream_policy_text())
    for statement in policy["Statement"]:
        resources = statement.get("Resource")
        if isinstance(resources, str):
            statement["Resource"] = _in_partition(resources, partition)
        elif isinstance(resources, list):
            statement["Resource"] = [_in_partition(r, partition) for r in resources]
    return policy


def _in_partition(resource: str, partition: str) -> str:
    return f"arn:{partition}:" + resource.removeprefix("arn:aws:") if resource.startswith("arn:aws:") else resource


def controller_values(cluster_name: Any, region: str, vpc_id: Any) -> dict[str, Any]:
    return {
        "clusterName": cluster_name,
        "region": region,
        # Explicit: with IMDS hop limit 1 (the node pools' launch templates) the controller cannot discover them.
        "vpcId": vpc_id,
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        # Services without an explicit class stay with the in-tree provider; ours set the `external` type.
        "enableServiceMutatorWebhook": False,
        "createIngressClassResource": False,
    }


class LoadBalancerControllerConfig(ComponentConfig):
    """Inputs of LoadBalancerController."""

    addons: AddonsSpec = Field(description="The add-ons section of the stack spec (version, namespace prefix).")


class LoadBalancerController(AddonsBase):
    """The controller release and its Pod Identity role."""

    def __init__(
        self,
        name: str,
        config: LoadBalancerControllerConfig,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:addons:LoadBalancerController", name, None, opts)
        self._name = name
        self._config = config
        self._cluster = cluster
        self.releases = {}
        self.namespaces = {}
        spec = config.addons.load_balancer_controller
        namespace = "kube-system"
        partition = self._arn_prefix("elasticloadbalancing").apply(lambda arn: arn.split(":")[1])
        policy = partition.apply(lambda p: json.dumps(controller_policy(p)))
        self.role = self._pod_identity_role("lb-controller", namespace, SERVICE_ACCOUNT, policy, [])
        self.release = self._release(
            "aws-load-balancer-controller",
            "aws-load-balancer-controller",
            spec.version,
            namespace,
            controller_values(cluster.name, config.region, cluster.vpc_id),
            depends_on=[self.role],
        )
        self.allow_internet_facing = spec.allow_internet_facing
        self.register_outputs({"role_arn": self.role.arn, "allow_internet_facing": self.allow_internet_facing})
