"""pulumi-eks components (`eks:index:*`) as the provider constructs them, from pulumi/pulumi-eks v4.3.0 (the
version `pulumi-eks==4.3.0` in constraints.txt ships): nodejs/eks/cluster/cluster.ts (createCore, createCluster),
nodejs/eks/nodes/nodegroup.ts (createNodeGroup, createNodeGroupV2, createManagedNodeGroup,
createMNGCustomLaunchTemplate), nodejs/eks/nodes/securitygroup.ts (createNodeGroupSecurityGroup),
nodejs/eks/servicerole.ts (ServiceRole) and nodejs/eks/addons/cni-addon.ts (VpcCniAddon).

Names, types, parents and the literal inputs (descriptions, ports, policy ARNs, defaults such as t3.medium and
2/1/2 nodes) are the TypeScript's; values the provider reads from other resources or from data sources it calls
(the recommended AMI, the worker subnets it computes from route tables) are unknown, as they are in a preview
before those resources exist.
"""

from __future__ import annotations

from gpucloud.plan.remote.eks.cluster import cluster
from gpucloud.plan.remote.eks.common import (
    CLUSTER,
    MANAGED_NODE_GROUP,
    NODE_GROUP,
    NODE_GROUP_SECURITY_GROUP,
    NODE_GROUP_V2,
    PROVENANCE,
)
from gpucloud.plan.remote.eks.nodegroups import (
    addon,
    managed_node_group,
    node_group,
    node_group_security_group,
    node_group_v2,
)

MODELS = {
    "eks:index:Addon": (addon, PROVENANCE),
    CLUSTER: (cluster, PROVENANCE),
    MANAGED_NODE_GROUP: (managed_node_group, PROVENANCE),
    NODE_GROUP_V2: (node_group_v2, PROVENANCE),
    NODE_GROUP: (node_group, PROVENANCE),
    NODE_GROUP_SECURITY_GROUP: (node_group_security_group, PROVENANCE),
}
