"""Resource type tokens: each defined here once, imported by every reader (cost, policies, conformance, advice).

Tokens are the Pulumi type strings the engine shows a policy pack (``pkg:module/sub:Type``). A test scans the
product modules for a second definition of any of these strings.
"""

from __future__ import annotations

from typing import Final

# ---- what starts instances (the launch paths) ---------------------------------------------------------------
INSTANCE: Final = "aws:ec2/instance:Instance"
SPOT_INSTANCE_REQUEST: Final = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
LAUNCH_TEMPLATE: Final = "aws:ec2/launchTemplate:LaunchTemplate"
LAUNCH_CONFIGURATION: Final = "aws:ec2/launchConfiguration:LaunchConfiguration"
AUTOSCALING_GROUP: Final = "aws:autoscaling/group:Group"
NODE_GROUP: Final = "aws:eks/nodeGroup:NodeGroup"
EC2_FLEET: Final = "aws:ec2/fleet:Fleet"
SPOT_FLEET_REQUEST: Final = "aws:ec2/spotFleetRequest:SpotFleetRequest"
CAPACITY_RESERVATION: Final = "aws:ec2/capacityReservation:CapacityReservation"
CAPACITY_BLOCK_RESERVATION: Final = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
KARPENTER_NODEPOOL: Final = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODEPOOL_V1BETA1: Final = "kubernetes:karpenter.sh/v1beta1:NodePool"
EC2_NODE_CLASS: Final = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
EC2_NODE_CLASS_V1BETA1: Final = "kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass"

KARPENTER_NODEPOOLS: Final = (KARPENTER_NODEPOOL, KARPENTER_NODEPOOL_V1BETA1)
EC2_NODE_CLASSES: Final = (EC2_NODE_CLASS, EC2_NODE_CLASS_V1BETA1)
# Resources that start and scale nodes themselves; a launch template or configuration only describes them.
POOL_TYPES: Final = frozenset(
    {
        NODE_GROUP,
        AUTOSCALING_GROUP,
        EC2_FLEET,
        SPOT_FLEET_REQUEST,
        INSTANCE,
        SPOT_INSTANCE_REQUEST,
        CAPACITY_RESERVATION,
        *KARPENTER_NODEPOOLS,
    }
)
# Every resource that chooses an instance type (the pools and what describes them).
CAPACITY_TYPES: Final = frozenset({*POOL_TYPES, LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION})

# ---- what pools stand in --------------------------------------------------------------------------------------
SUBNET: Final = "aws:ec2/subnet:Subnet"
EKS_CLUSTER: Final = "aws:eks/cluster:Cluster"
AWS_PROVIDER: Final = "pulumi:providers:aws"

# ---- what the cost engine prices beside the pools ------------------------------------------------------------
LUSTRE: Final = "aws:fsx/lustreFileSystem:LustreFileSystem"
NAT_GATEWAY: Final = "aws:ec2/natGateway:NatGateway"
EIP: Final = "aws:ec2/eip:Eip"
VPC_ENDPOINT: Final = "aws:ec2/vpcEndpoint:VpcEndpoint"
KMS_KEY: Final = "aws:kms/key:Key"
KMS_EXTERNAL_KEY: Final = "aws:kms/externalKey:ExternalKey"
KMS_REPLICA_KEY: Final = "aws:kms/replicaKey:ReplicaKey"
KMS_REPLICA_EXTERNAL_KEY: Final = "aws:kms/replicaExternalKey:ReplicaExternalKey"
EBS_VOLUME: Final = "aws:ebs/volume:Volume"
EKS_ADDON: Final = "aws:eks/addon:Addon"

# ---- Kubernetes objects that make AWS bill (load balancers, volumes), priced by gpucloud.cost.handlers -------
K8S_SERVICE: Final = "kubernetes:core/v1:Service"
K8S_INGRESS: Final = "kubernetes:networking.k8s.io/v1:Ingress"
K8S_PVC: Final = "kubernetes:core/v1:PersistentVolumeClaim"
K8S_STATEFULSET: Final = "kubernetes:apps/v1:StatefulSet"
PROMETHEUS_CR: Final = "kubernetes:monitoring.coreos.com/v1:Prometheus"
ALERTMANAGER_CR: Final = "kubernetes:monitoring.coreos.com/v1:Alertmanager"

# ---- stores whose data a destroy or a replacement deletes: the retain policy (GC-REL-101) guards them, change
# impact (gpucloud.impact) blocks their replacement; one set so the two cannot disagree.
DATA_STORES: Final = frozenset(
    {"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", LUSTRE, EBS_VOLUME, "aws:efs/fileSystem:FileSystem"}
)
