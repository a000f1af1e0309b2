"""Autonaming as the providers do it in their Check step, so that a previewed resource's name is known.

`pulumi preview` shows (and hands policy packs) a created resource's autoname: the provider's Check fills in
the property the user left out before anything else sees the inputs. Which property, and how:

- pulumi-aws (terraform bridge): every resource whose Terraform schema has a string input ``name`` gets
  ``<resource name>-<7 hex>`` (``ProviderInfo.SetAutonaming(255, "-")``), unless pulumi-aws's
  ``resourceOverrides`` names another property, another length or no autoname at all; those overrides are
  ``_AWS_OVERRIDES`` below (pulumi-aws 7.x provider/resources.go). A property that Terraform declares
  conflicting (``namePrefix``, ``bucketPrefix``) suppresses the default, as the bridge does.
- pulumi-kubernetes: every object without ``metadata.name`` / ``metadata.generateName`` gets
  ``<resource name>-<8 hex>`` plus the annotation ``pulumi.com/autonamed: "true"``
  (provider/pkg/metadata/naming.go); a helm.sh/v3 Release without ``name`` gets ``<resource name>-<8 hex>``.

The providers draw the suffix from a per-deployment random seed, so it differs between previews; offline it
is the start of the SHA-256 of the URN, so that two plans of one program are identical.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class AutoName:
    prop: str  # wire (camelCase) name of the autonamed input
    randlen: int = 7
    maxlen: int = 255
    separator: str = "-"
    lower: bool = False
    prefix: str = ""  # KMS aliases: the name must start with alias/
    fifo_flag: str | None = None  # SQS/SNS: a FIFO queue's or topic's name ends in .fifo
    conflicts: tuple[str, ...] = ("namePrefix",)


# pulumi-aws resourceOverrides: autonamed properties other than the default `name`, other lengths, or None
# for a `name` the provider never autonames (a Route 53 record's name is its DNS name).
_AWS_OVERRIDES: dict[str, AutoName | None] = {
    "aws:iam/role:Role": AutoName("name", maxlen=64),
    "aws:eks/nodeGroup:NodeGroup": AutoName("nodeGroupName", conflicts=("nodeGroupNamePrefix",)),
    "aws:eks/fargateProfile:FargateProfile": AutoName("fargateProfileName"),
    "aws:s3/bucket:Bucket": AutoName("bucket", maxlen=63, lower=True, conflicts=("bucketPrefix",)),
    "aws:s3/bucketV2:BucketV2": AutoName("bucket", maxlen=63, lower=True, conflicts=("bucketPrefix",)),
    "aws:kms/alias:Alias": AutoName("name", maxlen=238, prefix="alias/"),
    "aws:cloudwatch/eventRule:EventRule": AutoName("name", maxlen=64),
    "aws:cloudwatch/eventTarget:EventTarget": AutoName("targetId", conflicts=()),
    "aws:lambda/function:Function": AutoName("name", maxlen=64),
    "aws:lambda/permission:Permission": AutoName("statementId", maxlen=100, conflicts=("statementIdPrefix",)),
    "aws:ec2/keyPair:KeyPair": AutoName("keyName", conflicts=("keyNamePrefix",)),
    "aws:efs/fileSystem:FileSystem": AutoName("creationToken", conflicts=()),
    "aws:elasticache/cluster:Cluster": AutoName("clusterId", maxlen=50, lower=True, conflicts=()),
    "aws:elasticache/replicationGroup:ReplicationGroup": AutoName(
        "replicationGroupId", maxlen=40, lower=True, conflicts=()
    ),
    "aws:elasticbeanstalk/environment:Environment": AutoName("name", maxlen=40),
    "aws:sqs/queue:Queue": AutoName("name", maxlen=80, fifo_flag="fifoQueue"),
    "aws:sns/topic:Topic": AutoName("name", maxlen=80, fifo_flag="fifoTopic"),
    "aws:msk/cluster:Cluster": AutoName("clusterName", conflicts=()),
    "aws:msk/serverlessCluster:ServerlessCluster": AutoName("clusterName", conflicts=()),
    "aws:opensearch/domain:Domain": AutoName("domainName", conflicts=()),
    "aws:elasticsearch/domain:Domain": AutoName("domainName", maxlen=28, lower=True, conflicts=()),
    "aws:mq/broker:Broker": AutoName("brokerName", maxlen=55, conflicts=()),
    "aws:rds/instance:Instance": AutoName("identifier", conflicts=("identifierPrefix",)),
    "aws:athena/database:Database": AutoName("name", separator="_"),
    "aws:iot/topicRule:TopicRule": AutoName("name", separator="_"),
    "aws:backup/restoreTestingPlan:RestoreTestingPlan": AutoName("name", separator="_"),
    "aws:route53/record:Record": None,
    "aws:directoryservice/directory:Directory": None,
}

K8S_AUTONAMED = "pulumi.com/autonamed"
_HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def suffix(urn: str, length: int) -> str:
    return hashlib.sha256(urn.encode()).hexdigest()[:length]


def aws_rule(type_: str) -> AutoName | None:
    """The autoname rule of a pulumi-aws resource type, or None when the provider autonames nothing."""
    if type_ in _AWS_OVERRIDES:
        return _AWS_OVERRIDES[type_]
    return AutoName("name") if _has_string_name_input(type_) else None


@cache
def _has_string_name_input(type_: str) -> bool:
    """Whether the SDK class of a type takes a string `name` input: the SDK mirrors the Terraform schema's
    inputs, so this is the bridge's SetAutonaming test. The class is found through the resource-module registry
    the SDK fills at import (the same one Pulumi uses to rehydrate resource references)."""
    from pulumi.runtime import rpc

    try:
        pkg, mod, _member = type_.split(":")
    except ValueError:
        return False
    for module in rpc._RESOURCE_MODULES.get(f"{pkg}:{mod}", []):
        info = getattr(module, "mod_info", None)
        if not isinstance(info, dict) or type_ not in info.get("classes", {}):
            continue
        try:
            cls = getattr(importlib.import_module(info["fqn"]), info["classes"][type_])
            param = inspect.signature(cls._internal_init).parameters.get("name")
        except (ImportError, AttributeError, TypeError, ValueError):
            return False
        return param is not None and "str" in str(param.annotation)
    return False


def aws_autoname(type_: str, name: str, urn: str, inputs: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(property, autoname, problem) for a pulumi-aws resource that leaves its autonamed property out; `problem`
    is the error the provider's Check gives when the name plus its suffix exceeds the property's length."""
    rule = aws_rule(type_)
    if rule is None or inputs.get(rule.prop) not in (None, ""):
        return None
    if any(inputs.get(c) not in (None, "") for c in rule.conflicts):
        return None
    value = f"{name}{rule.separator}{suffix(urn, rule.randlen)}"
    problem = None
    if len(name) + len(rule.separator) + rule.randlen > rule.maxlen:
        # The provider's own words (resource.NewUniqueName), then what to do about it.
        problem = (
            f"{urn}: {rule.prop}: name '{name}{rule.separator}' plus {rule.randlen} random chars is longer than "
            f"maximum length {rule.maxlen}; set {rule.prop} or give the resource a shorter name"
        )
    if rule.lower:
        value = value.lower()
    if rule.prefix and not value.startswith(rule.prefix):
        value = rule.prefix + value
    if rule.fifo_flag and inputs.get(rule.fifo_flag) is True:
        value += ".fifo"
    return rule.prop, value, problem


def k8s_autoname(type_: str, name: str, urn: str, inputs: dict[str, Any]) -> tuple[str, str] | None:
    """("name" or "metadata.name", autoname) for a pulumi-kubernetes custom resource its Check would name."""
    if type_ == _HELM_RELEASE:
        return None if inputs.get("name") not in (None, "") else ("name", f"{name}-{suffix(urn, 8)}")
    # List kinds cannot be created, and a Patch must name the object it patches: neither is autonamed.
    if type_.startswith("kubernetes:helm.sh/") or type_.endswith(("List", "Patch")):
        return None
    metadata = inputs.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict) or metadata.get("name") or metadata.get("generateName")
    ):
        return None
    return "metadata.name", f"{name}-{suffix(urn, 8)}"
