"""Billing data per team: a CUR 2.0 data export with split cost allocation data for EKS, into an encrypted bucket
that survives a destroy, and the cost allocation tags Cost Explorer, budgets and `gpucloud cost` filter on.

Split cost allocation data divides each shared node's cost between the pods that ran on it (by their CPU,
memory and GPU requests) and tags those lines with aws:eks:cluster-name and aws:eks:namespace, so the GPU hours a
team's pods used land on the team's namespace rather than on the platform that owns the nodes. The export and
Cost Explorer are served from us-east-1, whatever the stack's region.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
from pydantic import Field

from gpucloud.components.base import ComponentConfig, account_and_partition, child
from gpucloud.components.storage._common import data_options
from gpucloud.components.storage.buckets import DataBuckets
from gpucloud.spec.budget import CostReportingSpec

BILLING_REGION = "us-east-1"
# Tags AWS writes on split cost allocation lines for EKS (Billing user guide, "Split cost allocation data").
EKS_SPLIT_TAGS = ("aws:eks:cluster-name", "aws:eks:namespace", "aws:eks:workload-name")
# CUR 2.0 columns the per-team view needs: the line, its time and cost, the resource and its tags, and the
# split columns that carry each pod's share of a node (Data Exports table dictionary, COST_AND_USAGE_REPORT).
COLUMNS = (
    "identity_line_item_id",
    "identity_time_interval",
    "line_item_usage_account_id",
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_unblended_cost",
    "product_instance_type",
    "product_region_code",
    "pricing_term",
    "resource_tags",
    "split_line_item_parent_resource_id",
    "split_line_item_split_usage_ratio",
    "split_line_item_split_cost",
    "split_line_item_unused_cost",
)


def query_statement() -> str:
    return f"SELECT {', '.join(COLUMNS)} FROM COST_AND_USAGE_REPORT"


def _service_delivery(account: str, partition: str) -> dict[str, Any]:
    # The condition AWS documents for Data Exports delivery ("Setting up an Amazon S3 bucket for data exports").
    return {
        "StringLike": {
            "aws:SourceAccount": account,
            "aws:SourceArn": [
                f"arn:{partition}:cur:{BILLING_REGION}:{account}:definition/*",
                f"arn:{partition}:bcm-data-exports:{BILLING_REGION}:{account}:export/*",
            ],
        }
    }


def bucket_policy(bucket_arn: str, account: str, partition: str) -> str:
    resources = [bucket_arn, f"{bucket_arn}/*"]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": resources,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
                {
                    "Sid": "EnableAWSDataExportsToWriteToS3AndCheckPolicy",
                    "Effect": "Allow",
                    "Principal": {"Service": ["billingreports.amazonaws.com", "bcm-data-exports.amazonaws.com"]},
                    "Action": ["s3:PutObject", "s3:GetBucketPolicy"],
                    "Resource": resources,
                    "Condition": _service_delivery(account, partition),
                },
            ],
        }
    )


def key_policy(account: str, partition: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AccountAdministersThroughIam",
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{partition}:iam::{account}:root"},
                    "Action": "kms:*",
                    "Resource": "*",
                },
                {
                    # The exporter writes objects into an SSE-KMS bucket, so it needs data keys under this key.
                    "Sid": "DataExportsEncryptDeliveries",
                    "Effect": "Allow",
                    "Principal": {"Service": ["billingreports.amazonaws.com", "bcm-data-exports.amazonaws.com"]},
                    "Action": ["kms:GenerateDataKey*", "kms:Encrypt", "kms:Decrypt"],
                    "Resource": "*",
                    "Condition": _service_delivery(account, partition),
                },
            ],
        }
    )


class GpuCostReportingConfig(ComponentConfig):
    """Inputs of GpuCostReporting."""

    name_prefix: str = Field(min_length=1, description="Prefix of the export and bucket names (the platform name).")
    reporting: CostReportingSpec = Field(description="budget.costReporting from the stack spec.")
    tag_keys: list[str] = Field(
        default_factory=list, description="The stack's cost-allocation tag keys to activate (with activateTags)."
    )
    protect: bool = Field(default=False, description="Protect the bucket and key from deletion (prod).")


class GpuCostReporting(pulumi.ComponentResource):
    """CUR 2.0 export with split cost allocation data, its bucket and key, and cost allocation tag activation."""

    def __init__(self, name: str, config: GpuCostReportingConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpucloud:cost:GpuCostReporting", name, None, opts)
        spec = config.reporting
        tags = config.tags
        account, partition = account_and_partition(self)
        billing = aws.Provider(f"{name}-billing-provider", region=BILLING_REGION, opts=child(self))
        keep = True
        self.kms_key = aws.kms.Key(
            f"{name}-key",
            description=f"{config.name_prefix}: billing exports",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=pulumi.Output.all(account, partition).apply(lambda v: key_policy(str(v[0]), str(v[1]))),
            tags=tags,
            opts=data_options(self, keep=keep, protect=config.protect),
        )
        bucket_name = account.apply(lambda a: f"{config.name_prefix}-billing-{a}-{config.region}"[:63])
        self.bucket = aws.s3.Bucket(
            f"{name}-bucket",
            bucket=bucket_name,
            force_destroy=False,
            tags={**tags, "Name": f"{name}-bucket", "DataRole": "billing-export"},
            opts=data_options(self, keep=keep, protect=config.protect),
        )
        guard = data_options(self, keep=keep, protect=False)
        # The same lock-down as the data buckets: all four public-access blocks, ACLs off.
        public_access = DataBuckets._lock_down(f"{name}-bucket", self.bucket, guard)
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-bucket-encryption",
            bucket=self.bucket.id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=(
                        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                            sse_algorithm="aws:kms", kms_master_key_id=self.kms_key.arn
                        )
                    ),
                    bucket_key_enabled=True,
                )
            ],
            opts=guard,
        )
        versioning = aws.s3.BucketVersioning(
            f"{name}-bucket-versioning",
            bucket=self.bucket.id,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
            opts=guard,
        )
        bucket_arn = pulumi.Output.concat("arn:", partition, ":s3:::", bucket_name)
        policy = aws.s3.BucketPolicy(
            f"{name}-bucket-policy",
            bucket=self.bucket.id,
            policy=pulumi.Output.all(bucket_arn, account, partition).apply(
                lambda v: bucket_policy(str(v[0]), str(v[1]), str(v[2]))
            ),
            opts=data_options(self, keep=keep, protect=False, depends_on=[public_access]),
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-bucket-lifecycle",
            bucket=self.bucket.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-billing-exports",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=spec.expire_after_days),
                    noncurrent_version_expiration=(
                        aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(noncurrent_days=30)
                    ),
                )
            ],
            opts=data_options(self, keep=keep, protect=False, depends_on=[versioning]),
        )
        export_name = f"{config.name_prefix}-cur2"
        self.export = aws.bcmdata.Export(
            f"{name}-export",
            export=aws.bcmdata.ExportExportArgs(
                name=export_name,
                description=f"{config.name_prefix}: CUR 2.0 with split cost allocation data for EKS",
                data_queries=[
                    aws.bcmdata.ExportExportDataQueryArgs(
                        query_statement=query_statement(),
                        table_configurations={
                            "COST_AND_USAGE_REPORT": {
                                "TIME_GRANULARITY": spec.granularity,
                                "INCLUDE_RESOURCES": "TRUE",
                                "INCLUDE_SPLIT_COST_ALLOCATION_DATA": "TRUE",
                                "INCLUDE_MANUAL_DISCOUNT_COMPATIBILITY": "FALSE",
                            }
                        },
                    )
                ],
                destination_configurations=[
                    aws.bcmdata.ExportExportDestinationConfigurationArgs(
                        s3_destinations=[
                            aws.bcmdata.ExportExportDestinationConfigurationS3DestinationArgs(
                                s3_bucket=self.bucket.bucket,
                                s3_prefix="cur2",
                                s3_region=config.region,
                                s3_output_configurations=[
                                    aws.bcmdata.ExportExportDestinationConfigurationS3DestinationS3OutputConfigurationArgs(
                                        overwrite="OVERWRITE_REPORT",
                                        format="PARQUET",
                                        compression="PARQUET",
                                        output_type="CUSTOM",
                                    )
                                ],
                            )
                        ]
                    )
                ],
                refresh_cadences=[aws.bcmdata.ExportExportRefreshCadenceArgs(frequency="SYNCHRONOUS")],
            ),
            tags=tags,
            # Data Exports is a us-east-1 service; the bucket policy must be in place before it checks delivery.
            opts=child(self, provider=billing, depends_on=[policy]),
        )
        self.activated_tags: list[aws.costexplorer.CostAllocationTag] = []
        if spec.activate_tags:
            for key in sorted({*config.tag_keys, *EKS_SPLIT_TAGS}):
                slug = key.replace(":", "-").lower()
                self.activated_tags.append(
                    aws.costexplorer.CostAllocationTag(
                        f"{name}-tag-{slug}", tag_key=key, status="Active", opts=child(self, provider=billing)
                    )
                )
        self.bucket_name = self.bucket.bucket
        self.export_name = export_name
        self.register_outputs({"bucket_name": self.bucket_name, "export_name": export_name})
