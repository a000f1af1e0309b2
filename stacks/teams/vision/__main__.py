"""Team stack: the vision team's namespace, quota and pod identity on the platform stack it references.

Everything about the cluster comes from the platform stack's outputs (StackReference); nothing is looked up.
"""

import sys
from pathlib import Path

try:
    import gpucloud.components.team  # noqa: F401
except ImportError:
    # Run by the Pulumi CLI with a venv that lacks `pip install -e .`: use this checkout's packages.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import pulumi
import pulumi_kubernetes as k8s

from gpucloud.components.budget import GpuBudget, GpuBudgetConfig
from gpucloud.components.team import (
    GpuTeam,
    GpuTeamConfig,
    TeamLustreVolume,
    TeamLustreVolumeConfig,
    TeamQueue,
    TeamQueueConfig,
)
from gpucloud.components.workloads import (
    InferenceDeployment,
    InferenceDeploymentConfig,
    TrainingJob,
    TrainingJobConfig,
    VllmServer,
    VllmServerConfig,
    pool_drain_grace,
)
from gpucloud.spec.team import load_team

team = load_team()
# platformStack may leave out the org (gpucloud/dev): the reference then uses the org this stack runs under,
# `organization` on a local/DIY backend and the stack's org on Pulumi Cloud (docs/network-and-cluster.md).
platform = pulumi.StackReference(team.platform_reference(pulumi.get_organization()))

# The platform's kubeconfig authenticates with `aws eks get-token`, so whoever runs this stack needs an IAM
# identity the platform lists in cluster.adminPrincipalArns (or a team access entry), and network reach to the
# private API endpoint.
k8s_provider = k8s.Provider(f"{team.name}-k8s", kubeconfig=pulumi.Output.secret(platform.require_output("kubeconfig")))

tenant = GpuTeam(
    team.name,
    GpuTeamConfig(region=team.region, tags=team.all_tags, team=team),
    cluster_name=platform.require_output("clusterName"),
    k8s_provider=k8s_provider,
)

# Workloads run in the team namespace on the platform's GPU pools; a team that needs its own pool builds a
# ClusterHandle from the platform outputs (clusterName, privateSubnetIdsByAz, nodeRoleArn, nodeSecurityGroupId,
# efaSecurityGroupId, kmsKeyArn, kubernetesVersion) and adds a GpuNodePool the same way the platform does.
common = {"region": team.region, "tags": team.all_tags, "namespace": team.namespace}
after_namespace = pulumi.ResourceOptions(depends_on=[tenant])

queue_name = None
if team.queue is not None and team.queue.enabled:
    # The team's ClusterQueue borrows the platform's pool flavours up to the team quota; the training job is
    # submitted suspended to the LocalQueue and Kueue admits all its nodes at once.
    queue = TeamQueue(
        f"{team.name}-queue",
        TeamQueueConfig(
            region=team.region,
            tags=team.all_tags,
            team=team,
            cohort=platform.require_output("kueueCohort"),
            flavours=platform.require_output("kueueFlavours"),
        ),
        k8s_provider=k8s_provider,
        opts=after_namespace,
    )
    queue_name = queue.local_queue_name

lustre = None
if team.training is not None or (team.serving is not None and team.serving.model.startswith("/")):
    lustre = TeamLustreVolume(
        f"{team.name}-lustre",
        TeamLustreVolumeConfig(region=team.region, tags=team.all_tags, team=team),
        file_system_id=platform.require_output("fsxFileSystemId"),
        dns_name=platform.require_output("fsxDnsName"),
        mount_name=platform.require_output("fsxMountName"),
        capacity_gib=platform.require_output("fsxStorageCapacityGib"),
        k8s_provider=k8s_provider,
        opts=after_namespace,
    )

