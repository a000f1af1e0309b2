"""The FSx file system inside Kubernetes: the aws-fsx-csi-driver EKS add-on with its own scoped IAM role, a
static PersistentVolume + PersistentVolumeClaim that training jobs mount, and an optional StorageClass that
provisions throwaway SCRATCH_2 file systems per claim.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field

from gpucloud import versions
from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.storage._common import policy_json, trust_policy
from gpucloud.components.storage.fsx import FSX_S3_SERVICE_ROLE_PATH, LustreStorage
from gpucloud.spec.storage import CsiSpec

CSI_DRIVER = "fsx.csi.aws.com"
ADDON_NAME = "aws-fsx-csi-driver"
CONTROLLER_NAMESPACE = "kube-system"
CONTROLLER_SERVICE_ACCOUNT = "fsx-csi-controller-sa"


class FsxCsiConfig(ComponentConfig):
    """Inputs of FsxCsi."""

    name_prefix: str = Field(description="Platform name, used in descriptions.")
    csi: CsiSpec = Field(default_factory=CsiSpec, description="Driver, volume and StorageClass settings.")
    use_pod_identity: bool = Field(
        default=True, description="Give the driver its role through Pod Identity (false: IRSA)."
    )


class FsxCsi(pulumi.ComponentResource):
    """The FSx CSI driver add-on and the Kubernetes objects that expose the file system to pods."""

    def __init__(
        self,
        name: str,
        config: FsxCsiConfig,
        cluster: ClusterHandle,
        *,
        file_system: LustreStorage | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:storage:FsxCsi", name, None, opts)
        csi = config.csi
        wants_k8s = file_system is not None and (csi.create_volume or csi.create_storage_class)
        if wants_k8s and cluster.k8s_provider is None:
            raise ValueError(f"{name}: the PersistentVolume, claim and StorageClass need cluster.k8s_provider")
        account_id, partition = account_and_partition(self)

        self.driver_role: aws.iam.Role | None = None
        self.addon: aws.eks.Addon | None = None
        if csi.create_addon:
            self.driver_role = aws.iam.Role(
                f"{name}-driver",
                description=f"{config.name_prefix}: FSx for Lustre CSI controller",
                assume_role_policy=trust_policy(
                    use_pod_identity=config.use_pod_identity,
                    account_id=account_id,
                    oidc_provider_arn=cluster.oidc_provider_arn,
                    oidc_provider_url=cluster.oidc_provider_url,
                    namespace=CONTROLLER_NAMESPACE,
                    service_accounts=[CONTROLLER_SERVICE_ACCOUNT],
                ),
                tags=config.tags,
                opts=child(self),
            )
            aws.iam.RolePolicy(
                f"{name}-driver-fsx",
                role=self.driver_role.id,
                policy=pulumi.Output.all(partition, account_id).apply(
                    lambda v: driver_policy(str(v[0]), str(v[1]), config.region, csi.create_storage_class)
                ),
                opts=child(self),
            )
            role_arn = self.driver_role.arn
            self.addon = aws.eks.Addon(
                f"{name}-addon",
                cluster_name=cluster.name,
                addon_name=ADDON_NAME,
                # The spec's build, else the versions table's for the cluster minor (None where no source names one).
                addon_version=csi.addon_version or versions.addon_build(cluster.kubernetes_version, ADDON_NAME),
                pod_identity_associations=[
                    aws.eks.AddonPodIdentityAssociationArgs(
                        role_arn=role_arn, service_account=CONTROLLER_SERVICE_ACCOUNT
                    )
                ]
                if config.use_pod_identity
                else None,
                service_account_role_arn=None if config.use_pod_identity else role_arn,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                tags=config.tags,
                opts=child(self),
            )

        self.namespace: k8s.core.v1.Namespace | None = None
        self.persistent_volume: k8s.core.v1.PersistentVolume | None = None
        self.claim: k8s.core.v1.PersistentVolumeClaim | None = None
        self.storage_class: k8s.storage.v1.StorageClass | None = None
        self.claim_name: str | None = None
        self.claim_namespace: str | None = None
        if file_system is not None and wants_k8s:
            k8s_opts = {"provider": cluster.k8s_provider}
            after_driver: list[pulumi.Resource] = [self.addon] if self.addon is not None else []
            if csi.create_volume:
                if csi.create_namespace:
                    self.namespace = k8s.core.v1.Namespace(
                        f"{name}-namespace",
                        metadata=k8s.meta.v1.ObjectMetaArgs(name=csi.namespace),
                        opts=child(self, **k8s_opts),
                    )
                self._static_volume(name, csi, file_system, after_driver, k8s_opts)
            if csi.create_storage_class:
                self.storage_class = k8s.storage.v1.StorageClass(
                    f"{name}-scratch-class",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=csi.storage_class_name),
                    provisioner=CSI_DRIVER,
                    parameters={
                        "subnetId": file_system.subnet_id,
                        "securityGroupIds": file_system.security_group_id,
                        "deploymentType": "SCRATCH_2",
                        "dataCompressionType": "LZ4",
                        "fileSystemTypeVersion": "2.15",
                    },
                    # Dynamic volumes are scratch space for one claim: deleting the claim deletes the file system.
                    reclaim_policy="Delete",
                    volume_binding_mode="Immediate",
                    mount_options=["flock"],
                    opts=child(self, depends_on=after_driver, **k8s_opts),
                )

        self.driver_role_arn: pulumi.Output[str] | None = self.driver_role.arn if self.driver_role else None
        self.register_outputs(
            {
                "driver_role_arn": self.driver_role_arn,
                "claim_name": self.claim_name,
                "claim_namespace": self.claim_namespace,
                "storage_class_name": csi.storage_class_name if self.storage_class else None,
            }
        )

    def _static_volume(
        self,
        name: str,
        csi: CsiSpec,
        fs: LustreStorage,
        after_driver: list[pulumi.Resource],
        k8s_opts: dict[str, pulumi.ProviderResource | None],
    ) -> None:
        self.persistent_volume, self.claim = static_lustre_claim(
            name,
            namespace=csi.namespace,
            claim_name=csi.claim_name,
            pv_name=f"{csi.namespace}-{csi.claim_name}",
            labels={"gpucloud/storage": "fsx-lustre"},
            file_system_id=fs.file_system_id,
            dns_name=fs.dns_name,
            mount_name=fs.mount_name,
            capacity_gib=fs.storage_capacity_gib,
            pv_opts=child(self, depends_on=after_driver, **k8s_opts),
            pvc_opts=lambda pv: child(self, depends_on=[r for r in (self.namespace, pv) if r is not None], **k8s_opts),
        )
        self.claim_name = csi.claim_name
        self.claim_namespace = csi.namespace


def static_lustre_claim(
    name: str,
    *,
    namespace: str,
    claim_name: str,
    pv_name: str,
    labels: dict[str, str],
    file_system_id: pulumi.Input[str],
    dns_name: pulumi.Input[str],
    mount_name: pulumi.Input[str],
    capacity_gib: pulumi.Input[float],
    pv_opts: pulumi.ResourceOptions,
    pvc_opts: Callable[[k8s.core.v1.PersistentVolume], pulumi.ResourceOptions],
) -> tuple[k8s.core.v1.PersistentVolume, k8s.core.v1.PersistentVolumeClaim]:
    """A static PersistentVolume on an FSx for Lustre file system and the one claim that binds it.

    Used by the platform (its own claim) and by team stacks (a claim in the team's namespace on the same file
    system): claims are namespaced, so each namespace needs its own PV pointing at the file system.
    """
    capacity = pulumi.Output.from_input(capacity_gib).apply(lambda gib: {"storage": f"{int(gib)}Gi"})
    pv = k8s.core.v1.PersistentVolume(
        f"{name}-pv",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=pv_name, labels=labels),
        spec=k8s.core.v1.PersistentVolumeSpecArgs(
            capacity=capacity,
            volume_mode="Filesystem",
            access_modes=["ReadWriteMany"],
            mount_options=["flock"],
            # Deleting the claim must never touch the file system: the data lives on, the PV is re-bound.
            persistent_volume_reclaim_policy="Retain",
            # "" disables dynamic provisioning, so only this claim (claimRef) can bind the volume.
            storage_class_name="",
            claim_ref=k8s.core.v1.ObjectReferenceArgs(namespace=namespace, name=claim_name),
            csi=k8s.core.v1.CSIPersistentVolumeSourceArgs(
                driver=CSI_DRIVER,
                volume_handle=file_system_id,
                volume_attributes={"dnsname": dns_name, "mountname": mount_name},
            ),
        ),
        opts=pv_opts,
    )
    claim = k8s.core.v1.PersistentVolumeClaim(
        f"{name}-pvc",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=claim_name, namespace=namespace),
        spec=k8s.core.v1.PersistentVolumeClaimSpecArgs(
            access_modes=["ReadWriteMany"],
            storage_class_name="",
            volume_name=pv.metadata.name,
            resources=k8s.core.v1.VolumeResourceRequirementsArgs(requests=capacity),
        ),
        opts=pvc_opts(pv),
    )
    return pv, claim


def driver_policy(partition: str, account_id: str, region: str, dynamic: bool) -> str:
    """The CSI controller's permissions, scoped down from AmazonFSxFullAccess.

    Static volumes need no AWS call at all (nodes mount by DNS name); DescribeFileSystems stays for the driver's
    health and resize paths. Dynamic (StorageClass) volumes add create/update/delete of file systems in this
    account and region, and the service-linked roles FSx needs on first use.
    """
    file_systems = f"arn:{partition}:fsx:{region}:{account_id}:file-system/*"
    statements: list[dict[str, object]] = [
        {
            # DescribeFileSystems accepts only Resource "*" (Service Authorization Reference): scoped to
            # file-system ARNs AWS never matches it.
            "Sid": "DescribeFileSystems",
            "Effect": "Allow",
            "Action": ["fsx:DescribeFileSystems"],
            "Resource": "*",
        }
    ]
    if dynamic:
        statements += [
            {
                "Sid": "ManageScratchFileSystems",
                "Effect": "Allow",
                "Action": ["fsx:CreateFileSystem", "fsx:DeleteFileSystem", "fsx:TagResource", "fsx:UpdateFileSystem"],
                "Resource": file_systems,
            },
            {
                "Sid": "FsxServiceLinkedRole",
                "Effect": "Allow",
                "Action": ["iam:CreateServiceLinkedRole"],
                "Resource": f"arn:{partition}:iam::{account_id}:role/aws-service-role/fsx.amazonaws.com/*",
                "Condition": {"StringEquals": {"iam:AWSServiceName": "fsx.amazonaws.com"}},
            },
            {
                "Sid": "FsxS3ServiceLinkedRole",
                "Effect": "Allow",
                "Action": ["iam:AttachRolePolicy", "iam:CreateServiceLinkedRole", "iam:PutRolePolicy"],
                "Resource": f"arn:{partition}:iam::{account_id}:role/{FSX_S3_SERVICE_ROLE_PATH}/*",
            },
        ]
    return policy_json(statements)
