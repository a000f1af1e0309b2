"""awsx ECS services and task definitions (pulumi/pulumi-awsx v3.8.0): awsx/ecs/fargateService.ts,
awsx/ecs/fargateTaskDefinition.ts, awsx/ecs/ec2Service.ts, awsx/ecs/ec2TaskDefinition.ts, awsx/role.ts
(defaultRoleWithPolicies) and awsx/cloudwatch/logGroup.ts (defaultLogGroup)."""

from __future__ import annotations

import json
from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Unmodelled, only_inputs_of
from gpucloud.plan.remote.awsx.common import OPEN_EGRESS, OPEN_INGRESS, sha1


def _default_role(ctx: Context, name: str, given: dict[str, Any] | None, policies: list[str]) -> Any:
    """role.ts defaultRoleWithPolicies: an ecs-tasks role and one attachment per default policy."""
    given = given or {}
    if given.get("skip") is True:
        return None
    if given.get("roleArn") is not None:
        return given["roleArn"]
    assume = {"Version": "2012-10-17", "Statement": [
        {"Action": "sts:AssumeRole", "Principal": {"Service": "ecs-tasks.amazonaws.com"}, "Effect": "Allow", "Sid": ""}
    ]}  # fmt: skip
    args = {"assumeRolePolicy": assume, **(given.get("args") or {})}
    if not isinstance(args["assumeRolePolicy"], str):
        args["assumeRolePolicy"] = json.dumps(args["assumeRolePolicy"], separators=(",", ":"))
    ctx.add("aws:iam/role:Role", name, only_inputs_of("aws:iam/role:Role", args))
    for arn in args.get("policyArns", policies):
        ctx.add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            f"{name}-{sha1(arn)}",
            {"role": UNKNOWN, "policyArn": arn},
        )
    return UNKNOWN


EXECUTION_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"


def fargate_task_definition(ctx: Context) -> None:
    """fargateTaskDefinition.ts: a log group, task and execution roles and the task definition."""
    name, a = ctx.name, ctx.inputs
    if (a.get("container") is None) == (a.get("containers") is None):
        raise Unmodelled("the provider needs exactly one of container or containers")
    log = a.get("logGroup") or {}
    if not log.get("skip") and log.get("existing") is None:
        ctx.add(
            "aws:cloudwatch/logGroup:LogGroup",
            name,
            only_inputs_of("aws:cloudwatch/logGroup:LogGroup", log.get("args") or {}),
        )
    task_role = _default_role(ctx, f"{name}-task", a.get("taskRole"), [])
    execution_role = _default_role(ctx, f"{name}-execution", a.get("executionRole"), [EXECUTION_POLICY])
    inputs = only_inputs_of("aws:ecs/taskDefinition:TaskDefinition", a)
    inputs.update(
        {
            "requiresCompatibilities": ["FARGATE"],
            "networkMode": "awsvpc",
            "taskRoleArn": task_role,
            "executionRoleArn": execution_role,
            # family is `<name>-<sha1(stack + container JSON)>` and cpu/memory are summed from the containers:
            # the JSON carries the log group's name, known only after `up`.
            "family": a.get("family", UNKNOWN),
            "cpu": a.get("cpu", UNKNOWN),
            "memory": a.get("memory", UNKNOWN),
            "containerDefinitions": UNKNOWN,
        }
    )
    ctx.add("aws:ecs/taskDefinition:TaskDefinition", name, inputs)