if team.training is not None:
    assert lustre is not None
    t = team.training
    TrainingJob(
        f"{team.name}-{t.name}",
        TrainingJobConfig(
            **common,
            job_name=t.name,
            pool=t.pool,
            instance_type=t.instance_type,
            availability_zones=t.availability_zones,
            use_efa=t.use_efa,
            use_karpenter=t.karpenter,
            nodes=t.nodes,
            image=t.image,
            script=t.script,
            script_args=t.script_args,
            claim_name=lustre.claim_name,
            queue_name=queue_name,
            # The pool's drain grace from its checkpoint model; get_output: a platform older than the export
            # (or a pool without a checkpoint model) leaves the workload default of 110 s.
            termination_grace_period_seconds=pool_drain_grace(platform.get_output("poolDrainGraceSeconds"), t.pool),
        ),
        k8s_provider=k8s_provider,
        opts=pulumi.ResourceOptions(depends_on=[tenant, lustre]),
    )

if team.inference is not None:
    i = team.inference
    InferenceDeployment(
        f"{team.name}-{i.name}",
        InferenceDeploymentConfig(
            **common,
            job_name=i.name,
            pool=i.pool,
            instance_type=i.instance_type,
            availability_zones=i.availability_zones,
            image=i.image,
            args=i.args,
            replicas=i.min_replicas,
            min_replicas=i.min_replicas,
            max_replicas=i.max_replicas,
            gpu_utilization_target_percent=i.gpu_utilization_target_percent,
            gpus_per_replica=i.gpus_per_replica,
            prometheus_server_url=platform.require_output("prometheusServerUrl"),
        ),
        k8s_provider=k8s_provider,
        opts=after_namespace,
    )

if team.serving is not None:
    sv = team.serving
    if sv.internet_facing:
        # Only the platform can allow an internet-facing NLB; `up` fails here when it does not.
        def _allowed(allowed: object) -> None:
            if allowed is not True:
                raise ValueError(
                    f"serving.internetFacing: platform {team.platform_stack} does not allow internet-facing load "
                    "balancers (addons.loadBalancerController.allowInternetFacing)"
                )

        platform.require_output("loadBalancerAllowInternetFacing").apply(_allowed)
    server = VllmServer(
        f"{team.name}-{sv.name}",
        VllmServerConfig(
            **common,
            job_name=sv.name,
            pool=sv.pool,
            instance_type=sv.instance_type,
            availability_zones=sv.availability_zones,
            image=sv.image,
            model=sv.model,
            served_model_name=sv.served_model_name,
            max_model_len=sv.max_model_len,
            claim_name=lustre.claim_name if lustre is not None and sv.model.startswith("/") else None,
            service_account=team.service_account,
            min_replicas=sv.min_replicas,
            max_replicas=sv.max_replicas,
            queue_depth_target=sv.queue_depth_target,
            gpu_utilization_target_percent=sv.gpu_utilization_target_percent,
            prometheus_server_url=platform.require_output("prometheusServerUrl"),
            internet_facing=sv.internet_facing,
            allow_internet_facing=sv.internet_facing,
            source_ranges=sv.source_ranges,
        ),
        k8s_provider=k8s_provider,
        opts=pulumi.ResourceOptions(depends_on=[tenant, *([lustre] if lustre is not None else [])]),
    )
    pulumi.export("servingUrl", server.url)

if team.budget is not None:
    # The team's own budget and anomaly monitor, on its GpuTeam tag: the platform's budget covers the environment.
    GpuBudget(
        f"{team.name}-budget",
        GpuBudgetConfig(
            region=team.region,
            tags=team.all_tags,
            environment=team.environment,
            budget=team.budget,
            tag_key="GpuTeam",
            tag_value=team.name,
        ),
    )

pulumi.export("namespace", tenant.namespace_name)
pulumi.export("serviceAccount", tenant.service_account_name)
pulumi.export("podRoleArn", tenant.pod_role_arn)
pulumi.export("clusterName", platform.require_output("clusterName"))
