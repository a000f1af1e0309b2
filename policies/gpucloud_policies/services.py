"""Capacity started by AWS services other than EC2's own launch paths: the instance types and counts that Batch
compute environments, SageMaker (notebook instances, endpoint configurations, training and tuning jobs), EMR
(clusters, instance groups and fleets), Image Builder infrastructure, CloudFormation stacks and Cloud Control
resources put on EC2, and the simpler services of ``SIMPLE`` (GameLift, AppStream, Cloud9, dedicated hosts,
CodeBuild fleets, SageMaker Studio apps, spaces and domain defaults, monitoring jobs, algorithm validation,
Lambda and ECS managed instances, Mainframe Modernization, Elastic Disaster Recovery, EKS local clusters and
Outposts capacity tasks, Batch job overrides from EventBridge Pipes). The surface inventory
(gpucloud.surface) lists these types as starting compute; capacity.py reads EC2's own paths, this module the
services', so the GPU family allowlist and the GPU count cap see both.

SageMaker names EC2 types with an ``ml.`` prefix (``ml.p4d.24xlarge`` runs on a p4d.24xlarge); Batch accepts a
family alone (``p4d``: every size of it) and bounds a compute environment by vCPUs (``maxVcpus``), so its GPU
ceiling is the most GPUs that many vCPUs buy of any type it admits. A template body (CloudFormation
``templateBody``, Cloud Control ``desiredState``) is parsed: every ``InstanceType(s)`` property of every resource
is a type it may start; the counts of the resource types below are read, other resources' counts are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import catalog

from .base import get, integer, items, keys, maps, strings, text
from .readers import templates

BATCH = "aws:batch/computeEnvironment:ComputeEnvironment"
NOTEBOOK = "aws:sagemaker/notebookInstance:NotebookInstance"
ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
TRAINING_JOB = "aws:sagemaker/trainingJob:TrainingJob"
TUNING_JOB = "aws:sagemaker/hyperParameterTuningJob:HyperParameterTuningJob"
EMR_CLUSTER = "aws:emr/cluster:Cluster"
EMR_GROUP = "aws:emr/instanceGroup:InstanceGroup"
EMR_FLEET = "aws:emr/instanceFleet:InstanceFleet"
IMAGE_BUILDER = "aws:imagebuilder/infrastructureConfiguration:InfrastructureConfiguration"
CFN_STACK = "aws:cloudformation/stack:Stack"
CFN_STACK_SET = "aws:cloudformation/stackSet:StackSet"
CLOUD_CONTROL = "aws:cloudcontrol/resource:Resource"

# Services whose inputs name an instance type (``*`` matches every key or element) and, where they say it, a
# count (a path, a fixed number, or None: how many instances run is decided outside the resource, e.g. per user
# or by a scaling policy, so a GPU type there leaves the count cap undecided).
_Count = str | int | None
SIMPLE: dict[str, tuple[tuple[str, _Count], ...]] = {
    "aws:gamelift/fleet:Fleet": (("ec2InstanceType", None),),
    "aws:gamelift/gameServerGroup:GameServerGroup": (("instanceDefinitions.*.instanceType", "maxSize"),),
    "aws:appstream/fleet:Fleet": (("instanceType", "computeCapacity.desiredInstances"),),
    "aws:appstream/imageBuilder:ImageBuilder": (("instanceType", 1),),
    "aws:cloud9/environmentEC2:EnvironmentEC2": (("instanceType", 1),),
    # A dedicated host of a GPU type holds one instance of its largest size.
    "aws:ec2/dedicatedHost:DedicatedHost": (("instanceType", 1), ("instanceFamily", 1)),
    "aws:codebuild/fleet:Fleet": (
        ("computeConfiguration.instanceType", "scalingConfiguration.maxCapacity|baseCapacity"),
    ),
    "aws:sagemaker/app:App": (("resourceSpec.instanceType", 1),),
    "aws:sagemaker/space:Space": (("spaceSettings.*.defaultResourceSpec.instanceType", 1),),
    "aws:sagemaker/domain:Domain": (
        ("defaultSpaceSettings.*.defaultResourceSpec.instanceType", None),
        ("defaultUserSettings.*.defaultResourceSpec.instanceType", None),
        ("domainSettings.*.defaultResourceSpec.instanceType", None),
    ),
    "aws:sagemaker/userProfile:UserProfile": (("userSettings.*.defaultResourceSpec.instanceType", None),),
    "aws:sagemaker/dataQualityJobDefinition:DataQualityJobDefinition": (
        ("jobResources.clusterConfig.instanceType", "jobResources.clusterConfig.instanceCount"),
    ),
    "aws:sagemaker/monitoringSchedule:MonitoringSchedule": (
        (
            "monitoringScheduleConfig.monitoringJobDefinition.monitoringResources.clusterConfig.instanceType",
            "monitoringScheduleConfig.monitoringJobDefinition.monitoringResources.clusterConfig.instanceCount",
        ),
    ),
    # Lambda Managed Instances and ECS Managed Instances launch EC2 instances of the allowed types in the
    # account, as many as the service's scaling decides (``excludedInstanceTypes`` only narrows the choice).
    "aws:lambda/capacityProvider:CapacityProvider": (("instanceRequirements.allowedInstanceTypes.*", None),),
    "aws:ecs/capacityProvider:CapacityProvider": (
        ("managedInstancesProvider.instanceLaunchTemplate.instanceRequirements.allowedInstanceTypes.*", None),
    ),
    # AWS Mainframe Modernization names EC2 types with an "M2." prefix; desiredCapacity instances run.
    "aws:m2/environment:Environment": (("instanceType", "highAvailabilityConfig.desiredCapacity"),),
    # Elastic Disaster Recovery starts replication servers of this type, as many as the source servers need.
    "aws:drs/replicationConfigurationTemplate:ReplicationConfigurationTemplate": (
        ("replicationServerInstanceType", None),
    ),
    # EKS local clusters on Outposts run their control plane (and etcd) instances of these types on the Outpost.
    "aws:eks/cluster:Cluster": (
        ("outpostConfig.controlPlaneInstanceType", None),
        ("outpostConfig.etcdInstanceType", None),
    ),
    # An Outposts capacity task carves the Outpost's hardware into pools of these instance types.
    "aws:outposts/capacityTask:CapacityTask": (("instancePools.*.instanceType", None),),
    # An algorithm's validation profiles run a training job and a transform job when SageMaker validates it
    # (the ``supported*InstanceTypes`` lists only declare where it may run; the jobs that use it are judged).
    "aws:sagemaker/algorithm:Algorithm": (
        ("validationSpecification.validationProfiles.*.trainingJobDefinition.resourceConfig.instanceType", None),
        (
            "validationSpecification.validationProfiles.*.trainingJobDefinition.resourceConfig.instanceGroups.*."
            "instanceType",
            None,
        ),
        ("validationSpecification.validationProfiles.*.transformJobDefinition.transformResources.instanceType", None),
    ),
    # A Batch job's container override picks a type inside its queue's compute environments, whose capacity is
    # counted there: the override starts no more instances (count 0).
    "aws:pipes/pipe:Pipe": (("targetParameters.batchJobParameters.containerOverrides.instanceType", 0),),
}

SERVICE_TYPES = frozenset(
    {
        BATCH,
        NOTEBOOK,
        ENDPOINT_CONFIG,
        TRAINING_JOB,
        TUNING_JOB,
        EMR_CLUSTER,
        EMR_GROUP,
        EMR_FLEET,
        IMAGE_BUILDER,
        CFN_STACK,
        CFN_STACK_SET,
        CLOUD_CONTROL,
        *SIMPLE,
    }
)


@dataclass(frozen=True)
class ServiceCapacity:
    """One instance type (or, for Batch, a family) a service may start, and how many of it.

    ``nodes`` is the instance count; ``vcpus`` a vCPU budget instead (Batch); both None when the count is not
    modelled (a template resource other than those read below).
    """

    path: str
    instance_type: str
    nodes: int | None = None
    vcpus: int | None = None

    @property
    def family(self) -> str:
        return self.instance_type.partition(".")[0]

    @property
    def is_family(self) -> bool:
        return "." not in self.instance_type

    def specs(self) -> list[catalog.InstanceSpec]:
        cat = catalog.get_catalog()
        if self.is_family:
            return [s for s in cat if s.family == self.instance_type]
        found = cat.find(self.instance_type)
        return [found] if found is not None else []

    def max_gpus(self) -> int | None:
        """The most accelerators this can start (None when the count is not modelled)."""
        specs = self.specs()
        if self.vcpus is not None:
            return max((self.vcpus // s.vcpu * s.accelerator_count for s in specs if s.vcpu), default=0)
        if self.nodes is None:
            return None if specs and any(s.accelerator_count for s in specs) else 0
        return self.nodes * max((s.accelerator_count for s in specs), default=0)


def ec2_type(name: str) -> str:
    """SageMaker's ``ml.`` and AppStream's ``stream.graphics.`` spellings of an EC2 type, as EC2 names them."""
    for prefix in ("ml.", "stream.graphics.", "M2."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _find(node: Any, steps: list[str], path: str) -> Iterator[tuple[str, Any]]:
    """(concrete path, value) for a dotted path whose ``*`` steps match every key or list element."""
    if not steps:
        yield path, node
        return
    step, rest = steps[0], steps[1:]
    if step != "*":
        yield from _find(get(node, step), rest, f"{path}.{step}" if path else step)
    elif isinstance(node, Mapping):
        for k in keys(node):
            yield from _find(node[k], rest, f"{path}.{k}")
    else:
        for i, x in enumerate(items(node)):
            yield from _find(x, rest, f"{path}[{i}]")


def _simple(resource_type: str, props: Any) -> Iterator[ServiceCapacity]:
    for type_path, count in SIMPLE[resource_type]:
        # "a|b": the larger of two counts (CodeBuild's scaling maximum or its base capacity).
        nodes = max(_count(get(props, *c.split(".")), 0) for c in count.split("|")) if isinstance(count, str) else count
        for where, value in _find(props, type_path.split("."), ""):
            t = text(value)
            if t:
                # An allowed-types wildcard of a whole family ("g5.*") admits every size of it: a family.
                yield ServiceCapacity(where, ec2_type(t).removesuffix(".*"), nodes)


def _count(v: Any, default: int) -> int:
    n = integer(v)
    return default if n is None else max(n, 0)


def _sagemaker_configs(base: str, config: Any) -> Iterator[ServiceCapacity]:
    """A SageMaker ResourceConfig: one type and count, or heterogeneous instance groups."""
    t = text(get(config, "instanceType"))
    if t:
        yield ServiceCapacity(f"{base}.instanceType", ec2_type(t), _count(get(config, "instanceCount"), 1))
    for key in ("instanceGroups", "instanceConfigs"):
        for i, g in enumerate(maps(get(config, key))):
            gt = text(get(g, "instanceType"))
            if gt:
                yield ServiceCapacity(
                    f"{base}.{key}[{i}].instanceType", ec2_type(gt), _count(get(g, "instanceCount"), 1)
                )


def _emr_group(base: str, group: Any) -> Iterator[ServiceCapacity]:
    t = text(get(group, "instanceType"))
    if t:
        yield ServiceCapacity(f"{base}.instanceType", t, _count(get(group, "instanceCount"), 1))


def _emr_fleet(base: str, fleet: Any) -> Iterator[ServiceCapacity]:
    """Fleet targets are capacity units; a type of weight w fills them with ceil(target / w) instances."""
    target = _count(get(fleet, "targetOnDemandCapacity"), 0) + _count(get(fleet, "targetSpotCapacity"), 0)
    for i, c in enumerate(maps(get(fleet, "instanceTypeConfigs"))):
        t = text(get(c, "instanceType"))
        if t:
            weight = max(_count(get(c, "weightedCapacity"), 1), 1)
            yield ServiceCapacity(f"{base}.instanceTypeConfigs[{i}].instanceType", t, math.ceil(target / weight))


def capacity(resource_type: str, props: Any) -> list[ServiceCapacity]:
    """Every instance type this resource may start, with its count; unknown values raise when read."""
    return list(_capacity(resource_type, props))


def _capacity(resource_type: str, props: Any) -> Iterator[ServiceCapacity]:
    if resource_type in SIMPLE:
        yield from _simple(resource_type, props)
    elif resource_type == BATCH:
        res = get(props, "computeResources")
        vcpus = _count(get(res, "maxVcpus"), 0)
        for i, t in enumerate(strings(get(res, "instanceTypes"))):
            yield ServiceCapacity(f"computeResources.instanceTypes[{i}]", t, vcpus=vcpus)
    elif resource_type == NOTEBOOK:
        t = text(get(props, "instanceType"))
        if t:
            yield ServiceCapacity("instanceType", ec2_type(t), 1)
    elif resource_type == ENDPOINT_CONFIG:
        for key in ("productionVariants", "shadowProductionVariants"):
            for i, v in enumerate(maps(get(props, key))):
                t = text(get(v, "instanceType"))
                if t:
                    nodes = max(
                        _count(get(v, "initialInstanceCount"), 1),
                        _count(get(v, "managedInstanceScaling", "maxInstanceCount"), 0),
                    )
                    yield ServiceCapacity(f"{key}[{i}].instanceType", ec2_type(t), nodes)
    elif resource_type == TRAINING_JOB:
        yield from _sagemaker_configs("resourceConfig", get(props, "resourceConfig"))
    elif resource_type == TUNING_JOB:
        defs = [("trainingJobDefinition", get(props, "trainingJobDefinition"))]
        defs += [(f"trainingJobDefinitions[{i}]", d) for i, d in enumerate(items(get(props, "trainingJobDefinitions")))]
        parallel = _count(get(props, "hyperParameterTuningJobConfig", "resourceLimits", "maxParallelTrainingJobs"), 1)
        for base, d in defs:
            for key in ("resourceConfig", "hyperParameterTuningResourceConfig"):
                for c in _sagemaker_configs(f"{base}.{key}", get(d, key)):
                    # Each of the parallel training jobs gets the whole resource config.
                    yield ServiceCapacity(c.path, c.instance_type, (c.nodes or 0) * max(parallel, 1))
    elif resource_type == EMR_CLUSTER:
        for key in ("masterInstanceGroup", "coreInstanceGroup"):
            yield from _emr_group(key, get(props, key))
        for key in ("masterInstanceFleet", "coreInstanceFleet"):
            yield from _emr_fleet(key, get(props, key))
    elif resource_type == EMR_GROUP:
        yield from _emr_group("", props)
    elif resource_type == EMR_FLEET:
        yield from _emr_fleet("", props)
    elif resource_type == IMAGE_BUILDER:
        # One build or test instance at a time per pipeline run, of one of these types.
        for i, t in enumerate(strings(get(props, "instanceTypes"))):
            yield ServiceCapacity(f"instanceTypes[{i}]", t, 1)
    elif resource_type in (CFN_STACK, CFN_STACK_SET):
        template = parse_template(get(props, "templateBody"))
        for logical, res in _template_resources(template):
            yield from _template_capacity(f"templateBody.Resources.{logical}", res, template)
    elif resource_type == CLOUD_CONTROL:
        body = parse_template(get(props, "desiredState"))
        res = {"Type": text(get(props, "typeName")), "Properties": body}
        yield from _template_capacity("desiredState", res, {})


# ---------------------------------------------------------------------------------------------------------
# Infrastructure templates (CloudFormation JSON or YAML; a Cloud Control desired state is one resource's
# CloudFormation properties).


def parse_template(body: Any) -> dict[str, Any]:
    """A template or desired state given as a JSON / YAML string (CloudFormation's short-form tags read by
    readers/templates.py) or as an object; {} when it is neither."""
    if isinstance(body, Mapping):
        return {k: body[k] for k in keys(body)}
    parsed = templates.load(body)
    return dict(parsed) if parsed is not None else {}


def _template_resources(template: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    resources = template.get("Resources")
    if not isinstance(resources, Mapping):
        return []
    return [(str(k), v) for k, v in resources.items() if isinstance(v, Mapping)]


def _walk_types(node: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, instance type) for every InstanceType / InstanceTypes property anywhere in a resource's properties."""
    if isinstance(node, Mapping):
        for k, v in node.items():
            here = f"{path}.{k}"
            if k in ("InstanceType", "InstanceTypes"):
                for i, t in enumerate(strings(v)):
                    yield (here if isinstance(v, str) else f"{here}[{i}]"), ec2_type(t)
            else:
                yield from _walk_types(v, here)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk_types(v, f"{path}[{i}]")


