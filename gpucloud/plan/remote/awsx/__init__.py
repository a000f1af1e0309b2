"""awsx components as the provider constructs them, from pulumi/pulumi-awsx v3.8.0 (the version `pulumi-awsx==3.8.0`
in constraints.txt ships; tag v3.8.0 is commit 3f19048c16e5e942cde97b1771a17f12a99b61d6), one module per awsx
module: ec2 (Vpc, DefaultVpc), lb (ApplicationLoadBalancer, NetworkLoadBalancer), ecs (Fargate and EC2 services
and task definitions) and ecr (Repository, Image). Each model names the TypeScript files it follows.
"""

from __future__ import annotations

from gpucloud.plan.remote import Model, Provenance
from gpucloud.plan.remote.awsx.ec2 import VPC, default_vpc, vpc
from gpucloud.plan.remote.awsx.ecr import ecr_image, ecr_repository
from gpucloud.plan.remote.awsx.ecs import ec2_service, ec2_task_definition, fargate_service, fargate_task_definition
from gpucloud.plan.remote.awsx.lb import application_load_balancer, network_load_balancer


def _at_tag(*files: str) -> Provenance:
    return Provenance("pulumi/pulumi-awsx", "v3.8.0", files)


PROVENANCE = _at_tag(
    "awsx/ec2/vpc.ts",
    "awsx/ec2/subnetDistributorLegacy.ts",
    "awsx/ec2/subnetDistributorNew.ts",
    "awsx/ec2/subnetNaming.ts",
)
DEFAULT_VPC_PROVENANCE = _at_tag("awsx/ec2/defaultVpc.ts", "awsx/ec2/getDefaultVpc.ts")
LB_PROVENANCE = _at_tag("awsx/lb/applicationLoadBalancer.ts")
NLB_PROVENANCE = _at_tag("awsx/lb/networkLoadBalancer.ts")
ECS_PROVENANCE = _at_tag(
    "awsx/ecs/fargateService.ts", "awsx/ecs/fargateTaskDefinition.ts", "awsx/role.ts", "awsx/cloudwatch/logGroup.ts"
)
EC2_ECS_PROVENANCE = _at_tag(
    "awsx/ecs/ec2Service.ts", "awsx/ecs/ec2TaskDefinition.ts", "awsx/role.ts", "awsx/cloudwatch/logGroup.ts"
)
ECR_PROVENANCE = _at_tag("awsx/ecr/repository.ts", "awsx/ecr/image.ts")

MODELS: dict[str, tuple[Model, Provenance]] = {
    VPC: (vpc, PROVENANCE),
    "awsx:ec2:DefaultVpc": (default_vpc, DEFAULT_VPC_PROVENANCE),
    "awsx:ecr:Image": (ecr_image, ECR_PROVENANCE),
    "awsx:lb:ApplicationLoadBalancer": (application_load_balancer, LB_PROVENANCE),
    "awsx:lb:NetworkLoadBalancer": (network_load_balancer, NLB_PROVENANCE),
    "awsx:ecs:FargateService": (fargate_service, ECS_PROVENANCE),
    "awsx:ecs:FargateTaskDefinition": (fargate_task_definition, ECS_PROVENANCE),
    "awsx:ecs:EC2Service": (ec2_service, EC2_ECS_PROVENANCE),
    "awsx:ecs:EC2TaskDefinition": (ec2_task_definition, EC2_ECS_PROVENANCE),
    "awsx:ecr:Repository": (ecr_repository, ECR_PROVENANCE),
}