def fargate_service(ctx: Context) -> None:
    """fargateService.ts: the task definition (a FargateTaskDefinition component) and the ECS service."""
    name, a = ctx.name, ctx.inputs
    if a.get("taskDefinition") is not None and a.get("taskDefinitionArgs") is not None:
        raise Unmodelled("the provider refuses both taskDefinition and taskDefinitionArgs")
    task = a.get("taskDefinition")
    if a.get("taskDefinitionArgs") is not None:
        component = ctx.add("awsx:ecs:FargateTaskDefinition", name, {}, custom=False)
        sub = ctx.nested("awsx:ecs:FargateTaskDefinition", component, a["taskDefinitionArgs"])
        fargate_task_definition(sub)
        task = UNKNOWN
    if task is None:
        raise Unmodelled("the provider needs taskDefinition or taskDefinitionArgs")
    network = a.get("networkConfiguration")
    if network is None:
        ctx.add(
            "aws:ec2/securityGroup:SecurityGroup",
            f"{name}-sg",
            {"vpcId": UNKNOWN, "ingress": OPEN_INGRESS, "egress": OPEN_EGRESS},
        )
        network = {
            "subnets": UNKNOWN,
            "assignPublicIp": bool(a.get("assignPublicIp", False)),
            "securityGroups": [UNKNOWN],
        }
    strategies = a.get("capacityProviderStrategies") or a.get("useClusterDefaultCapacityProviderStrategy")
    inputs = {"desiredCount": 1, **only_inputs_of("aws:ecs/service:Service", a)}
    inputs.update(
        {
            "networkConfiguration": network,
            "cluster": a.get("cluster"),
            "launchType": None if strategies else "FARGATE",
            "loadBalancers": a.get("loadBalancers", UNKNOWN if a.get("taskDefinitionArgs") is not None else None),
            "waitForSteadyState": not a.get("continueBeforeSteadyState", False),
            "taskDefinition": task,
        }
    )
    ctx.add("aws:ecs/service:Service", name, inputs)


def ec2_task_definition(ctx: Context) -> None:
    """ec2TaskDefinition.ts: a log group, task and execution roles and the task definition; unlike Fargate's,
    networkMode "awsvpc" is only a default and cpu/memory are the program's (no Fargate sizing)."""
    name, a = ctx.name, ctx.inputs
    if (a.get("container") is None) == (a.get("containers") is None):
        raise Unmodelled("the provider needs exactly one of container or containers")
    log = a.get("logGroup") or {}
    if not log.get("skip") and log.get("existing") is None:
        ctx.add(
            "aws:cloudwatch/logGroup:LogGroup",
            name,
            only_inputs_of("aws:cloudwatch/logGroup:LogGroup", log.get("args") or {}),
        )
    task_role = _default_role(ctx, f"{name}-task", a.get("taskRole"), [])
    execution_role = _default_role(ctx, f"{name}-execution", a.get("executionRole"), [EXECUTION_POLICY])
    inputs = {"networkMode": "awsvpc", **only_inputs_of("aws:ecs/taskDefinition:TaskDefinition", a)}
    inputs.update(
        {
            "requiresCompatibilities": ["EC2"],
            "taskRoleArn": task_role,
            "executionRoleArn": execution_role,
            # `<name>-<sha1(stack + container JSON)>`, the JSON holding the log group's name: known after `up`.
            "family": a.get("family", UNKNOWN),
            "containerDefinitions": UNKNOWN,
        }
    )
    ctx.add("aws:ecs/taskDefinition:TaskDefinition", name, inputs)


def ec2_service(ctx: Context) -> None:
    """ec2Service.ts: the task definition (an EC2TaskDefinition component) and the ECS service on launch type EC2;
    no default security group or network configuration, and no default desiredCount (Fargate's has both)."""
    name, a = ctx.name, ctx.inputs
    if a.get("taskDefinition") is not None and a.get("taskDefinitionArgs") is not None:
        raise Unmodelled("the provider refuses both taskDefinition and taskDefinitionArgs")
    if a.get("capacityProviderStrategies") and a.get("useClusterDefaultCapacityProviderStrategy"):
        raise Unmodelled(
            "the provider refuses both capacityProviderStrategies and useClusterDefaultCapacityProviderStrategy"
        )
    task = a.get("taskDefinition")
    if a.get("taskDefinitionArgs") is not None:
        component = ctx.add("awsx:ecs:EC2TaskDefinition", name, {}, custom=False)
        ec2_task_definition(ctx.nested("awsx:ecs:EC2TaskDefinition", component, a["taskDefinitionArgs"]))
        task = UNKNOWN
    if task is None:
        raise Unmodelled("the provider needs taskDefinition or taskDefinitionArgs")
    strategies = a.get("capacityProviderStrategies") or a.get("useClusterDefaultCapacityProviderStrategy")
    inputs = only_inputs_of("aws:ecs/service:Service", a)
    inputs.update(
        {
            "cluster": a.get("cluster"),
            "launchType": None if strategies else "EC2",
            "loadBalancers": a.get("loadBalancers", UNKNOWN if a.get("taskDefinitionArgs") is not None else None),
            "waitForSteadyState": not a.get("continueBeforeSteadyState", False),
            "taskDefinition": task,
        }
    )
    ctx.add("aws:ecs/service:Service", name, inputs)
