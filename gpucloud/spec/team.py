"""Team stack spec: one ML team's tenancy on a platform, read from the team stack file's `gpucloud:team` object."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from gpucloud import catalog
from gpucloud.spec.base import RuleViolations, SpecModel
from gpucloud.spec.budget import BudgetSpec
from gpucloud.spec.common import Name, TagMap
from gpucloud.spec.loading import load_object, parse_object

TEAM_CONFIG_KEY = "team"
_QUANTITY = re.compile(r"^\d+(\.\d+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
# <project>/<stack> (the org is the one the program runs under) or <org>/<project>/<stack>.
_STACK_NAME = re.compile(r"^([A-Za-z0-9_.-]+/)?[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def _quantity(value: str) -> str:
    if not _QUANTITY.match(value):
        raise ValueError(f"'{value}' is not a Kubernetes quantity such as 500m, 64, 512Gi")
    return value


def _in_catalog(instance_type: str) -> bool:
    try:
        catalog.get_catalog().get(instance_type)
    except (catalog.UnknownInstanceType, catalog.NotInCatalog):
        return False
    return True


Quantity = Annotated[str, Field(description="Kubernetes resource quantity, e.g. 500m, 64, 512Gi.")]

# An access entry names the IAM role or user itself; a session (assumed-role/...) ARN changes per login.
_MEMBER_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::\d{12}:(role|user)/[\w+=,.@/-]{1,512}$")
# What each member role may do in the team namespace: the Kubernetes built-in user-facing ClusterRoles
# (admin, edit, view; "User-facing roles" in the Kubernetes RBAC docs), bound per namespace.
MemberAccess = Literal["admin", "edit", "view"]


class TeamMemberSpec(SpecModel):
    """An IAM principal of the team and what it may do in the team namespace."""

    principal_arn: str = Field(description="IAM role or user ARN, e.g. arn:aws:iam::123456789012:role/vision-ml.")
    access: MemberAccess = Field(
        default="edit",
        description="Namespace rights: admin (also RBAC inside the namespace), edit (workloads, secrets) or view.",
    )

    @field_validator("principal_arn")
    @classmethod
    def _arn(cls, value: str) -> str:
        if ":assumed-role/" in value or ":sts::" in value:
            raise ValueError(
                f"'{value}' is a session ARN; give the IAM role itself, arn:aws:iam::<account>:role/<name>"
            )
        if not _MEMBER_ARN.match(value):
            raise ValueError(f"'{value}' is not an IAM role/user ARN; use arn:aws:iam::<account>:role/<name>")
        return value


class TeamQuotaSpec(SpecModel):
    """Namespace-wide ceilings on what the team's pods may request (a ResourceQuota)."""

    gpus: int | None = Field(
        default=None,
        ge=0,
        le=4096,
        description="Total nvidia.com/gpu the team's pods may request at once. Unset: the peak of the team's own "
        "workloads (training nodes x GPUs per node + inference maxReplicas x gpusPerReplica). A value below that "
        "peak is an error: the quota would keep the team's own workloads Pending.",
    )
    cpu: Quantity = Field(default="256", description="Total CPU the team's pods may request (requests.cpu).")
    memory: Quantity = Field(default="2Ti", description="Total memory the team's pods may request (requests.memory).")

    @field_validator("cpu", "memory")
    @classmethod
    def _q(cls, value: str) -> str:
        return _quantity(value)


class TeamLimitsSpec(SpecModel):
    """Per-container defaults and ceilings (a LimitRange), so pods without requests still schedule sensibly."""

    default_cpu_request: Quantity = Field(default="500m", description="CPU request of containers that set none.")
    default_memory_request: Quantity = Field(default="1Gi", description="Memory request of containers that set none.")
    default_memory_limit: Quantity = Field(default="8Gi", description="Memory limit of containers that set none.")
    max_gpus_per_container: int = Field(
        default=8, ge=0, le=64, description="Most nvidia.com/gpu one container may use (8 = one full H100 node)."
    )

    @field_validator("default_cpu_request", "default_memory_request", "default_memory_limit")
    @classmethod
    def _q(cls, value: str) -> str:
        return _quantity(value)


def _known_type(value: str) -> str:
    """An EC2 instance type (botocore's model), with close catalog names suggested for a typo."""
    try:
        return catalog.validate_instance_type(value)
    except catalog.UnknownInstanceType as exc:
        raise ValueError(f"{exc}; give the platform pool's instance type") from None


def _catalog_gpu(instance_type: str) -> bool:
    try:
        return catalog.get_catalog().get(instance_type).accelerator_count > 0
    except (catalog.UnknownInstanceType, catalog.NotInCatalog):
        return False