def _launch_template_type(ref: Any, template: Mapping[str, Any]) -> str:
    """The InstanceType of the template's own LaunchTemplate an ASG refers to ({"Ref": logical id})."""
    logical = ref.get("Ref") if isinstance(ref, Mapping) else None
    target = (template.get("Resources") or {}).get(logical) if isinstance(logical, str) else None
    data = get(target, "Properties", "LaunchTemplateData") if isinstance(target, Mapping) else None
    return text(get(data, "InstanceType"))


def _template_capacity(base: str, res: Mapping[str, Any], template: Mapping[str, Any]) -> Iterator[ServiceCapacity]:
    kind = text(res.get("Type"))
    raw = res.get("Properties")
    props: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    found = list(_walk_types(props, f"{base}.Properties"))
    if kind == "AWS::AutoScaling::AutoScalingGroup":
        lt = get(props, "LaunchTemplate", "LaunchTemplateId") or get(props, "LaunchTemplate", "LaunchTemplateName")
        t = _launch_template_type(lt, template)
        if t and not found:
            found = [(f"{base}.Properties.LaunchTemplate", t)]
    nodes: int | None = None
    vcpus: int | None = None
    if kind in ("AWS::EC2::Instance", "AWS::SageMaker::NotebookInstance"):
        nodes = 1
    elif kind == "AWS::EC2::LaunchTemplate":
        nodes = 0  # a template starts nothing; the group that uses it is counted
    elif kind == "AWS::AutoScaling::AutoScalingGroup":
        nodes = _count(props.get("MaxSize"), 0)
    elif kind == "AWS::EKS::Nodegroup":
        nodes = _count(get(props, "ScalingConfig", "MaxSize"), 1)
    elif kind == "AWS::Batch::ComputeEnvironment":
        vcpus = _count(get(props, "ComputeResources", "MaxvCpus"), 0)
    for path, t in found:
        yield ServiceCapacity(path, t, nodes, vcpus)
