"""Conformance of every provider resource's recorded inputs to what the provider and the AWS API accept.

Two checks, both on the engine view the plan records (camelCase keys, numbers as floats; the unknown sentinel and
masked secrets match anything):

* ``aws.inputs`` / ``kubernetes.inputs``: each AWS resource (and each pulumi-kubernetes resource that is not a
  Kubernetes API object, such as ``helm.sh/v3:Release``; API objects are the OpenAPI schema check's) against its
  input type in the installed provider SDK (`gpucloud.conformance.provider_types`): keys the type does not declare,
  values of the wrong JSON type, required inputs that are missing, recursively through nested input types. These
  are the failures the bridged provider's Check reports (pulumi-terraform-bridge's type checker: "an unexpected
  argument was provided", "expected array type, got string type") and Terraform's own validation rejects ("Invalid
  or unknown key", "Missing required argument"). JSON types follow the bridge's coercions: a string input takes
  numbers and booleans, a number input takes numeric strings, a boolean input takes "true"/"false".
* ``aws.api``: where a resource's inputs map onto an AWS API request shape (`API_SHAPES`), the enums, numeric
  ranges, string lengths and patterns of botocore's bundled service models (`gpucloud.conformance.botocore_models`)
  for each input whose name matches a member of the shape: the values the API call at `pulumi up` would refuse.

Provider resources (``pulumi:providers:*``) and component resources are not checked.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.botocore_models import ServiceModel, Shape, compiled, service_model
from gpucloud.conformance.provider_types import (
    InputType,
    ObjectSchema,
    UnknownResourceType,
    object_schema,
    resource_schema,
    resource_types,
    sdk_label,
)
from gpucloud.conformance.verdicts import VerdictStore
from gpucloud.plan.model import SECRET, UNKNOWN, ResourceRecord

# strconv.ParseBool, which the bridge uses to read a string as a boolean.
_BOOL_STRINGS = frozenset({"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})
_MAX_LISTED = 14


# The SDK's tag for a special value inside a property map (pulumi.runtime.rpc._special_sig_key).
_SPECIAL_SIG = "4dabf18193072939515e22adb298388d"


def is_opaque(value: Any) -> bool:
    """Unknown until `up`, or a secret (masked, or still in the wire's secret wrapper): such a value matches every
    type and constraint, as the provider's checker lets computed and secret values through."""
    if isinstance(value, str):
        return value == SECRET or UNKNOWN in value
    return isinstance(value, dict) and _SPECIAL_SIG in value


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def preview(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def listing(names: list[str] | tuple[str, ...]) -> str:
    shown = sorted(names)
    more = len(shown) - _MAX_LISTED
    return ", ".join(shown[:_MAX_LISTED]) + (f", ... ({more} more)" if more > 0 else "")


def did_you_mean(key: str, candidates: list[str]) -> str | None:
    """The closest declared name: same letters ignoring case and underscores first, then difflib's best."""
    folded = key.replace("_", "").replace("-", "").lower()
    for name in candidates:
        if name.lower() == folded:
            return name
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[c] for c in difflib.get_close_matches(folded, list(lowered), n=1, cutoff=0.6)]
    return close[0] if close else None


# ---------------------------------------------------------------------------------------------------------------
# Provider input types


class _TypeWalker:
    """Validates one resource's inputs against its input type; yields (field, message, expected, source)."""

    def object(self, value: dict[str, Any], schema: ObjectSchema, path: str) -> Iterator[tuple[str, str, str, str]]:
        for name in sorted(schema.required):
            if value.get(name) is None:
                yield (
                    join_path(path, name),
                    f"required input {name!r} is missing",
                    f"{name} set ({schema.props[name].describe()})",
                    schema.source,
                )
        for key, item in value.items():
            declared = schema.props.get(key)
            where = join_path(path, key)
            if declared is None:
                guess = did_you_mean(key, list(schema.props))
                hint = f"; did you mean {guess!r}?" if guess else ""
                yield (
                    where,
                    f"unknown input {key!r}{hint}",
                    f"an input of {schema.name}: {listing(list(schema.props))}",
                    schema.source,
                )
                continue
            yield from self.value(item, declared, where, schema)

    def value(
        self, value: Any, declared: InputType, path: str, owner: ObjectSchema
    ) -> Iterator[tuple[str, str, str, str]]:
        if value is None or is_opaque(value) or declared.kind == "any":
            return
        kind = declared.kind
        if kind == "union":
            for option in declared.options:
                if not any(True for _ in self.value(value, option, path, owner)):
                    return
            yield self._mismatch(value, declared, path, owner)
        elif kind == "string" or kind == "resource":
            if isinstance(value, (list, dict)):
                yield self._mismatch(value, declared, path, owner)
            elif declared.values and isinstance(value, str) and value not in declared.values:
                yield (path, f"{preview(value)} is not a value this input admits", declared.describe(), owner.source)
        elif kind in ("number", "integer"):
            number: float | None = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str):
                try:
                    number = float(value)
                except ValueError:
                    number = None
            if number is None or math.isnan(number):
                yield self._mismatch(value, declared, path, owner)
            elif kind == "integer" and not number.is_integer():
                yield (path, f"{preview(value)} is not a whole number", "integer", owner.source)
        elif kind == "boolean":
            if not (isinstance(value, bool) or (isinstance(value, str) and value in _BOOL_STRINGS)):
                yield self._mismatch(value, declared, path, owner)
        elif kind == "array":
            if not isinstance(value, list):
                yield self._mismatch(value, declared, path, owner)
                return
            for index, item in enumerate(value):
                if declared.items is not None:
                    yield from self.value(item, declared.items, join_path(path, index), owner)
        elif kind == "map":
            if not isinstance(value, dict):
                yield self._mismatch(value, declared, path, owner)
                return
            for key, item in value.items():
                # As the bridge's checker: keys starting "__" are the engine's own bookkeeping.
                if declared.items is not None and not key.startswith("__"):
                    yield from self.value(item, declared.items, join_path(path, key), owner)
        elif kind == "object" and declared.cls is not None:
            if not isinstance(value, dict):
                yield self._mismatch(value, declared, path, owner)
                return
            yield from self.object(value, object_schema(declared.cls), path)

    @staticmethod
    def _mismatch(value: Any, declared: InputType, path: str, owner: ObjectSchema) -> tuple[str, str, str, str]:
        return (
            path,
            f"{preview(value)} is {_article(json_kind(value))}, not {_article(declared.describe())}",
            declared.describe(),
            owner.source,
        )


