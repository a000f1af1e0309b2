"""GC-SEC-152 resource-policy-no-public-principal: no resource policy lets everyone use the resource.

Queues, topics, KMS keys, container registries, Lambda functions and layers, secrets, buckets and the other
stores of ``DOCUMENTS`` carry a resource policy. A statement that allows Principal ``*`` (or a NotPrincipal Allow)
under no condition that restricts *who* is public: anyone with an AWS account (for some actions, anyone at all)
may read, write, decrypt or invoke. The verdict is the principal reader's (readers/principals.py), the same one
the trust-policy guardrail uses: ``aws:SourceArn``/``aws:SourceAccount``/``aws:PrincipalOrgID``/
``aws:SourceVpce``/... with fixed values restrict; ``aws:SecureTransport`` or ``aws:CurrentTime`` do not.

``lambda.Permission`` and ``lambda.LayerVersionPermission`` take the principal as an input: ``*`` is public
unless ``sourceArn``, ``sourceAccount`` or ``principalOrgId`` (a layer: ``organizationId``) scopes it;
``cloudwatch.EventPermission`` ``*`` unless its ``condition`` names an organisation.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Report, Severity, get, present, text
from ..readers import principals

# Type token -> the input holding its resource policy document.
DOCUMENTS: dict[str, str] = {
    "aws:sqs/queue:Queue": "policy",
    "aws:sqs/queuePolicy:QueuePolicy": "policy",
    "aws:sns/topic:Topic": "policy",
    "aws:sns/topicPolicy:TopicPolicy": "policy",
    "aws:kms/key:Key": "policy",
    "aws:kms/keyPolicy:KeyPolicy": "policy",
    "aws:kms/replicaKey:ReplicaKey": "policy",
    "aws:kms/externalKey:ExternalKey": "policy",
    "aws:kms/replicaExternalKey:ReplicaExternalKey": "policy",
    "aws:ecr/repositoryPolicy:RepositoryPolicy": "policy",
    "aws:ecr/registryPolicy:RegistryPolicy": "policy",
    "aws:lambda/resourcePolicy:ResourcePolicy": "policy",
    "aws:secretsmanager/secret:Secret": "policy",
    "aws:secretsmanager/secretPolicy:SecretPolicy": "policy",
    "aws:s3/bucket:Bucket": "policy",
    "aws:s3/bucketV2:BucketV2": "policy",
    "aws:s3/bucketPolicy:BucketPolicy": "policy",
    "aws:s3/accessPoint:AccessPoint": "policy",
    "aws:s3control/bucketPolicy:BucketPolicy": "policy",
    "aws:s3control/accessPointPolicy:AccessPointPolicy": "policy",
    "aws:s3tables/tableBucketPolicy:TableBucketPolicy": "resourcePolicy",
    "aws:s3tables/tablePolicy:TablePolicy": "resourcePolicy",
    "aws:efs/fileSystemPolicy:FileSystemPolicy": "policy",
    "aws:backup/vaultPolicy:VaultPolicy": "policy",
    "aws:glacier/vault:Vault": "accessPolicy",
    "aws:dynamodb/resourcePolicy:ResourcePolicy": "policy",
    "aws:kinesis/resourcePolicy:ResourcePolicy": "policy",
    "aws:cloudwatch/logDestinationPolicy:LogDestinationPolicy": "accessPolicy",
    "aws:cloudwatch/eventBusPolicy:EventBusPolicy": "policy",
    "aws:glue/resourcePolicy:ResourcePolicy": "policy",
    "aws:codebuild/resourcePolicy:ResourcePolicy": "policy",
    "aws:msk/clusterPolicy:ClusterPolicy": "policy",
    "aws:redshift/resourcePolicy:ResourcePolicy": "policy",
    "aws:schemas/registryPolicy:RegistryPolicy": "policy",
    "aws:sagemaker/modelPackageGroupPolicy:ModelPackageGroupPolicy": "resourcePolicy",
    "aws:dsql/clusterPolicy:ClusterPolicy": "policy",
}
LAMBDA_PERMISSION = "aws:lambda/permission:Permission"
LAYER_PERMISSION = "aws:lambda/layerVersionPermission:LayerVersionPermission"
EVENT_PERMISSION = "aws:cloudwatch/eventPermission:EventPermission"
# Inputs that scope a bare principal "*" (pulumi-aws Permission / LayerVersionPermission / EventPermission).
_SCOPES = {
    LAMBDA_PERMISSION: ("sourceArn", "sourceAccount", "principalOrgId"),
    LAYER_PERMISSION: ("organizationId",),
    EVENT_PERMISSION: ("condition",),
}
FIX = (
    "Fix: name the accounts, roles or service principals that need access, or add a Condition that restricts "
    "who (aws:SourceArn / aws:SourceAccount for a service, aws:PrincipalOrgID for your organisation, "
    "aws:SourceVpce for an endpoint)."
)


def validate(args: Any, report: Report, cfg: Config) -> None:
    if args.resource_type in _SCOPES:
        principal = text(get(args.props, "principal"))
        scoped = [k for k in _SCOPES[args.resource_type] if present(args.props, k)]
        if principals.public_principal_value(principal, scoped):
            # These types take the scope as inputs, not as a policy Condition: the fix names the inputs.
            scopes = _SCOPES[args.resource_type]
            report(
                f"principal '*' with none of {', '.join(scopes)} set: every AWS account can use it. Fix: name the "
                f"accounts or service principals that need access, or set {' / '.join(scopes)} to scope it."
            )
        return
    key = DOCUMENTS[args.resource_type]
    for f in principals.public_statements(principals.document(get(args.props, key))):
        report(f"{key} Statement[{f.index}] allows {f.why}: the resource is public. {FIX}")


GUARDRAIL = Guardrail(
    id="GC-SEC-152",
    name="resource-policy-no-public-principal",
    description="Resource policies (queues, topics, KMS keys, registries, functions, secrets, buckets and other "
    "stores) must not allow Principal '*' unless a condition restricts who.",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Replace Principal '*' with the principals that need access, or add aws:SourceArn, "
    "aws:SourceAccount, aws:PrincipalOrgID or aws:SourceVpce conditions with fixed values.",
    references=(
        "CKV_AWS_168",
        "CKV_AWS_169",
        "CKV_AWS_32",
        "CKV_AWS_33",
        "CKV_AWS_301",
        "CKV_AWS_70",
        "SH SQS.3",
        "SH Lambda.1",
        "SH KMS.5",
        "SH SNS.4",
        "IAM Access Analyzer",
    ),
    kind="resource",
    surfaces=frozenset({"principal"}),
    resource_types=frozenset({*DOCUMENTS, *_SCOPES}),
    validate=validate,
)
