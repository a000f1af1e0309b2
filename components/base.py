"""Shared base for component config models and the conventions every component follows.

Type tokens are `gpucloud:<module>:<Class>` and frozen once released; children are named
`f"{name}-<role>"` and parented to their component.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, ClassVar

import pulumi
import pulumi_aws as aws
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpucloud.catalog import ec2_regions
from gpucloud.spec import REQUIRED_TAGS


class ComponentConfig(BaseModel):
    """Base of every component's config model: organisation tags and the region are enforced here."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    region: str = Field(description="AWS region the component deploys into.")
    tags: dict[str, str] = Field(description="Cost-allocation tags; CostCenter, Team, Project and Env required.")

    # Old input name -> its name under the toggle rule (create_* / enable_* / use_*). An old name still validates,
    # with a DeprecationWarning, so programs written against it keep working.
    RENAMED: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _renamed_inputs(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls.RENAMED:
            return data
        out = dict(data)
        for old, new in cls.RENAMED.items():
            if old not in out:
                continue
            if new in out:
                raise ValueError(f"give {new} only: {old} is its deprecated name")
            warnings.warn(f"{cls.__name__}: {old} is deprecated, use {new}", DeprecationWarning, stacklevel=2)
            out[new] = out.pop(old)
        return out

    @field_validator("tags")
    @classmethod
    def _org_tags(cls, tags: dict[str, str]) -> dict[str, str]:
        missing = [t for t in (*REQUIRED_TAGS, "Env") if t not in tags]
        if missing:
            raise ValueError(f"missing required tags {missing}")
        return tags

    @field_validator("region")
    @classmethod
    def _known_region(cls, region: str) -> str:
        if region not in ec2_regions():
            raise ValueError(f"unknown AWS region '{region}'")
        return region


def child(parent: pulumi.Resource, **kwargs: Any) -> pulumi.ResourceOptions:
    """Options for a component's child: parented to the component and nothing else implicit."""
    return pulumi.ResourceOptions(parent=parent, **kwargs)


def named_tags(tags: dict[str, str], name: str) -> dict[str, str]:
    return {**tags, "Name": name}


POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"


def account_and_partition(parent: pulumi.Resource | None = None) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """The deploying account id and AWS partition (aws, aws-cn, aws-us-gov), for building ARNs without hard-coding."""
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    return (
        aws.get_caller_identity_output(opts=invoke).account_id,
        aws.get_partition_output(opts=invoke).partition,
    )


def service_trust(service: str, actions: list[str] | None = None) -> str:
    """Assume-role policy for one AWS service principal (e.g. eks.amazonaws.com, ec2.amazonaws.com)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": service}, "Action": actions or ["sts:AssumeRole"]}
            ],
        }
    )


def pod_identity_trust() -> str:
    # sts:TagSession is required: EKS Pod Identity tags every session with cluster, namespace and service account.
    return service_trust(POD_IDENTITY_SERVICE, ["sts:AssumeRole", "sts:TagSession"])