class TeamTrainingSpec(SpecModel):
    """A distributed training job the team runs on one of the platform's GPU pools."""

    name: Name = Field(description="Job name (Kubernetes object names).")
    pool: Name = Field(description="Platform node pool the job runs on (its gpucloud.io/pool label).")
    instance_type: str = Field(description="The pool's instance type (GPU and EFA counts come from the catalog).")
    availability_zones: list[str] | None = Field(
        default=None, description="The pool's AZs; exactly one with EFA (the pool's)."
    )
    nodes: int = Field(ge=1, le=1000, description="Nodes the job spans (one pod per node, torchrun inside).")
    image: str = Field(min_length=1, description="Training image (pin a tag or digest).")
    script: str = Field(min_length=1, description="Script torchrun starts, e.g. /workspace/examples/train_ddp.py.")
    script_args: list[str] = Field(default_factory=list, description="Arguments after the script.")
    use_efa: bool = Field(default=False, description="Request the nodes' EFA interfaces (multi-node over RDMA).")
    karpenter: bool = Field(default=False, description="The pool is a Karpenter pool (adds do-not-disrupt).")

    @field_validator("instance_type")
    @classmethod
    def _type(cls, value: str) -> str:
        return _known_type(value)


class TeamInferenceSpec(SpecModel):
    """An inference deployment the team serves from one of the platform's GPU pools, scaled on GPU utilisation."""

    name: Name = Field(description="Deployment name.")
    pool: Name = Field(description="Platform node pool it runs on.")
    instance_type: str = Field(description="The pool's instance type.")
    availability_zones: list[str] | None = Field(default=None, description="AZs to spread replicas across.")
    image: str = Field(min_length=1, description="Serving image (pin a tag or digest).")
    args: list[str] = Field(default_factory=list, description="Container args.")
    min_replicas: int = Field(default=1, ge=1, description="Fewest replicas KEDA keeps.")
    max_replicas: int = Field(default=4, ge=1, description="Most replicas KEDA scales out to.")
    gpus_per_replica: int = Field(default=1, ge=1, le=64, description="nvidia.com/gpu each replica requests.")
    gpu_utilization_target_percent: float = Field(
        default=80,
        gt=0,
        le=100,
        description="Average GPU utilisation of the deployment's pods above which KEDA adds replicas.",
    )

    @field_validator("instance_type")
    @classmethod
    def _type(cls, value: str) -> str:
        return _known_type(value)

    @model_validator(mode="after")
    def _replicas(self) -> TeamInferenceSpec:
        if self.min_replicas > self.max_replicas:
            rules = RuleViolations()
            rules.add("maxReplicas", f"maxReplicas {self.max_replicas} is below minReplicas {self.min_replicas}")
            rules.raise_if_any()
        return self


class TeamQueueSpec(SpecModel):
    """The team's Kueue queues: a ClusterQueue in the platform's cohort and a LocalQueue in the namespace."""

    enabled: bool = Field(
        default=True,
        description="Create the team's ClusterQueue and LocalQueue; the training job is submitted through them "
        "(suspended until Kueue admits the whole gang). Needs addons.kueue.enabled on the platform.",
    )
    name: Name | None = Field(default=None, description="LocalQueue name. Unset: <team>-queue.")
    fair_share_weight: float = Field(
        default=1,
        gt=0,
        le=1000,
        description="Kueue fair-sharing weight of the team's ClusterQueue in the cohort (2 = twice the share).",
    )
    pools: list[Name] | None = Field(
        default=None,
        description="Platform pools whose flavours the team may borrow. Unset: the training job's pool.",
    )


class TeamServingSpec(SpecModel):
    """An OpenAI-compatible vLLM server on one of the platform's GPU pools, behind an internal NLB."""

    name: Name = Field(description="Deployment and Service name.")
    pool: Name = Field(description="Platform node pool it runs on.")
    instance_type: str = Field(description="The pool's instance type; --tensor-parallel-size is its GPU count.")
    availability_zones: list[str] | None = Field(default=None, description="AZs to spread replicas across.")
    image: str = Field(
        default="vllm/vllm-openai:v0.11.0", min_length=1, description="vLLM OpenAI server image (pin a tag)."
    )
    model: str = Field(
        min_length=1,
        description="Model to serve: a path under the platform's Lustre mount (/fsx/...), an s3:// URI "
        "(streamed with --load-format runai_streamer) or a Hugging Face id.",
    )
    served_model_name: str | None = Field(default=None, description="Name clients use. Unset: the model.")
    max_model_len: int | None = Field(default=None, ge=256, description="--max-model-len.")
    min_replicas: int = Field(
        default=1,
        ge=1,
        description="Fewest replicas KEDA keeps (at least 1: the queue-depth metric exists only while a replica runs).",
    )
    max_replicas: int = Field(default=2, ge=1, description="Most replicas KEDA scales out to.")
    queue_depth_target: int = Field(
        default=8,
        ge=1,
        description="Waiting requests per replica (vllm:num_requests_waiting) above which KEDA adds one.",
    )
    gpu_utilization_target_percent: float = Field(
        default=85, gt=0, le=100, description="Average GPU utilisation above which KEDA adds a replica."
    )
    internet_facing: bool = Field(
        default=False,
        description="Internet-facing NLB instead of internal; the platform must set "
        "addons.loadBalancerController.allowInternetFacing.",
    )
    source_ranges: list[str] = Field(
        default_factory=list, description="CIDRs allowed to reach the NLB (loadBalancerSourceRanges). Empty: the VPC."
    )

    @model_validator(mode="after")
    def _replicas(self) -> TeamServingSpec:
        if self.min_replicas > self.max_replicas:
            rules = RuleViolations()
            rules.add("maxReplicas", f"maxReplicas {self.max_replicas} is below minReplicas {self.min_replicas}")
            rules.raise_if_any()
        return self


