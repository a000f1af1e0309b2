"""``aws.api``: where a resource's inputs map onto an AWS API request shape (`API_SHAPES`), the enums, numeric
ranges, string lengths and patterns of botocore's bundled service models (`gpucloud.conformance.botocore_models`)
for each input whose name matches a member of the shape: the values the API call at `pulumi up` would refuse.
Values are read as `aws_inputs` reads them (the unknown sentinel and masked secrets match anything)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.aws_inputs import _MAX_LISTED, _remembered, is_opaque, join_path, preview
from gpucloud.conformance.botocore_models import ServiceModel, Shape, compiled, service_model
from gpucloud.plan.model import ResourceRecord


@dataclass(frozen=True)
class ApiShape:
    """Where a resource's inputs land in the AWS API: the request shapes its create call sends.

    `roots` are operation names (their input shape) or shape names, searched in order for each top-level input:
    the provider flattens nested request structures into one resource (a launch template's data sits beside its
    name; an FSx file system's LustreConfiguration beside its StorageCapacity), so a resource names all of them,
    the most specific first. `aliases` name the API member (or "shape:Name") for an input path whose name is not
    the member's, each with its reason; `extra` lists values the provider accepts beyond the API's enum;
    `foreign` validates an input against another service's shape where its own API types it as a bare string
    (EKS and Auto Scaling take EC2 instance type names, which only the EC2 model enumerates).
    """

    service: str
    roots: tuple[str, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    foreign: Mapping[str, tuple[str, str]] = field(default_factory=dict)


_EC2_INSTANCE_TYPE = ("ec2", "InstanceType")


# Inputs whose API member has another name. Only renames are listed: an input that matches its member by name
# (case and underscores aside), by the parent member's name prefixed (Terraform drops the redundant prefix:
# ASG `launchTemplate.id` is `LaunchTemplate.LaunchTemplateId`; a launch template's `name` is
# `LaunchTemplateName`) or by a plural "s" needs no entry.
API_SHAPES: dict[str, ApiShape] = {
    "aws:ec2/launchTemplate:LaunchTemplate": ApiShape(
        "ec2",
        ("RequestLaunchTemplateData", "CreateLaunchTemplate"),
        aliases={
            # pulumi-aws documents `description` as the version's description (`VersionDescription`).
            "description": "VersionDescription",
            # The network interface's `Groups` takes security group ids, which Terraform calls security_groups.
            "networkInterfaces.securityGroups": "Groups",
        },
    ),
    "aws:ec2/instance:Instance": ApiShape("ec2", ("RunInstances",)),
    "aws:ec2/placementGroup:PlacementGroup": ApiShape("ec2", ("CreatePlacementGroup",), aliases={"name": "GroupName"}),
    "aws:ec2/capacityReservation:CapacityReservation": ApiShape(
        "ec2", ("CreateCapacityReservation",), foreign={"instanceType": _EC2_INSTANCE_TYPE}
    ),
    "aws:ec2/vpc:Vpc": ApiShape("ec2", ("CreateVpc",)),
    "aws:ec2/subnet:Subnet": ApiShape("ec2", ("CreateSubnet",)),
    "aws:ec2/securityGroup:SecurityGroup": ApiShape("ec2", ("CreateSecurityGroup",), aliases={"name": "GroupName"}),
    "aws:ec2/vpcEndpoint:VpcEndpoint": ApiShape("ec2", ("CreateVpcEndpoint",)),
    "aws:ec2/flowLog:FlowLog": ApiShape("ec2", ("CreateFlowLogs",)),
    "aws:ec2/natGateway:NatGateway": ApiShape("ec2", ("CreateNatGateway",)),
    "aws:ec2/eip:Eip": ApiShape("ec2", ("AllocateAddress",)),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ApiShape("ec2", ("IpPermission",)),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ApiShape("ec2", ("IpPermission",)),
    "aws:eks/cluster:Cluster": ApiShape(
        "eks",
        ("CreateCluster",),
        aliases={
            # The API nests log types in logging.clusterLogging[].types; Terraform lists them flat.
            "enabledClusterLogTypes": "shape:LogTypes",
            "vpcConfig": "resourcesVpcConfig",
        },
    ),
    "aws:eks/nodeGroup:NodeGroup": ApiShape(
        "eks",
        ("CreateNodegroup",),
        aliases={"nodeRoleArn": "nodeRole", "subnetIds": "subnets"},
        foreign={"instanceTypes": _EC2_INSTANCE_TYPE},
    ),
    "aws:eks/addon:Addon": ApiShape(
        "eks",
        ("CreateAddon",),
        # Terraform validates both against the API's ResolveConflicts enum; the API takes one per call.
        aliases={"resolveConflictsOnCreate": "resolveConflicts", "resolveConflictsOnUpdate": "resolveConflicts"},
    ),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ApiShape("eks", ("CreatePodIdentityAssociation",)),
    "aws:eks/accessEntry:AccessEntry": ApiShape("eks", ("CreateAccessEntry",)),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ApiShape("eks", ("AssociateAccessPolicy",)),
    "aws:autoscaling/group:Group": ApiShape(
        "autoscaling",
        ("CreateAutoScalingGroup",),
        aliases={"name": "AutoScalingGroupName", "protectFromScaleIn": "NewInstancesProtectedFromScaleIn"},
        # Only exact names: instanceRequirements' allowed/excluded types take wildcards ("p5*"), not enum values.
        foreign={"mixedInstancesPolicy.launchTemplate.overrides.instanceType": _EC2_INSTANCE_TYPE},
    ),
    "aws:fsx/lustreFileSystem:LustreFileSystem": ApiShape(
        "fsx", ("CreateFileSystemLustreConfiguration", "CreateFileSystem")
    ),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": ApiShape(
        "fsx", ("CreateDataRepositoryAssociation",)
    ),
    "aws:iam/role:Role": ApiShape(
        "iam", ("CreateRole",), aliases={"name": "RoleName", "assumeRolePolicy": "AssumeRolePolicyDocument"}
    ),
    "aws:iam/rolePolicy:RolePolicy": ApiShape(
        "iam", ("PutRolePolicy",), aliases={"name": "PolicyName", "role": "RoleName", "policy": "PolicyDocument"}
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ApiShape(
        "iam", ("AttachRolePolicy",), aliases={"role": "RoleName"}
    ),
    "aws:iam/instanceProfile:InstanceProfile": ApiShape("iam", ("CreateInstanceProfile",)),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ApiShape(
        "iam",
        ("CreateOpenIDConnectProvider",),
        # Pulumi pluralises Terraform's client_id_list / thumbprint_list once more.
        aliases={"clientIdLists": "ClientIDList", "thumbprintLists": "ThumbprintList"},
    ),
    "aws:kms/key:Key": ApiShape(
        "kms",
        ("CreateKey", "EnableKeyRotation"),
        aliases={
            # Terraform schedules the deletion with this window (ScheduleKeyDeletion's PendingWindowInDays).
            "deletionWindowInDays": "shape:PendingWindowInDaysType",
            # Sent as CreateKey's KeySpec; the deprecated CustomerMasterKeySpec member lacks the newer specs.
            "customerMasterKeySpec": "KeySpec",
        },
    ),
    "aws:kms/alias:Alias": ApiShape("kms", ("CreateAlias",)),
    "aws:kms/grant:Grant": ApiShape("kms", ("CreateGrant",)),
    "aws:s3/bucket:Bucket": ApiShape("s3", ("CreateBucket",)),
    "aws:s3/bucketVersioning:BucketVersioning": ApiShape(
        "s3",
        ("PutBucketVersioning",),
        # pulumi-aws: "Valid values: Enabled, Suspended, or Disabled" (Disabled only when creating the resource).
        extra={"versioningConfiguration.status": ("Disabled",)},
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": ApiShape(
        "s3", ("ServerSideEncryptionConfiguration", "PutBucketEncryption")
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ApiShape(
        "s3", ("BucketLifecycleConfiguration", "PutBucketLifecycleConfiguration")
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ApiShape(
        "s3", ("PublicAccessBlockConfiguration", "PutPublicAccessBlock")
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ApiShape(
        "s3",
        ("OwnershipControls", "PutBucketOwnershipControls"),
        aliases={"rule": "Rules"},  # one rule block in Terraform, a one-item list in the API
    ),
    "aws:s3/bucketLogging:BucketLogging": ApiShape("s3", ("LoggingEnabled", "PutBucketLogging")),
    "aws:s3/bucketPolicy:BucketPolicy": ApiShape("s3", ("PutBucketPolicy",)),
    "aws:sqs/queue:Queue": ApiShape("sqs", ("CreateQueue",)),
    "aws:cloudwatch/eventRule:EventRule": ApiShape("events", ("PutRule",)),
    "aws:cloudwatch/eventTarget:EventTarget": ApiShape("events", ("Target", "PutTargets"), aliases={"targetId": "Id"}),
    "aws:cloudwatch/logGroup:LogGroup": ApiShape("logs", ("CreateLogGroup", "PutRetentionPolicy")),
    "aws:ec2/networkInterface:NetworkInterface": ApiShape("ec2", ("CreateNetworkInterface",)),
    "aws:ec2/capacityBlockReservation:CapacityBlockReservation": ApiShape("ec2", ("PurchaseCapacityBlock",)),
    "aws:eks/fargateProfile:FargateProfile": ApiShape(
        "eks", ("CreateFargateProfile",), aliases={"subnetIds": "subnets"}
    ),
    "aws:autoscaling/policy:Policy": ApiShape("autoscaling", ("PutScalingPolicy",)),
    "aws:autoscaling/lifecycleHook:LifecycleHook": ApiShape("autoscaling", ("PutLifecycleHook",)),
    "aws:iam/policy:Policy": ApiShape(
        "iam", ("CreatePolicy",), aliases={"name": "PolicyName", "policy": "PolicyDocument"}
    ),
    "aws:iam/user:User": ApiShape("iam", ("CreateUser",)),
    "aws:kms/keyPolicy:KeyPolicy": ApiShape("kms", ("PutKeyPolicy",)),
    "aws:efs/fileSystem:FileSystem": ApiShape("efs", ("CreateFileSystem", "PutLifecycleConfiguration")),
    "aws:ecr/repository:Repository": ApiShape("ecr", ("CreateRepository",)),
    "aws:lambda/function:Function": ApiShape("lambda", ("CreateFunction",)),
    "aws:cloudwatch/metricAlarm:MetricAlarm": ApiShape(
        "cloudwatch", ("PutMetricAlarm",), aliases={"name": "AlarmName"}
    ),
    "aws:ssm/parameter:Parameter": ApiShape("ssm", ("PutParameter",)),
    "aws:secretsmanager/secret:Secret": ApiShape("secretsmanager", ("CreateSecret",)),
    "aws:sns/topic:Topic": ApiShape("sns", ("CreateTopic",)),
    "aws:budgets/budget:Budget": ApiShape(
        "budgets",
        ("Budget", "CreateBudget"),
        # Terraform flattens each NotificationWithSubscribers into one `notification` block.
        aliases={"notifications": "shape:Notification"},
    ),
    "aws:costexplorer/anomalyMonitor:AnomalyMonitor": ApiShape(
        "ce", ("AnomalyMonitor",), aliases={"name": "MonitorName"}
    ),
    "aws:costexplorer/anomalySubscription:AnomalySubscription": ApiShape(
        "ce", ("AnomalySubscription",), aliases={"name": "SubscriptionName"}
    ),
}

_NUMERIC = frozenset({"integer", "long", "float", "double"})


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _index_free(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path)


class _ApiWalker:
    """Validates one resource's inputs against the API shapes they land in; yields Findings."""

    def __init__(self, r: ResourceRecord, mapping: ApiShape, model: ServiceModel) -> None:
        self.r = r
        self.mapping = mapping
        self.model = model

    def run(self) -> Iterator[Finding]:
        roots = [s for s in (self.model.root(name) for name in self.mapping.roots) if s is not None]
        resource_name = self.r.type.rpartition(":")[2]
        for key, value in self.r.inputs.items():
            if key in self.mapping.foreign:
                yield from self._foreign(value, key)
                continue
            for root in roots:
                target = self._member(root, key, key, resource_name)
                if target is not None:
                    yield from self.value(value, target[1], key, target[0])
                    break

    def _foreign(self, value: Any, path: str) -> Iterator[Finding]:
        service, shape_name = self.mapping.foreign[_index_free(path)]
        model = service_model(service, _service_roots(service))
        shape = model.shape(shape_name) if model is not None else None
        if model is None or shape is None:
            return
        values = value if isinstance(value, list) else [value]
        for index, item in enumerate(values):
            if isinstance(item, str):
                where = join_path(path, index) if isinstance(value, list) else path
                yield from _ApiWalker(self.r, self.mapping, model)._string(item, shape, where)

    def _member(self, structure: Shape, key: str, path: str, parent: str) -> tuple[str, Shape] | None:
        """The member of `structure` an input key lands on: (member name, its shape), or None."""
        alias = self.mapping.aliases.get(_index_free(path))
        if alias is not None:
            if alias.startswith("shape:"):
                shape = self.model.shape(alias[6:])
                return (alias[6:], shape) if shape is not None else None
            wanted = {_fold(alias)}
        else:
            folded = _fold(key)
            wanted = {folded, _fold(parent) + folded, folded + "s", folded.removesuffix("s")}
        for member, shape_name in structure.members.items():
            if _fold(member) in wanted:
                shape = self.model.shape(shape_name)
                return (member, shape) if shape is not None else None
        return None

    def value(self, value: Any, shape: Shape, path: str, member: str) -> Iterator[Finding]:
        if value is None or is_opaque(value):
            return
        kind = shape.type
        if kind == "string" and isinstance(value, str):
            yield from self._string(value, shape, path)
        elif kind in _NUMERIC and isinstance(value, (int, float)) and not isinstance(value, bool):
            if shape.min is not None and value < shape.min:
                yield self._finding(path, f"{_num(value)} is below the minimum {_num(shape.min)}", _range(shape), shape)
            elif shape.max is not None and value > shape.max:
                yield self._finding(path, f"{_num(value)} is above the maximum {_num(shape.max)}", _range(shape), shape)
        elif kind == "list":
            item = self.model.shape(shape.member or "")
            if isinstance(value, list):
                yield from self._size(len(value), "items", shape, path)
                if item is not None:
                    for index, element in enumerate(value):
                        yield from self.value(element, item, join_path(path, index), member)
            elif isinstance(value, dict) and item is not None and item.type == "structure":
                pair = _key_value_members(item)
                if pair is not None:
                    # Tags: a map in Pulumi, a list of {Key, Value} structures in the API.
                    yield from self._size(len(value), "entries", shape, path)
                    key_shape, value_shape = (self.model.shape(item.members[m]) for m in pair)
                    for k, v in value.items():
                        if key_shape is not None and key_shape.type == "string" and not is_opaque(k):
                            yield from self._string(k, key_shape, join_path(path, k), what="key")
                        if value_shape is not None:
                            yield from self.value(v, value_shape, join_path(path, k), member)
                else:
                    # Terraform models a one-item list of structures as a single block (MaxItems 1).
                    yield from self.value(value, item, path, member)
        elif kind == "map" and isinstance(value, dict):
            yield from self._size(len(value), "entries", shape, path)
            key_shape = self.model.shape(shape.key or "")
            value_shape = self.model.shape(shape.value or "")
            for k, v in value.items():
                if is_opaque(k):
                    continue
                if key_shape is not None and key_shape.type == "string":
                    yield from self._string(k, key_shape, join_path(path, k), what="key")
                if value_shape is not None:
                    yield from self.value(v, value_shape, join_path(path, k), member)
        elif kind == "structure":
            if isinstance(value, dict):
                for key, item in value.items():
                    where = join_path(path, key)
                    if _index_free(where) in self.mapping.foreign:
                        yield from self._foreign(item, where)
                        continue
                    target = self._member(shape, key, where, member)
                    if target is not None:
                        yield from self.value(item, target[1], where, target[0])
            elif isinstance(value, list):
                # Terraform's repeated block for what the API takes once per call (a budget's notifications).
                for index, element in enumerate(value):
                    yield from self.value(element, shape, join_path(path, index), member)

    def _string(self, value: str, shape: Shape, path: str, what: str = "value") -> Iterator[Finding]:
        if is_opaque(value):
            return
        if shape.enum:
            allowed = shape.enum + self.mapping.extra.get(_index_free(path), ())
            if value not in allowed:
                yield self._finding(
                    path,
                    f"{what} {value!r} is not one the API accepts{_enum_hint(value, allowed)}",
                    _enum_expected(allowed),
                    shape,
                )
            return
        if shape.min is not None and len(value) < shape.min:
            yield self._finding(
                path,
                f"{what} {preview(value)} is {len(value)} characters, under the minimum {_num(shape.min)}",
                _length(shape),
                shape,
            )
        elif shape.max is not None and len(value) > shape.max:
            yield self._finding(
                path,
                f"{what} {preview(value)} is {len(value)} characters, over the maximum {_num(shape.max)}",
                _length(shape),
                shape,
            )
        if shape.pattern:
            regex = compiled(shape.pattern)
            if regex is not None and not _pattern_accepts(regex, value):
                yield self._finding(
                    path, f"{what} {preview(value)} does not match the API's pattern", f"matches {shape.pattern}", shape
                )

    def _size(self, size: int, unit: str, shape: Shape, path: str) -> Iterator[Finding]:
        if shape.min is not None and size < shape.min:
            yield self._finding(path, f"{size} {unit}, under the minimum {_num(shape.min)}", _count(shape, unit), shape)
        elif shape.max is not None and size > shape.max:
            yield self._finding(path, f"{size} {unit}, over the maximum {_num(shape.max)}", _count(shape, unit), shape)

    def _finding(self, path: str, message: str, expected: str, shape: Shape) -> Finding:
        return Finding(
            "aws.api", "error", self.r.urn, path, message, expected, f"{self.model.source}, shape {shape.name}"
        )


def _pattern_accepts(regex: re.Pattern[str], value: str) -> bool:
    """Whether the service accepts `value` under a model pattern.

    A pattern with an explicit anchor says itself where it applies, so it is searched (Smithy's rule: patterns
    are not implicitly anchored). The older services' unanchored character-class patterns (IAM's
    `[\\w+=,.@-]+` for a role name, Auto Scaling's XML-character class) describe the whole value, which the
    service checks in full: IAM rejects a role name with a space although the class matches its first word.
    """
    if regex.pattern.startswith("^") or regex.pattern.endswith("$"):
        return regex.search(value) is not None
    return regex.fullmatch(value) is not None


def _key_value_members(shape: Shape) -> tuple[str, str] | None:
    """The (Key, Value) member names of a tag-like structure, whatever their case."""
    keys = [m for m in shape.members if m.lower() in ("key", "tagkey")]
    values = [m for m in shape.members if m.lower() in ("value", "tagvalue")]
    return (keys[0], values[0]) if len(keys) == 1 and len(values) == 1 else None


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _range(shape: Shape) -> str:
    low = _num(shape.min) if shape.min is not None else "-inf"
    high = _num(shape.max) if shape.max is not None else "inf"
    return f"a number in [{low}, {high}]"


def _length(shape: Shape) -> str:
    low = _num(shape.min) if shape.min is not None else "0"
    high = _num(shape.max) if shape.max is not None else "any"
    return f"a string of {low} to {high} characters"


def _count(shape: Shape, unit: str) -> str:
    low = _num(shape.min) if shape.min is not None else "0"
    high = _num(shape.max) if shape.max is not None else "any"
    return f"{low} to {high} {unit}"


def _enum_expected(allowed: tuple[str, ...]) -> str:
    if len(allowed) <= _MAX_LISTED:
        return "one of " + ", ".join(allowed)
    return f"one of the {len(allowed)} values of the enum"


def _enum_hint(value: str, allowed: tuple[str, ...]) -> str:
    for candidate in allowed:
        if candidate.lower() == value.lower():
            return f"; did you mean {candidate!r}?"
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


@cache
def _service_roots(service: str) -> tuple[str, ...]:
    """Every root the table names in one service: the service's model is then read (and cached) once."""
    roots = {root for m in API_SHAPES.values() if m.service == service for root in m.roots}
    for m in API_SHAPES.values():
        if m.service == service:
            roots.update(a.removeprefix("shape:") for a in m.aliases.values() if a.startswith("shape:"))
        roots.update(name for svc, name in m.foreign.values() if svc == service)
    return tuple(sorted(roots))


def api_findings(r: ResourceRecord) -> Iterator[Finding]:
    """Findings for one resource's inputs against the AWS API shapes they map onto (none when unmapped)."""
    mapping = API_SHAPES.get(r.type)
    if mapping is None:
        return
    model = service_model(mapping.service, _service_roots(mapping.service))
    if model is None:
        return
    yield from _ApiWalker(r, mapping, model).run()


@register_check("aws.api")
def check_aws_api(ctx: ConformanceContext) -> Iterator[Finding]:
    """AWS resources' inputs against the enums, ranges, lengths and patterns of botocore's service models."""
    yield from _remembered(ctx, "aws.api", "aws", api_findings)
