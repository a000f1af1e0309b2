"""Data section of the stack spec: S3 dataset/checkpoint buckets, FSx for Lustre and its Kubernetes mount.

Rules that need the whole platform (the file system's AZ against the platform's AZs and the pool it feeds)
live in `gpucloud.spec.platform`; everything that only needs this section is checked here.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.common import Name

LustreDeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]
LustreVersion = Literal["2.10", "2.12", "2.15"]
LustreLogLevel = Literal["WARN_ERROR", "WARN_ONLY", "ERROR_ONLY", "DISABLED"]
DataCompression = Literal["LZ4", "NONE"]
DraEvent = Literal["NEW", "CHANGED", "DELETED"]
TransitionStorageClass = Literal[
    "STANDARD_IA", "INTELLIGENT_TIERING", "GLACIER_IR", "ONEZONE_IA", "GLACIER", "DEEP_ARCHIVE"
]
BucketRole = Literal["dataset", "checkpoint"]

SCRATCH_TYPES = frozenset({"SCRATCH_1", "SCRATCH_2"})
PERSISTENT_TYPES = frozenset({"PERSISTENT_1", "PERSISTENT_2"})
# FSx CreateFileSystem: per-unit throughput (MB/s/TiB) each SSD deployment type offers; scratch types have none.
PER_UNIT_THROUGHPUT: dict[str, tuple[int, ...]] = {
    "SCRATCH_1": (),
    "SCRATCH_2": (),
    "PERSISTENT_1": (50, 100, 200),
    "PERSISTENT_2": (125, 250, 500, 1000),
}
# Baseline throughput of scratch file systems (SCRATCH_2 bursts higher, but plans must not count on bursts).
SCRATCH_BASELINE_MBPS_PER_TIB = 200
MAX_DATA_REPOSITORY_ASSOCIATIONS = 8
ALL_EVENTS: list[DraEvent] = ["NEW", "CHANGED", "DELETED"]
# CloudWatch Logs accepts only these retention periods.
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922)

_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
_PREFIX = re.compile(r"^([A-Za-z0-9!_.'()-]+/)*$")
_FS_PATH = re.compile(r"^/([A-Za-z0-9!_.'()-]+(/[A-Za-z0-9!_.'()-]+)*)?$")
_SERVICE_ACCOUNT = re.compile(r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$")
_ADDON_VERSION = re.compile(r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$")
# Reserved by S3 for access points, Object Lambda, directory and table buckets, and AWS's own examples.
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", "--x-s3", "--table-s3")


def bucket_name_problems(name: str) -> list[str]:
    """Why `name` cannot be a general-purpose S3 bucket name for gpucloud (empty when it can)."""
    problems: list[str] = []
    if not 3 <= len(name) <= 63:
        problems.append(f"is {len(name)} characters; bucket names are 3 to 63 characters")
    if not _BUCKET_CHARS.match(name):
        problems.append("may use only lowercase letters, digits, '-' and must start and end with a letter or digit")
    if ".." in name:
        problems.append("must not contain two adjacent periods")
    try:
        ipaddress.IPv4Address(name)
        problems.append("must not be formatted as an IP address")
    except ValueError:
        pass
    if "." in name and not problems:
        # Dots are legal in S3 but break TLS on virtual-hosted URLs (*.s3.amazonaws.com does not match a.b) and
        # Transfer Acceleration, both of which training data loaders use.
        problems.append("must not contain '.' (breaks TLS on virtual-hosted S3 URLs); use '-' instead")
    problems += [f"must not start with '{p}' (reserved by S3)" for p in _RESERVED_PREFIXES if name.startswith(p)]
    problems += [f"must not end with '{s}' (reserved by S3)" for s in _RESERVED_SUFFIXES if name.endswith(s)]
    return problems


def aggregate_throughput_mbps(deployment_type: str, storage_capacity_gib: int, per_unit: int | None) -> float:
    """Baseline aggregate throughput in MB/s: capacity (TiB, as FSx counts it: GiB / 1000) x MB/s per TiB."""
    per_tib = SCRATCH_BASELINE_MBPS_PER_TIB if deployment_type in SCRATCH_TYPES else (per_unit or 0)
    return storage_capacity_gib / 1000 * per_tib


def capacity_problem(deployment_type: str, capacity_gib: int) -> str | None:
    """Why `capacity_gib` is not a size FSx accepts for an SSD file system of `deployment_type` (None when it is)."""
    step = 3600 if deployment_type == "SCRATCH_1" else 2400
    if capacity_gib in (1200, 2400) or (capacity_gib > 0 and capacity_gib % step == 0):
        return None
    sizes = [1200, 2400, *range(step, (capacity_gib // step + 2) * step, step)]
    below = max((c for c in sizes if c < capacity_gib), default=None)
    above = min(c for c in sizes if c > capacity_gib)
    nearest = " or ".join(str(c) for c in sorted({above} | ({below} if below else set())))
    return (
        f"{capacity_gib} GiB is not a valid {deployment_type} size: use 1200, 2400 or a multiple of {step} "
        f"(nearest: {nearest})"
    )


Prefix = Annotated[
    str,
    Field(
        max_length=512,
        description="S3 key prefix ending in '/', e.g. 'datasets/' ('' is the whole bucket).",
    ),
]


def _check_prefixes(values: list[str]) -> list[str]:
    bad = [v for v in values if not _PREFIX.match(v)]
    if bad:
        raise ValueError(
            f"not S3 key prefixes: {bad}; write folders like 'datasets/' or 'runs/llama/' (no leading '/', no '*', "
            "ending in '/'), or '' for the whole bucket"
        )
    if len(set(values)) != len(values):
        raise ValueError("prefixes are listed more than once")
    return values


class BucketSpec(SpecModel):
    """Settings every data bucket shares: name, who may read and write which prefixes, and lifecycle ages."""

    name: str | None = Field(
        default=None,
        description="Bucket name; omitted: '<platform>-<role>-<account>-<region>' (shortened to 63 characters).",
    )
    read_prefixes: list[Prefix] = Field(
        default_factory=list, description="Prefixes the reader and writer roles may list and read."
    )
    write_prefixes: list[Prefix] = Field(
        default_factory=list, description="Prefixes the writer role may put, delete and multipart-upload into."
    )
    abort_incomplete_upload_days: int = Field(
        default=7, ge=1, le=365, description="Days after which unfinished multipart uploads are aborted (and unbilled)."
    )
    noncurrent_version_expiration_days: int = Field(
        default=30, ge=1, le=3650, description="Days a replaced or deleted object version is kept before it expires."
    )
    noncurrent_versions_retained: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="Newest non-current versions kept regardless of age (null: expire all after the days above).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        problems = bucket_name_problems(value)
        if problems:
            raise ValueError(
                f"'{value}' is not a DNS-compliant bucket name: {'; '.join(problems)}. "
                "Use 3-63 lowercase letters, digits and '-', or omit name to generate one"
            )
        return value

    @field_validator("read_prefixes", "write_prefixes")
    @classmethod
    def _prefixes(cls, values: list[str]) -> list[str]:
        return _check_prefixes(values)


class DatasetBucketSpec(BucketSpec):
    """Training data: read by training jobs, written by ingestion pipelines."""

    read_prefixes: list[Prefix] = Field(
        default_factory=lambda: ["datasets/"], description="Prefixes the reader and writer roles may list and read."
    )


class CheckpointBucketSpec(BucketSpec):
    """Checkpoints: versioned, old ones moved to a cheaper class, replaced versions expired."""

    read_prefixes: list[Prefix] = Field(
        default_factory=lambda: ["checkpoints/"], description="Prefixes the reader and writer roles may list and read."
    )
    write_prefixes: list[Prefix] = Field(
        default_factory=lambda: ["checkpoints/"],
        description="Prefixes the writer role may put, delete and multipart-upload into.",
    )
    noncurrent_version_expiration_days: int = Field(
        default=14, ge=1, le=3650, description="Days a replaced or deleted checkpoint version is kept."
    )
    abort_incomplete_upload_days: int = Field(
        default=3,
        ge=1,
        le=365,
        description="Days after which unfinished multipart uploads are aborted; a half-written checkpoint is useless.",
    )
    prefix: Prefix = Field(
        default="checkpoints/", description="Prefix the transition rule applies to ('' for the whole bucket)."
    )
    transition_after_days: int | None = Field(
        default=30,
        ge=0,
        le=3650,
        description="Move checkpoints older than this many days to transitionStorageClass (null: never).",
    )
    transition_storage_class: TransitionStorageClass = Field(
        default="STANDARD_IA", description="Cheaper storage class old checkpoints move to."
    )

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        _check_prefixes([value])
        return value

    @model_validator(mode="after")
    def _transition(self) -> CheckpointBucketSpec:
        rules = RuleViolations()
        days = self.transition_after_days
        if days is not None and self.transition_storage_class in ("STANDARD_IA", "ONEZONE_IA") and days < 30:
            rules.add(
                "transitionAfterDays",
                f"S3 moves objects to {self.transition_storage_class} only after 30 days or more (got {days}); "
                "use 30+ or INTELLIGENT_TIERING / GLACIER_IR",
            )
        rules.raise_if_any()
        return self


class StorageAccessSpec(SpecModel):
    """Who gets the bucket roles: Kubernetes service accounts, through EKS Pod Identity or IRSA."""

    use_pod_identity: bool = Field(
        default=True,
        description="Grant roles through EKS Pod Identity (needs the eks-pod-identity-agent add-on); false: IRSA "
        "(annotate the service accounts with the exported role ARNs).",
    )
    namespace: Name = Field(default="training", description="Namespace of the service accounts below.")
    reader_service_accounts: list[str] = Field(
        default_factory=list, description="Service accounts that may read the buckets' read prefixes."
    )
    writer_service_accounts: list[str] = Field(
        default_factory=list,
        description="Service accounts that may also write the write prefixes (checkpointing trainers).",
    )

    @field_validator("reader_service_accounts", "writer_service_accounts")
    @classmethod
    def _sa_names(cls, values: list[str]) -> list[str]:
        bad = [v for v in values if not _SERVICE_ACCOUNT.match(v)]
        if bad:
            raise ValueError(f"not Kubernetes service account names: {bad}; use lowercase a-z, 0-9, '-' and '.'")
        if len(set(values)) != len(values):
            raise ValueError("service accounts are listed more than once")
        return values

    @model_validator(mode="after")
    def _one_role_each(self) -> StorageAccessSpec:
        rules = RuleViolations()
        both = sorted(set(self.reader_service_accounts) & set(self.writer_service_accounts))
        if both:
            rules.add(
                "writerServiceAccounts",
                f"{both} are also readers; a service account takes one role (writers can read too): "
                "list it under writerServiceAccounts only",
            )
        rules.raise_if_any()
        return self


class DataRepositoryAssociationSpec(SpecModel):
    """Links a file-system directory to a bucket prefix, importing and exporting changes automatically."""

    file_system_path: str = Field(description="Directory on the file system, e.g. /datasets ('/' for the root).")
    bucket: BucketRole = Field(description="Which bucket to link: 'dataset' or 'checkpoint'.")
    prefix: Prefix = Field(default="", description="Bucket prefix linked to the directory, e.g. 'datasets/'.")
    import_events: list[DraEvent] = Field(
        default_factory=lambda: list(ALL_EVENTS),
        description="S3 changes mirrored onto Lustre automatically: any of NEW, CHANGED, DELETED ([] for none).",
    )
    export_events: list[DraEvent] = Field(
        default_factory=lambda: list(ALL_EVENTS),
        description="Lustre changes written back to S3 automatically: any of NEW, CHANGED, DELETED ([] for none). "
        "Keep all three on checkpoint directories so checkpoints reach S3.",
    )
    batch_import_metadata_on_create: bool = Field(
        default=True, description="List the prefix's existing objects on the file system when the link is created."
    )
    imported_file_chunk_size_mib: int = Field(
        default=1024, ge=1, le=512000, description="Stripe size (MiB) per disk for imported files."
    )

    @field_validator("file_system_path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not _FS_PATH.match(value) or len(value) > 4096:
            raise ValueError(
                f"'{value}' is not a file-system directory: start with '/', no trailing '/' or '//', e.g. /datasets"
            )
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        _check_prefixes([value])
        return value

    @field_validator("import_events", "export_events")
    @classmethod
    def _events(cls, values: list[DraEvent]) -> list[DraEvent]:
        if len(set(values)) != len(values):
            raise ValueError("events are listed more than once")
        return values


class FsxSpec(SpecModel):
    """FSx for Lustre file system in one AZ: the one of the GPU pool it feeds (FSx is single-AZ)."""

    enabled: bool = Field(default=True, description="Create the file system (false keeps the section but no FSx).")
    deployment_type: LustreDeploymentType = Field(
        default="PERSISTENT_2",
        description="SCRATCH_2 for throwaway work (no replication, no backups), PERSISTENT_2 for data that must "
        "survive a server failure; SCRATCH_1 and PERSISTENT_1 are older types.",
    )
    storage_capacity_gib: int = Field(
        default=1200,
        ge=1200,
        description="SSD capacity in GiB: 1200, 2400, then multiples of 2400 (SCRATCH_1: multiples of 3600).",
    )
    per_unit_storage_throughput: int | None = Field(
        default=None,
        description="MB/s per TiB, required for persistent types: PERSISTENT_2 125/250/500/1000, PERSISTENT_1 "
        "50/100/200. Scratch types take none.",
    )
    data_compression: DataCompression = Field(
        default="LZ4", description="LZ4 compression (more effective capacity and throughput for most data) or NONE."
    )
    lustre_version: LustreVersion = Field(
        default="2.15", description="Lustre version (fileSystemTypeVersion); PERSISTENT_2 needs 2.12 or later."
    )
    availability_zone: str | None = Field(
        default=None,
        description="AZ of the file system (one of the platform's). Defaults to the AZ of feedsPool when that pool "
        "has exactly one.",
    )
    feeds_pool: Name | None = Field(
        default=None, description="Name of the node pool this file system feeds; its AZ must be the file system's."
    )
    enable_kms_encryption: bool | None = Field(
        default=None,
        description="Encrypt with the storage KMS key (persistent types only). null: on for persistent types; "
        "scratch types are always encrypted with FSx-managed keys.",
    )
    automatic_backup_retention_days: int | None = Field(
        default=None,
        ge=0,
        le=90,
        description="Days of daily automatic backups (persistent types, 0 disables). null: 7 for persistent "
        "types; scratch types cannot be backed up.",
    )
    daily_backup_start_time: str | None = Field(
        default=None, pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="UTC start of daily backups, HH:MM."
    )
    weekly_maintenance_start_time: str | None = Field(
        default=None,
        pattern=r"^[1-7]:([01]\d|2[0-3]):[0-5]\d$",
        description="UTC start of weekly maintenance, d:HH:MM (1 = Monday).",
    )
    log_level: LustreLogLevel = Field(
        default="WARN_ERROR", description="Data-repository events logged to CloudWatch Logs."
    )
    log_retention_days: int = Field(default=90, description="Days the file system's CloudWatch log group keeps events.")
    data_repository_associations: list[DataRepositoryAssociationSpec] = Field(
        default_factory=list,
        description="Directories linked to bucket prefixes (PERSISTENT_2 only, at most 8).",
    )

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"CloudWatch Logs keeps events for one of {list(LOG_RETENTION_DAYS)} days, not {value}")
        return value

    @property
    def is_scratch(self) -> bool:
        return self.deployment_type in SCRATCH_TYPES

    @property
    def kms_encrypted(self) -> bool:
        return not self.is_scratch if self.enable_kms_encryption is None else self.enable_kms_encryption

    @property
    def backup_retention_days(self) -> int:
        if self.is_scratch:
            return 0
        return 7 if self.automatic_backup_retention_days is None else self.automatic_backup_retention_days

    @property
    def aggregate_throughput_mbps(self) -> float:
        return aggregate_throughput_mbps(
            self.deployment_type, self.storage_capacity_gib, self.per_unit_storage_throughput
        )

    @model_validator(mode="after")
    def _rules(self) -> FsxSpec:
        rules = RuleViolations()
        kind = self.deployment_type
        problem = capacity_problem(kind, self.storage_capacity_gib)
        if problem:
            rules.add("storageCapacityGib", problem)
        offered = PER_UNIT_THROUGHPUT[kind]
        per_unit = self.per_unit_storage_throughput
        if not offered and per_unit is not None:
            rules.add(
                "perUnitStorageThroughput",
                f"{kind} has a fixed baseline ({SCRATCH_BASELINE_MBPS_PER_TIB} MB/s per TiB) and takes no "
                "perUnitStorageThroughput; remove it or use PERSISTENT_2",
            )
        elif offered and per_unit not in offered:
            got = "none given" if per_unit is None else f"got {per_unit}"
            rules.add(
                "perUnitStorageThroughput",
                f"{kind} offers {', '.join(map(str, offered))} MB/s per TiB ({got}); pick one",
            )
        if self.is_scratch and self.enable_kms_encryption:
            rules.add(
                "enableKmsEncryption",
                f"{kind} cannot use a KMS key (FSx encrypts scratch file systems with its own keys); remove it or "
                "use PERSISTENT_2",
            )
        if self.is_scratch and self.automatic_backup_retention_days:
            rules.add(
                "automaticBackupRetentionDays",
                f"{kind} file systems cannot be backed up; remove it or use PERSISTENT_2",
            )
        if self.is_scratch and self.daily_backup_start_time is not None:
            rules.add("dailyBackupStartTime", f"{kind} file systems cannot be backed up; remove it")
        if kind == "PERSISTENT_2" and self.lustre_version == "2.10":
            rules.add("lustreVersion", "PERSISTENT_2 needs Lustre 2.12 or 2.15 (FSx rejects 2.10); use 2.15")
        dras = self.data_repository_associations
        if dras and kind != "PERSISTENT_2":
            detail = (
                "SCRATCH_1 cannot have any"
                if kind == "SCRATCH_1"
                else f"{kind} links S3 only through the legacy importPath/exportPath, which gpucloud does not manage"
            )
            rules.add(
                "dataRepositoryAssociations",
                f"data repository associations need PERSISTENT_2 ({detail}); use deploymentType PERSISTENT_2 or "
                "remove them",
            )
        if len(dras) > MAX_DATA_REPOSITORY_ASSOCIATIONS:
            rules.add(
                "dataRepositoryAssociations",
                f"FSx allows at most {MAX_DATA_REPOSITORY_ASSOCIATIONS} data repository associations per file "
                f"system (got {len(dras)}); link parent directories or prefixes instead",
            )
        for i, a in enumerate(dras):
            for j in range(i):
                b = dras[j]
                if _overlaps(a.file_system_path.rstrip("/") + "/", b.file_system_path.rstrip("/") + "/"):
                    rules.add(
                        f"dataRepositoryAssociations.{i}.fileSystemPath",
                        f"'{a.file_system_path}' overlaps '{b.file_system_path}' "
                        f"(dataRepositoryAssociations[{j}]); FSx needs disjoint directories",
                    )
                if a.bucket == b.bucket and _overlaps(a.prefix, b.prefix):
                    rules.add(
                        f"dataRepositoryAssociations.{i}.prefix",
                        f"{a.bucket} bucket prefix '{a.prefix}' overlaps '{b.prefix}' "
                        f"(dataRepositoryAssociations[{j}]); FSx needs disjoint S3 paths",
                    )
        rules.raise_if_any()
        return self


def _overlaps(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


class CsiSpec(SpecModel):
    """The FSx CSI driver and the Kubernetes objects training jobs mount."""

    create_addon: bool = Field(
        default=True, description="Install the aws-fsx-csi-driver EKS add-on with its own scoped IAM role."
    )
    addon_version: str | None = Field(
        default=None,
        description="Add-on version, e.g. v1.6.0-eksbuild.1 (null: the versions table's build for the cluster's "
        "minor, or EKS's default where the table has none).",
    )
    create_volume: bool = Field(
        default=True,
        description="Create a static PersistentVolume and PersistentVolumeClaim for the file system.",
    )
    namespace: Name = Field(default="training", description="Namespace of the PersistentVolumeClaim.")
    create_namespace: bool = Field(default=True, description="Create the namespace (off when another stack owns it).")
    claim_name: Name = Field(default="fsx-lustre", description="Name of the PersistentVolumeClaim jobs mount.")
    create_storage_class: bool = Field(
        default=False,
        description="Create a StorageClass that provisions throwaway SCRATCH_2 file systems per claim (in the "
        "file system's subnet and security group).",
    )
    storage_class_name: Name = Field(default="fsx-scratch", description="Name of that StorageClass.")

    @field_validator("addon_version")
    @classmethod
    def _version(cls, value: str | None) -> str | None:
        if value is not None and not _ADDON_VERSION.match(value):
            raise ValueError(f"'{value}' is not an EKS add-on version; versions look like v1.6.0-eksbuild.1")
        return value


class AccessLogsSpec(SpecModel):
    """S3 server access logs of the data buckets: who read or changed which object (audit, cost forensics)."""

    enabled: bool = Field(default=True, description="Log requests to the dataset and checkpoint buckets.")
    bucket: str | None = Field(
        default=None,
        description="Existing log bucket (e.g. the organisation's) to deliver to; null: create "
        "'<platform>-access-logs-<account>-<region>' (SSE-S3, the only encryption log delivery supports).",
    )
    expire_after_days: int = Field(default=365, ge=1, le=3650, description="Days the created log bucket keeps logs.")

    @field_validator("bucket")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and bucket_name_problems(value):
            raise ValueError(f"'{value}' is not a DNS-compliant bucket name: {'; '.join(bucket_name_problems(value))}")
        return value


class StorageSpec(SpecModel):
    """Training data and checkpoint storage. Data-holding resources survive `pulumi destroy` by default."""

    allow_data_deletion: bool = Field(
        default=False,
        description="Let `pulumi destroy` delete buckets (with their objects), file systems and the key. Off: they "
        "are retained (and protected in prod).",
    )
    kms_key_arn: str | None = Field(
        default=None,
        description="Existing KMS key ARN for buckets and FSx (null: create one). Its key policy must let the FSx "
        "S3 service-linked role use it when FSx links the buckets.",
    )
    dataset_bucket: DatasetBucketSpec = Field(default_factory=DatasetBucketSpec, description="Training data bucket.")
    checkpoint_bucket: CheckpointBucketSpec = Field(
        default_factory=CheckpointBucketSpec, description="Checkpoint bucket."
    )
    access: StorageAccessSpec = Field(
        default_factory=StorageAccessSpec, description="Reader/writer roles for Kubernetes service accounts."
    )
    access_logs: AccessLogsSpec = Field(
        default_factory=AccessLogsSpec, description="S3 server access logging of both buckets."
    )
    fsx: FsxSpec | None = Field(default=None, description="FSx for Lustre file system (null: none).")
    csi: CsiSpec = Field(default_factory=CsiSpec, description="FSx CSI driver, PersistentVolume and claim.")

    @field_validator("kms_key_arn")
    @classmethod
    def _key_arn(cls, value: str | None) -> str | None:
        if value is not None and not _KMS_KEY_ARN.match(value):
            raise ValueError(
                f"'{value}' is not a KMS key ARN; use arn:aws:kms:<region>:<account>:key/<key-id> (not an alias)"
            )
        return value

    @property
    def fsx_enabled(self) -> bool:
        return self.fsx is not None and self.fsx.enabled

    @model_validator(mode="after")
    def _rules(self) -> StorageSpec:
        rules = RuleViolations()
        d, c = self.dataset_bucket.name, self.checkpoint_bucket.name
        if d is not None and d == c:
            rules.add("checkpointBucket.name", f"'{c}' is also the dataset bucket's name; give each bucket its own")
        if self.csi.create_storage_class and self.fsx is None:
            rules.add(
                "csi.createStorageClass",
                "the StorageClass provisions into the file system's AZ, subnet and security group; add an fsx "
                "section or set createStorageClass: false",
            )
        rules.raise_if_any()
        return self
