"""Dataset and checkpoint buckets: private, KMS-encrypted, versioned, TLS-only, with lifecycle rules; a KMS key;
and reader/writer IAM roles for Kubernetes service accounts (Pod Identity or IRSA) scoped to bucket prefixes.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
from pydantic import Field

from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.pod_identity import pod_identity_association
from gpucloud.components.storage._common import (
    data_options,
    dns_suffix,
    generated_bucket_name,
    policy_json,
    trust_policy,
)
from gpucloud.spec.storage import (
    AccessLogsSpec,
    BucketSpec,
    CheckpointBucketSpec,
    DatasetBucketSpec,
    StorageAccessSpec,
)


class DataBucketsConfig(ComponentConfig):
    """Inputs of DataBuckets."""

    name_prefix: str = Field(description="Prefix of generated bucket names (the platform name).")
    dataset: DatasetBucketSpec = Field(default_factory=DatasetBucketSpec, description="Dataset bucket settings.")
    checkpoint: CheckpointBucketSpec = Field(
        default_factory=CheckpointBucketSpec, description="Checkpoint bucket settings."
    )
    access: StorageAccessSpec = Field(default_factory=StorageAccessSpec, description="Reader/writer roles.")
    access_logs: AccessLogsSpec = Field(default_factory=AccessLogsSpec, description="Server access logging.")
    kms_key_arn: str | None = Field(default=None, description="Existing KMS key ARN; None creates one.")
    allow_data_deletion: bool = Field(
        default=False, description="Let destroy delete the buckets (force_destroy) and the key; off retains them."
    )
    protect: bool = Field(default=False, description="Also protect data-holding resources (prod).")


class DataBuckets(pulumi.ComponentResource):
    """Two private buckets (datasets, checkpoints), their KMS key and the roles that read and write them."""

    def __init__(
        self,
        name: str,
        config: DataBucketsConfig,
        cluster: ClusterHandle | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpucloud:storage:DataBuckets", name, None, opts)
        self._config = config
        keep = not config.allow_data_deletion
        account_id, partition = account_and_partition(self)
        self._account_id = account_id
        self._partition = partition
        suffix = dns_suffix(config.region)

        self.kms_key: aws.kms.Key | None = None
        if config.kms_key_arn is None:
            self.kms_key = aws.kms.Key(
                f"{name}-key",
                description=f"{config.name_prefix} datasets, checkpoints and FSx for Lustre",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=pulumi.Output.all(account_id, partition).apply(
                    lambda v: _key_policy(str(v[0]), str(v[1]), config.region, suffix)
                ),
                tags=config.tags,
                opts=data_options(self, keep=keep, protect=config.protect),
            )
            aws.kms.Alias(
                f"{name}-key-alias",
                name=f"alias/{config.name_prefix}-storage",
                target_key_id=self.kms_key.key_id,
                opts=child(self),
            )
            self.kms_key_arn: pulumi.Output[str] = self.kms_key.arn
        else:
            self.kms_key_arn = pulumi.Output.from_input(config.kms_key_arn)

        self.log_bucket: aws.s3.Bucket | None = None
        self.log_bucket_name: pulumi.Output[str] | None = None
        if config.access_logs.enabled:
            self.log_bucket_name = self._log_bucket(name, keep)

        self.dataset_bucket_name, self.dataset_bucket = self._bucket(name, "datasets", config.dataset, keep)
        self.checkpoint_bucket_name, self.checkpoint_bucket = self._bucket(name, "checkpoints", config.checkpoint, keep)
        self.dataset_bucket_arn = self._arn(self.dataset_bucket_name)
        self.checkpoint_bucket_arn = self._arn(self.checkpoint_bucket_name)
        self.checkpoint_uri = pulumi.Output.concat("s3://", self.checkpoint_bucket_name, "/", config.checkpoint.prefix)

        self.reader_role: aws.iam.Role | None = None
        self.writer_role: aws.iam.Role | None = None
        self.pod_identity_associations: list[aws.eks.PodIdentityAssociation] = []
        if cluster is not None:
            access = config.access
            if access.reader_service_accounts:
                self.reader_role = self._role(name, "reader", cluster, access.reader_service_accounts, write=False)
            if access.writer_service_accounts:
                self.writer_role = self._role(name, "writer", cluster, access.writer_service_accounts, write=True)
        self.reader_role_arn: pulumi.Output[str] | None = self.reader_role.arn if self.reader_role else None
        self.writer_role_arn: pulumi.Output[str] | None = self.writer_role.arn if self.writer_role else None

        self.register_outputs(
            {
                "dataset_bucket_name": self.dataset_bucket_name,
                "dataset_bucket_arn": self.dataset_bucket_arn,
                "checkpoint_bucket_name": self.checkpoint_bucket_name,
                "checkpoint_bucket_arn": self.checkpoint_bucket_arn,
                "checkpoint_uri": self.checkpoint_uri,
                "kms_key_arn": self.kms_key_arn,
                "reader_role_arn": self.reader_role_arn,
                "writer_role_arn": self.writer_role_arn,
                "log_bucket_name": self.log_bucket_name,
            }
        )

    def _arn(self, bucket_name: pulumi.Input[str]) -> pulumi.Output[str]:
        return pulumi.Output.concat("arn:", self._partition, ":s3:::", bucket_name)

    def _bucket_name(self, given: str | None, role: str) -> pulumi.Output[str]:
        config = self._config
        if given is not None:
            return pulumi.Output.from_input(given)
        return self._account_id.apply(
            lambda account: generated_bucket_name(config.name_prefix, role, account, config.region)
        )

    def _log_bucket(self, name: str, keep: bool) -> pulumi.Output[str]:
        """The log target: the given bucket, or a private SSE-S3 bucket only the S3 logging service writes to."""
        config = self._config
        logs = config.access_logs
        if logs.bucket is not None:
            return pulumi.Output.from_input(logs.bucket)
        bucket_name = self._bucket_name(None, "access-logs")
        base = f"{name}-access-logs"
        bucket = aws.s3.Bucket(
            base,
            bucket=bucket_name,
            force_destroy=config.allow_data_deletion,
            tags={**config.tags, "Name": base, "DataRole": "access-logs"},
            opts=data_options(self, keep=keep, protect=config.protect),
        )
        self.log_bucket = bucket
        guard = data_options(self, keep=keep, protect=False)
        public_access = self._lock_down(base, bucket, guard)
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{base}-encryption",
            bucket=bucket.id,
            # S3 server access log delivery writes only to SSE-S3 buckets; SSE-KMS targets silently get no logs.
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=(
                        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                            sse_algorithm="AES256"
                        )
                    ),
                )
            ],
            opts=guard,
        )
        aws.s3.BucketPolicy(
            f"{base}-policy",
            bucket=bucket.id,
            policy=pulumi.Output.all(self._arn(bucket_name), self._account_id).apply(
                lambda v: _log_bucket_policy(str(v[0]), str(v[1]))
            ),
            opts=data_options(self, keep=keep, protect=False, depends_on=[public_access]),
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{base}-lifecycle",
            bucket=bucket.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-access-logs",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=logs.expire_after_days),
                    abort_incomplete_multipart_upload=(
                        aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                            days_after_initiation=1
                        )
                    ),
                )
            ],
            opts=guard,
        )
        return bucket_name

    @staticmethod
    def _lock_down(base: str, bucket: aws.s3.Bucket, guard: pulumi.ResourceOptions) -> aws.s3.BucketPublicAccessBlock:
        """Every bucket here: all four public-access blocks on, ACLs off (BucketOwnerEnforced)."""
        public_access = aws.s3.BucketPublicAccessBlock(
            f"{base}-public-access",
            bucket=bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=guard,
        )
        aws.s3.BucketOwnershipControls(
            f"{base}-ownership",
            bucket=bucket.id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=guard,
        )
        return public_access

    def _bucket(self, name: str, role: str, spec: BucketSpec, keep: bool) -> tuple[pulumi.Output[str], aws.s3.Bucket]:
        config = self._config
        bucket_name = self._bucket_name(spec.name, role)
        base = f"{name}-{role}"
        protect = config.protect
        bucket = aws.s3.Bucket(
            base,
            bucket=bucket_name,
            # Only an explicit allowDataDeletion lets destroy empty a bucket; otherwise deletion fails on data.
            force_destroy=config.allow_data_deletion,
            tags={**config.tags, "Name": base, "DataRole": role},
            opts=data_options(self, keep=keep, protect=protect),
        )
        # The guards below stay with a retained bucket, so a destroyed stack never leaves it open or unencrypted.
        guard = data_options(self, keep=keep, protect=False)
        public_access = self._lock_down(base, bucket, guard)
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{base}-encryption",
            bucket=bucket.id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=(
                        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                            sse_algorithm="aws:kms", kms_master_key_id=self.kms_key_arn
                        )
                    ),
                    # One KMS data key per bucket instead of per object: checkpoint churn would otherwise pay
                    # a KMS request per shard write.
                    bucket_key_enabled=True,
                )
            ],
            opts=guard,
        )
        versioning = aws.s3.BucketVersioning(
            f"{base}-versioning",
            bucket=bucket.id,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
            opts=guard,
        )
        aws.s3.BucketPolicy(
            f"{base}-policy",
            bucket=bucket.id,
            policy=self._arn(bucket_name).apply(_tls_only_policy),
            opts=data_options(self, keep=keep, protect=False, depends_on=[public_access]),
        )
        if self.log_bucket_name is not None:
            aws.s3.BucketLogging(
                f"{base}-logging",
                bucket=bucket.id,
                target_bucket=self.log_bucket_name,
                target_prefix=f"{role}/",
                opts=data_options(
                    self,
                    keep=keep,
                    protect=False,
                    depends_on=[self.log_bucket] if self.log_bucket is not None else [],
                ),
            )
        aws.s3.BucketLifecycleConfiguration(
            f"{base}-lifecycle",
            bucket=bucket.id,
            rules=_lifecycle_rules(spec),
            # S3 evaluates noncurrent-version rules only once versioning is on.
            opts=data_options(self, keep=keep, protect=False, depends_on=[versioning]),
        )
        return bucket_name, bucket

    def _role(
        self, name: str, kind: str, cluster: ClusterHandle, service_accounts: list[str], *, write: bool
    ) -> aws.iam.Role:
        config = self._config
        access = config.access
        role = aws.iam.Role(
            f"{name}-{kind}",
            description=f"{config.name_prefix}: {kind} of the dataset and checkpoint buckets",
            assume_role_policy=trust_policy(
                use_pod_identity=access.use_pod_identity,
                account_id=self._account_id,
                oidc_provider_arn=cluster.oidc_provider_arn,
                oidc_provider_url=cluster.oidc_provider_url,
                namespace=access.namespace,
                service_accounts=service_accounts,
            ),
            tags=config.tags,
            opts=child(self),
        )
        aws.iam.RolePolicy(
            f"{name}-{kind}-s3",
            role=role.id,
            policy=pulumi.Output.all(self.dataset_bucket_arn, self.checkpoint_bucket_arn, self.kms_key_arn).apply(
                lambda v: _access_policy(
                    {str(v[0]): config.dataset, str(v[1]): config.checkpoint}, str(v[2]), config.region, write
                )
            ),
            opts=child(self),
        )
        if access.use_pod_identity:
            for sa in service_accounts:
                self.pod_identity_associations.append(
                    pod_identity_association(
                        f"{name}-{kind}-{sa}",
                        cluster_name=cluster.name,
                        namespace=access.namespace,
                        service_account=sa,
                        role_arn=role.arn,
                        tags=config.tags,
                        opts=child(self),
                    )
                )
        return role


def _tls_only_policy(bucket_arn: str) -> str:
    return policy_json(
        [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [bucket_arn, f"{bucket_arn}/*"],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
            {
                "Sid": "DenyOutdatedTls",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [bucket_arn, f"{bucket_arn}/*"],
                "Condition": {"NumericLessThan": {"s3:TlsVersion": "1.2"}},
            },
        ]
    )


def _log_bucket_policy(bucket_arn: str, account_id: str) -> str:
    tls = json.loads(_tls_only_policy(bucket_arn))["Statement"]
    delivery = {
        "Sid": "S3ServerAccessLogDelivery",
        "Effect": "Allow",
        "Principal": {"Service": "logging.s3.amazonaws.com"},
        "Action": "s3:PutObject",
        "Resource": f"{bucket_arn}/*",
        "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
    }
    return policy_json([*tls, delivery])


def _lifecycle_rules(spec: BucketSpec) -> list[aws.s3.BucketLifecycleConfigurationRuleArgs]:
    whole_bucket = aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix="")
    rules = [
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="abort-incomplete-multipart-uploads",
            status="Enabled",
            filter=whole_bucket,
            abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                days_after_initiation=spec.abort_incomplete_upload_days
            ),
        ),
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="expire-noncurrent-versions",
            status="Enabled",
            filter=whole_bucket,
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                noncurrent_days=spec.noncurrent_version_expiration_days,
                newer_noncurrent_versions=spec.noncurrent_versions_retained,
            ),
            # Delete markers left once every version expired only slow down listings.
            expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(expired_object_delete_marker=True),
        ),
    ]
    if isinstance(spec, CheckpointBucketSpec) and spec.transition_after_days is not None:
        rules.append(
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="transition-old-checkpoints",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=spec.prefix),
                transitions=[
                    aws.s3.BucketLifecycleConfigurationRuleTransitionArgs(
                        days=spec.transition_after_days, storage_class=spec.transition_storage_class
                    )
                ],
            )
        )
    return rules


def _access_policy(buckets: dict[str, BucketSpec], key_arn: str, region: str, write: bool) -> str:
    statements: list[dict[str, object]] = []
    reads = {arn: spec.read_prefixes for arn, spec in buckets.items() if spec.read_prefixes}
    writes = {arn: spec.write_prefixes for arn, spec in buckets.items() if spec.write_prefixes} if write else {}
    listable = {arn: sorted(set(reads.get(arn, [])) | set(writes.get(arn, []))) for arn in {*reads, *writes}}
    for i, (arn, prefixes) in enumerate(sorted(listable.items())):
        statements.append(
            {
                "Sid": f"ListPrefixes{i}",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": arn,
                "Condition": {"StringLike": {"s3:prefix": sorted({q for p in prefixes for q in (p, f"{p}*")})}},
            }
        )
    read_objects = sorted(f"{arn}/{p}*" for arn, prefixes in reads.items() for p in prefixes)
    if read_objects:
        statements.append(
            {"Sid": "ReadObjects", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": read_objects}
        )
    write_objects = sorted(f"{arn}/{p}*" for arn, prefixes in writes.items() for p in prefixes)
    if write_objects:
        statements.append(
            {
                "Sid": "WriteObjects",
                "Effect": "Allow",
                "Action": [
                    "s3:AbortMultipartUpload",
                    "s3:DeleteObject",
                    "s3:GetObject",
                    "s3:ListMultipartUploadParts",
                    "s3:PutObject",
                ],
                "Resource": write_objects,
            }
        )
    key_actions = ["kms:Decrypt", "kms:GenerateDataKey"] if write else ["kms:Decrypt"]
    statements.append(
        {
            "Sid": "UseBucketKeyThroughS3",
            "Effect": "Allow",
            "Action": key_actions,
            "Resource": key_arn,
            "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.{dns_suffix(region)}"}},
        }
    )
    return policy_json(statements)


def _key_policy(account_id: str, partition: str, region: str, suffix: str) -> str:
    return policy_json(
        [
            {
                # Without the account statement IAM policies (the roles above, the deployer) could not use the key.
                "Sid": "AccountAdministersThroughIam",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "FsxLogGroups",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.{suffix}"},
                "Action": ["kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
                "Resource": "*",
                "Condition": {
                    "ArnLike": {
                        "kms:EncryptionContext:aws:logs:arn": (
                            f"arn:{partition}:logs:{region}:{account_id}:log-group:/aws/fsx/*"
                        )
                    }
                },
            },
        ]
    )