class TeamSpec(SpecModel):
    """One ML team's namespace, quota and pod identity on a shared platform."""

    name: Name = Field(description="Team name (lowercase DNS label), the prefix of the team's resources.")
    environment: Literal["dev", "staging", "prod"] = Field(description="Environment of the platform it runs on.")
    region: str = Field(description="AWS region of the platform, e.g. us-west-2.")
    platform_stack: str = Field(
        description="Platform stack the team runs on: <project>/<stack> (e.g. gpucloud/dev; the org is the one the "
        "team stack runs under: `organization` on a local/DIY backend, your org on Pulumi Cloud) or "
        "<org>/<project>/<stack> to pin one (e.g. acme/gpucloud/dev)."
    )
    namespace: Name = Field(description="Kubernetes namespace the team's workloads run in.")
    service_account: Name = Field(
        default="workloads", description="Service account whose pods get the team's IAM role through Pod Identity."
    )
    tags: TagMap = Field(description="Cost-allocation tags; CostCenter, Team and Project required.")
    quota: TeamQuotaSpec = Field(description="Namespace-wide GPU, CPU and memory ceilings.")
    budget: BudgetSpec | None = Field(
        default=None,
        description="The team's monthly cost budget with forecast/actual alerts and a cost anomaly monitor, "
        "filtered on its GpuTeam tag (GpuBudget). Every stack needs one (guardrail budget-and-anomaly, mandatory in "
        "prod). costReporting does not apply to a team stack.",
    )
    limits: TeamLimitsSpec = Field(default_factory=TeamLimitsSpec, description="Per-container defaults and ceilings.")
    members: list[TeamMemberSpec] = Field(
        default_factory=list,
        description="IAM principals of the team: each gets an EKS access entry and a RoleBinding in the team "
        "namespace only (no cluster-wide rights).",
    )
    training: TeamTrainingSpec | None = Field(
        default=None, description="Distributed training job on a platform pool, mounting the platform's Lustre."
    )
    inference: TeamInferenceSpec | None = Field(
        default=None, description="Inference deployment on a platform pool, autoscaled on GPU utilisation."
    )
    queue: TeamQueueSpec | None = Field(
        default=None, description="Kueue ClusterQueue and LocalQueue the team's training job is submitted through."
    )
    serving: TeamServingSpec | None = Field(
        default=None, description="vLLM OpenAI-compatible server behind an internal NLB."
    )

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if value not in catalog.ec2_regions():
            raise ValueError(f"unknown AWS region '{value}'; regions are named like us-west-2")
        return value

    @field_validator("platform_stack")
    @classmethod
    def _stack(cls, value: str) -> str:
        if not _STACK_NAME.match(value):
            raise ValueError(f"'{value}' is not <project>/<stack> or <org>/<project>/<stack>; write e.g. gpucloud/dev")
        return value

    def platform_reference(self, organization: str | None) -> str:
        """The StackReference name: platformStack as written when it names an org, else under `organization`
        (pulumi.get_organization(): `organization` on DIY backends, the stack's org on Pulumi Cloud)."""
        if self.platform_stack.count("/") == 2:
            return self.platform_stack
        return f"{organization or 'organization'}/{self.platform_stack}"

    @model_validator(mode="after")
    def _rules(self) -> TeamSpec:
        from gpucloud.spec.platform import REQUIRED_TAGS

        rules = RuleViolations()
        missing = [t for t in REQUIRED_TAGS if t not in self.tags]
        if missing:
            rules.add("tags", f"missing required cost-allocation tags {missing}")
        self._gpu_rules(rules)
        arns = [m.principal_arn for m in self.members]
        dupes = sorted({a for a in arns if arns.count(a) > 1})
        if dupes:
            rules.add("members", f"{dupes} listed more than once; one entry per principal with its access level")
        if self.inference is not None and not _catalog_gpu(self.inference.instance_type):
            rules.add(
                "inference.instanceType",
                f"'{self.inference.instance_type}' is not a GPU type in the gpucloud catalog; give the pool's type",
            )
        if self.queue is not None and self.queue.enabled and self.queue.pools is None and self.training is None:
            rules.add("queue.pools", "no training job to take the pool from; list the pools the team may borrow")
        stack = self.platform_stack.rsplit("/", 1)[-1]
        if _STACK_NAME.match(self.platform_stack) and stack != self.environment:
            rules.add(
                "platformStack",
                f"stack '{stack}' differs from environment '{self.environment}'; point at the {self.environment} "
                "platform stack or fix environment",
            )
        rules.raise_if_any()
        return self

    def _gpu_rules(self, rules: RuleViolations) -> None:
        """The team's quota and LimitRange must admit the team's own workloads (a ResourceQuota rejects a pod
        whose requests would push the namespace over `hard`; a LimitRange rejects a container above `max`)."""
        demands = self.gpu_demands()
        if demands is None:
            for key, workload in (("training", self.training), ("serving", self.serving)):
                if workload is not None and not _in_catalog(workload.instance_type):
                    rules.add(
                        f"{key}.instanceType",
                        f"'{workload.instance_type}' is not a GPU type in the gpucloud catalog; give the pool's type",
                    )
            return
        max_per_container = self.limits.max_gpus_per_container
        for field, per_container, _ in demands:
            if per_container > max_per_container:
                rules.add(
                    "limits.maxGpusPerContainer",
                    f"{max_per_container} is below the {per_container} GPUs one {field.split('.')[0]} container "
                    f"requests ({field}); raise limits.maxGpusPerContainer to {per_container} or more",
                )
        peak = sum(total for _, _, total in demands)
        quota = self.quota.gpus
        if quota is not None and quota < peak:
            parts = " + ".join(f"{total} ({field})" for field, _, total in demands)
            rules.add(
                "quota.gpus",
                f"{quota} is below the peak of the team's own workloads, {parts} = {peak}; raise quota.gpus to "
                f"{peak} or more, or leave it unset to derive it",
            )
        effective = self.quota_gpus
        if effective is not None and max_per_container > effective > 0:
            rules.add(
                "limits.maxGpusPerContainer",
                f"{max_per_container} exceeds the team's quota.gpus ({effective}); lower it or raise the quota",
            )
        if effective is None:
            rules.add("quota.gpus", "no training or inference to derive it from; give the team's GPU quota")

    def gpu_demands(self) -> list[tuple[str, int, int]] | None:
        """(spec field, GPUs per container, GPUs at peak) for each workload; None when a type is not in the catalog."""
        out: list[tuple[str, int, int]] = []
        if self.training is not None:
            try:
                per_node = catalog.get_catalog().get(self.training.instance_type).accelerator_count
            except (catalog.UnknownInstanceType, catalog.NotInCatalog):
                return None
            out.append(("training.nodes", per_node, per_node * self.training.nodes))
        if self.inference is not None:
            i = self.inference
            out.append(("inference.maxReplicas", i.gpus_per_replica, i.gpus_per_replica * i.max_replicas))
        if self.serving is not None:
            try:
                per_pod = catalog.get_catalog().get(self.serving.instance_type).accelerator_count
            except (catalog.UnknownInstanceType, catalog.NotInCatalog):
                return None
            out.append(("serving.maxReplicas", per_pod, per_pod * self.serving.max_replicas))
        return out

    @property
    def quota_gpus(self) -> int | None:
        """The ResourceQuota's requests.nvidia.com/gpu: as given, else the peak of the team's own workloads."""
        if self.quota.gpus is not None:
            return self.quota.gpus
        demands = self.gpu_demands()
        if not demands:
            return None
        return sum(total for _, _, total in demands)

    @property
    def all_tags(self) -> dict[str, str]:
        return {**self.tags, "Env": self.environment, "ManagedBy": "gpucloud", "GpuTeam": self.name}


def parse_team(data: Any, source: str = "team stack spec", aws_region: str | None = None) -> TeamSpec:
    """Validate a `gpucloud:team` object. Raises SpecError listing every problem."""
    return parse_object(TeamSpec, TEAM_CONFIG_KEY, data, source, aws_region)


def load_team() -> TeamSpec:
    """Read and validate the team spec from the running Pulumi program's stack config."""
    return load_object(TeamSpec, TEAM_CONFIG_KEY)
