"""EBS CSI driver (managed add-on with Pod Identity) and the encrypted gp3 default StorageClass."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpucloud import versions
from gpucloud.components.addons.base import AddonsBase
from gpucloud.components.addons.common import EBS_CSI_SERVICE_ACCOUNT, EBS_STORAGE_CLASS
from gpucloud.components.base import account_and_partition, child
from gpucloud.components.pod_identity import pod_identity_role


class EbsStorageMixin(AddonsBase):
    """Persistent volumes for the add-ons that keep state (Prometheus)."""

    def _ebs_storage(self) -> k8s.storage.v1.StorageClass:
        """EBS CSI driver (managed add-on, Pod Identity) and an encrypted gp3 StorageClass for stateful add-ons."""
        key_arn = self._cluster.kms_key_arn
        # The driver creates and attaches volumes encrypted with the cluster key: it needs the key's data
        # actions and grants for the EC2 attachments (the key policy delegates to IAM).
        policy = pulumi.Output.from_input(key_arn).apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": [
                                "kms:Encrypt",
                                "kms:Decrypt",
                                "kms:ReEncrypt*",
                                "kms:GenerateDataKey*",
                                "kms:DescribeKey",
                            ],
                            "Resource": arn,
                        },
                        {
                            "Effect": "Allow",
                            "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"],
                            "Resource": arn,
                            "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
                        },
                    ],
                }
            )
        )
        _, partition = account_and_partition(self)
        managed = partition.apply(lambda p: f"arn:{p}:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy")
        role = pod_identity_role(
            f"{self._name}-ebs-csi-role",
            description=f"Pod Identity role of kube-system/{EBS_CSI_SERVICE_ACCOUNT}",
            tags=self._config.tags,
            opts=child(self),
        )
        kms = aws.iam.RolePolicy(f"{self._name}-ebs-csi-kms", role=role.name, policy=policy, opts=child(self))
        attach = aws.iam.RolePolicyAttachment(
            f"{self._name}-ebs-csi-managed-0", role=role.name, policy_arn=managed, opts=child(self)
        )
        self.ebs_csi_driver = aws.eks.Addon(
            f"{self._name}-ebs-csi-driver",
            cluster_name=self._cluster.name,
            addon_name="aws-ebs-csi-driver",
            # The versions table's build for the cluster minor (None where no source names one: EKS's default).
            addon_version=versions.addon_build(self._cluster.kubernetes_version, "aws-ebs-csi-driver"),
            pod_identity_associations=[{"role_arn": role.arn, "service_account": EBS_CSI_SERVICE_ACCOUNT}],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._config.tags,
            opts=child(self, depends_on=[kms, attach]),
        )
        self.storage_class = k8s.storage.v1.StorageClass(
            f"{self._name}-gp3",
            metadata={"name": EBS_STORAGE_CLASS},
            provisioner="ebs.csi.aws.com",
            parameters={"type": "gp3", "encrypted": "true", "kmsKeyId": key_arn},
            # A volume is created in the AZ of the node its pod lands on, never in one it cannot attach from.
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            reclaim_policy="Retain" if self._config.protect_data else "Delete",
            opts=self._k8s(depends_on=[self.ebs_csi_driver]),
        )
        return self.storage_class