def _article(text: str) -> str:
    return ("an " if text[:1] in "aeiou" else "a ") + text


def _checked_resources(ctx: ConformanceContext, package: str) -> Iterator[ResourceRecord]:
    for r in ctx.plan.resources:
        if r.custom and r.type.partition(":")[0] == package:
            yield r


def provider_input_findings(r: ResourceRecord, check: str) -> Iterator[Finding]:
    """Findings for one resource's inputs against its provider input type (none when the type is not read)."""
    try:
        schema = resource_schema(r.type)
    except UnknownResourceType:
        package = r.type.partition(":")[0]
        guess = did_you_mean(r.type, list(resource_types(package)))
        hint = f"; did you mean {guess!r}?" if guess else ""
        yield Finding(
            check,
            "error",
            r.urn,
            "type",
            f"{r.type} is not a resource type of the installed provider{hint}",
            "a resource type token the provider defines",
            f"{sdk_label(package)} resource registry",
        )
        return
    if schema is None or schema.kubernetes_object:
        return
    for where, message, expected, source in _TypeWalker().object(r.inputs, schema.args, ""):
        yield Finding(check, "error", r.urn, where, message, expected, source)


def _guarded(check: str, r: ResourceRecord, produce: Callable[[ResourceRecord], Iterator[Finding]]) -> list[Finding]:
    """One resource's findings; a failure inside the check becomes a warning on that resource, not a traceback
    that loses every other resource's findings."""
    try:
        return list(produce(r))
    except Exception as exc:  # any failure of the check itself, reported and contained
        return [
            Finding(
                check,
                "warning",
                r.urn,
                "",
                f"the check could not read this resource's inputs: {type(exc).__name__}: {exc}",
                "a resource the check can read",
                "gpucloud conformance",
            )
        ]


def _aws_input_findings(r: ResourceRecord) -> Iterator[Finding]:
    return provider_input_findings(r, "aws.inputs")


def _kubernetes_input_findings(r: ResourceRecord) -> Iterator[Finding]:
    return provider_input_findings(r, "kubernetes.inputs")


_CODE = tuple(
    Path(__file__).with_name(n) for n in ("aws_inputs.py", "provider_types.py", "botocore_models.py", "verdicts.py")
)


def _versions() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("pulumi", "pulumi-aws", "pulumi-kubernetes", "botocore"):
        try:
            out.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist}=none")
    return out


def _remembered(
    ctx: ConformanceContext, check: str, package: str, produce: Callable[[ResourceRecord], Iterator[Finding]]
) -> Iterator[Finding]:
    """Run a per-resource check, skipping resources whose identical inputs it found clean before (see verdicts)."""
    store = VerdictStore.load(check, _versions(), _CODE)
    for r in _checked_resources(ctx, package):
        digest = store.digest(r.type, r.inputs)
        if store.known_valid(digest):
            continue
        found = _guarded(check, r, produce)
        store.record(digest, found)
        yield from found
    store.save()


@register_check("aws.inputs")
def check_aws_inputs(ctx: ConformanceContext) -> Iterator[Finding]:
    """Every AWS resource's inputs against its pulumi-aws input type."""
    yield from _remembered(ctx, "aws.inputs", "aws", _aws_input_findings)


@register_check("kubernetes.inputs")
def check_kubernetes_inputs(ctx: ConformanceContext) -> Iterator[Finding]:
    """pulumi-kubernetes resources that are not API objects (helm.v3.Release) against their input types."""
    yield from _remembered(ctx, "kubernetes.inputs", "kubernetes", _kubernetes_input_findings)


# ---------------------------------------------------------------------------------------------------------------
# AWS API constraints (botocore models)


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
