"""One way to give pods an AWS identity: an IAM role that only EKS Pod Identity can assume, and the association
that binds it to a service account. Every component's Pod Identity role and association is made here."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpucloud.components.base import pod_identity_trust


def pod_identity_role(
    resource_name: str,
    *,
    description: pulumi.Input[str],
    tags: pulumi.Input[dict[str, str]],
    opts: pulumi.ResourceOptions,
) -> aws.iam.Role:
    """A role whose trust policy admits EKS Pod Identity only (sts:AssumeRole and sts:TagSession)."""
    return aws.iam.Role(
        resource_name, assume_role_policy=pod_identity_trust(), description=description, tags=tags, opts=opts
    )


def pod_identity_association(
    resource_name: str,
    *,
    cluster_name: pulumi.Input[str],
    namespace: pulumi.Input[str],
    service_account: pulumi.Input[str],
    role_arn: pulumi.Input[str],
    tags: pulumi.Input[dict[str, str]],
    opts: pulumi.ResourceOptions,
) -> aws.eks.PodIdentityAssociation:
    """Pods of `namespace`/`service_account` get `role_arn`'s credentials from the Pod Identity agent."""
    return aws.eks.PodIdentityAssociation(
        resource_name,
        cluster_name=cluster_name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role_arn,
        tags=tags,
        opts=opts,
    )
