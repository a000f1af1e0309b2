"""The example team stack (stacks/teams/vision) plans offline from its StackReference answers, and its spec."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.plan import SECRET, Plan, PlanInputError, run_program
from gpucloud.spec import SpecError
from gpucloud.spec.team import parse_team

ROOT = Path(__file__).resolve().parents[1]
TEAM_DIR = ROOT / "stacks" / "teams" / "vision"
STACK_FILE = yaml.safe_load((TEAM_DIR / "Pulumi.dev.yaml").read_text())["config"]
REFS = STACK_FILE["gpucloud:offlineStackReferences"]["gpucloud/dev"]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return run_program(TEAM_DIR, "dev")


def test_team_plan_resource_types(plan: Plan) -> None:
    assert plan.project == "gpucloud-team-vision"
    assert plan.warnings == []
    assert sorted((r.type, r.name) for r in plan) == sorted(
        [
            ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "vision-pod-identity"),
            ("aws:eks/accessEntry:AccessEntry", "vision-member-vision-ml-engineers"),
            ("aws:eks/accessEntry:AccessEntry", "vision-member-vision-analysts"),
            ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "vision-edit-binding"),
            ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "vision-view-binding"),
            ("aws:iam/role:Role", "vision-pod-role"),
            ("gpucloud:team:GpuTeam", "vision"),
            ("kubernetes:core/v1:LimitRange", "vision-limits"),
            ("kubernetes:core/v1:Namespace", "vision-namespace"),
            ("kubernetes:core/v1:ResourceQuota", "vision-quota"),
            ("kubernetes:core/v1:ServiceAccount", "vision-service-account"),
            ("pulumi:providers:kubernetes", "vision-k8s"),
            *WORKLOADS,
        ]
    )


WORKLOADS = [
    ("gpucloud:team:TeamLustreVolume", "vision-lustre"),
    ("gpucloud:workloads:InferenceDeployment", "vision-detector"),
    ("gpucloud:workloads:TrainingJob", "vision-finetune"),
    ("kubernetes:apps/v1:Deployment", "vision-detector-deployment"),
    ("kubernetes:batch/v1:Job", "vision-finetune-job"),
    ("kubernetes:core/v1:PersistentVolume", "vision-lustre-pv"),
    ("kubernetes:core/v1:PersistentVolumeClaim", "vision-lustre-pvc"),
    ("kubernetes:core/v1:Service", "vision-detector-service"),
    ("kubernetes:core/v1:Service", "vision-finetune-workers"),
    ("kubernetes:keda.sh/v1alpha1:ScaledObject", "vision-detector-scaledobject"),
    ("kubernetes:policy/v1:PodDisruptionBudget", "vision-detector-pdb"),
    ("kubernetes:policy/v1:PodDisruptionBudget", "vision-finetune-pdb"),
    ("gpucloud:team:TeamQueue", "vision-queue"),
    ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "vision-queue-cluster-queue"),
    ("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision-queue-local-queue"),
    ("gpucloud:workloads:VllmServer", "vision-assistant"),
    ("kubernetes:apps/v1:Deployment", "vision-assistant-deployment"),
    ("kubernetes:core/v1:Service", "vision-assistant-service"),
    ("kubernetes:monitoring.coreos.com/v1:PodMonitor", "vision-assistant-podmonitor"),
    ("kubernetes:keda.sh/v1alpha1:ScaledObject", "vision-assistant-scaledobject"),
    ("kubernetes:policy/v1:PodDisruptionBudget", "vision-assistant-pdb"),
]


def test_training_job_mounts_the_platform_lustre_through_a_team_claim(plan: Plan) -> None:
    pv = plan.find("kubernetes:core/v1:PersistentVolume", "vision-lustre-pv")
    assert pv.get("spec.csi.driver") == "fsx.csi.aws.com"
    assert pv.get("spec.csi.volumeHandle") == REFS["fsxFileSystemId"]
    assert pv.get("spec.csi.volumeAttributes") == {"dnsname": REFS["fsxDnsName"], "mountname": REFS["fsxMountName"]}
    assert pv.get("spec.persistentVolumeReclaimPolicy") == "Retain"
    assert pv.get("spec.claimRef") == {"namespace": "vision", "name": "vision-fsx-lustre"}
    pvc = plan.find("kubernetes:core/v1:PersistentVolumeClaim", "vision-lustre-pvc")
    assert (pvc.get("metadata.namespace"), pvc.get("spec.resources.requests")) == ("vision", {"storage": "1200Gi"})
    job = plan.find("kubernetes:batch/v1:Job", "vision-finetune-job")
    assert job.get("metadata.namespace") == "vision"
    assert job.get("spec.completions") == 2.0
    pod = job.get("spec.template.spec")
    assert {"name": "fsx", "persistentVolumeClaim": {"claimName": "vision-fsx-lustre"}} in pod["volumes"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4"


def test_inference_scales_on_gpu_utilisation_from_the_platform_prometheus(plan: Plan) -> None:
    scaled = plan.find("kubernetes:keda.sh/v1alpha1:ScaledObject", "vision-detector-scaledobject")
    assert (scaled.get("spec.minReplicaCount"), scaled.get("spec.maxReplicaCount")) == (1.0, 4.0)
    trigger = scaled.get("spec.triggers.0")
    assert trigger["type"] == "prometheus"
    assert trigger["metadata"]["serverAddress"] == REFS["prometheusServerUrl"]
    assert trigger["metadata"]["threshold"] == "80"


def test_kubernetes_objects_use_the_platform_provider(plan: Plan) -> None:
    provider = plan.find("pulumi:providers:kubernetes", "vision-k8s")
    assert provider.get("kubeconfig") == SECRET
    for r in plan:
        if r.type.startswith("kubernetes:"):
            assert r.provider is not None and r.provider.startswith(provider.urn + "::"), r.name


def test_namespace_quota_limits(plan: Plan) -> None:
    ns = plan.find("kubernetes:core/v1:Namespace", "vision-namespace")
    assert ns.get("metadata.name") == "vision"
    assert ns.get("metadata.labels")["pod-security.kubernetes.io/enforce"] == "baseline"
    # Cost allocation by namespace label: the team and its CostCenter tag (ml-vision).
    assert (ns.get("metadata.labels")["gpucloud.io/team"], ns.get("metadata.labels")["gpucloud.io/cost-center"]) == (
        "vision",
        "ml-vision",
    )
    quota = plan.find("kubernetes:core/v1:ResourceQuota", "vision-quota")
    assert quota.get("metadata.namespace") == "vision"
    # Derived from the team's own workloads: finetune 2 nodes x 4 GPUs (g6.12xlarge) + detector 4 replicas x 1
    # + assistant 2 replicas x 1 (g6e.xlarge).
    assert quota.get("spec.hard") == {"requests.nvidia.com/gpu": "14", "requests.cpu": "96", "requests.memory": "768Gi"}
    limits = plan.find("kubernetes:core/v1:LimitRange", "vision-limits")
    assert limits.get("spec.limits") == [
        {
            "type": "Container",
            # Without the explicit 0 the API server would default both to max (4 GPUs for every container).
            "defaultRequest": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "0"},
            "default": {"memory": "16Gi", "nvidia.com/gpu": "0"},
            "max": {"nvidia.com/gpu": "4"},
        }
    ]
    sa = plan.find("kubernetes:core/v1:ServiceAccount", "vision-service-account")
    assert (sa.get("metadata.name"), sa.get("metadata.namespace")) == ("vision-workloads", "vision")


def test_pod_identity_role_and_association(plan: Plan) -> None:
    role = plan.find("aws:iam/role:Role", "vision-pod-role")
    assert json.loads(role.get("assumeRolePolicy"))["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    ]
    assert role.get("tags")["GpuTeam"] == "vision"
    assert role.get("tags")["Env"] == "dev"
    assoc = plan.find("aws:eks/podIdentityAssociation:PodIdentityAssociation", "vision-pod-identity")
    assert assoc.get("clusterName") == REFS["clusterName"] == "gpucloud-dev"
    assert (assoc.get("namespace"), assoc.get("serviceAccount")) == ("vision", "vision-workloads")
    assert assoc.property_dependencies["roleArn"] == [role.urn]


def test_members_get_access_entries_bound_to_namespace_roles_only(plan: Plan) -> None:
    entries = {r.get("principalArn"): r for r in plan.of_type("aws:eks/accessEntry:AccessEntry")}
    assert {arn: (r.get("type"), r.get("kubernetesGroups"), r.get("clusterName")) for arn, r in entries.items()} == {
        "arn:aws:iam::123456789012:role/vision-ml-engineers": ("STANDARD", ["gpucloud:vision:edit"], "gpucloud-dev"),
        "arn:aws:iam::123456789012:role/vision-analysts": ("STANDARD", ["gpucloud:vision:view"], "gpucloud-dev"),
    }
    # No access policy association: rights come only from the namespace RoleBindings.
    assert plan.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation") == []
    assert plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding") == []
    bindings = {
        r.inputs["metadata"]["name"]: (r.inputs["metadata"]["namespace"], r.inputs["roleRef"], r.inputs["subjects"])
        for r in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    }
    group = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group"}
    assert bindings == {
        "vision-edit": (
            "vision",
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            [{**group, "name": "gpucloud:vision:edit"}],
        ),
        "vision-view": (
            "vision",
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            [{**group, "name": "gpucloud:vision:view"}],
        ),
    }


def test_offline_references_carry_every_platform_export() -> None:
    import re

    # Every output the team program reads must be a real export of the platform program, and the offline
    # answers must hold it (and nothing the platform does not export).
    read = set(re.findall(r'require_output\("(\w+)"\)', (TEAM_DIR / "__main__.py").read_text()))
    exported = set(run_program(ROOT, "dev").outputs)
    assert read == {
        "kubeconfig",
        "clusterName",
        "fsxFileSystemId",
        "fsxDnsName",
        "fsxMountName",
        "fsxStorageCapacityGib",
        "prometheusServerUrl",
        "kueueCohort",
        "kueueFlavours",
        "loadBalancerAllowInternetFacing",
    }
    # Read with get_output: a platform older than the export still serves the team stack (defaults apply).
    optional = set(re.findall(r'get_output\("(\w+)"\)', (TEAM_DIR / "__main__.py").read_text()))
    assert optional == {"poolDrainGraceSeconds"}
    assert read | optional <= set(REFS)
    assert read | optional <= exported
    assert set(REFS) <= exported
    kubeconfig = json.loads(REFS["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == REFS["clusterEndpoint"]
    assert list(REFS["privateSubnetIdsByAz"].values()) == REFS["privateSubnetIds"]


def test_bad_team_spec_fails_with_paths() -> None:
    team = copy.deepcopy(STACK_FILE["gpucloud:team"])
    team["quota"]["gpus"] = 2
    team["platformStack"] = "gpucloud-dev"
    with pytest.raises(PlanInputError) as err:
        run_program(TEAM_DIR, "dev", config_overrides={"gpucloud:team": team})
    assert "gpucloud:team.platformStack: 'gpucloud-dev' is not <project>/<stack> or <org>/<project>/<stack>" in str(
        err.value
    )


def team_issues(**changes: Any) -> list[tuple[str, str]]:
    team = copy.deepcopy(STACK_FILE["gpucloud:team"])
    team.update(changes)
    with pytest.raises(SpecError) as err:
        parse_team(team)
    return [(i.path, i.message) for i in err.value.issues]


def test_team_spec_rules() -> None:
    team = parse_team(STACK_FILE["gpucloud:team"])
    assert (team.quota.gpus, team.quota_gpus) == (None, 14)
    assert team_issues(quota={"gpus": 8}) == [
        (
            "gpucloud:team.quota.gpus",
            "8 is below the peak of the team's own workloads, 8 (training.nodes) + 4 (inference.maxReplicas) + "
            "2 (serving.maxReplicas) = 14; raise quota.gpus to 14 or more, or leave it unset to derive it",
        )
    ]
    assert team_issues(quota={"gpus": 2})[1] == (
        "gpucloud:team.limits.maxGpusPerContainer",
        "4 exceeds the team's quota.gpus (2); lower it or raise the quota",
    )
    assert team_issues(limits={"maxGpusPerContainer": 2}) == [
        (
            "gpucloud:team.limits.maxGpusPerContainer",
            "2 is below the 4 GPUs one training container requests (training.nodes); raise "
            "limits.maxGpusPerContainer to 4 or more",
        )
    ]
    assert team_issues(training=None, inference=None, serving=None, queue=None) == [
        ("gpucloud:team.quota.gpus", "no training or inference to derive it from; give the team's GPU quota")
    ]
    assert team_issues(platformStack="acme/gpucloud/prod") == [
        (
            "gpucloud:team.platformStack",
            "stack 'prod' differs from environment 'dev'; point at the dev platform stack or fix environment",
        )
    ]
    assert team_issues(quota={"gpus": 14, "memory": "lots"}) == [
        ("gpucloud:team.quota.memory", "'lots' is not a Kubernetes quantity such as 500m, 64, 512Gi")
    ]
    assert team_issues(tags={"Team": "vision"}) == [
        ("gpucloud:team.tags", "missing required cost-allocation tags ['CostCenter', 'Project']")
    ]


def test_team_member_rules_name_the_field_and_the_fix() -> None:
    session = "arn:aws:sts::123456789012:assumed-role/vision-ml-engineers/alice"
    assert team_issues(members=[{"principalArn": session}]) == [
        (
            "gpucloud:team.members[0].principalArn",
            f"'{session}' is a session ARN; give the IAM role itself, arn:aws:iam::<account>:role/<name>",
        )
    ]
    assert team_issues(members=[{"principalArn": "vision-ml-engineers"}]) == [
        (
            "gpucloud:team.members[0].principalArn",
            "'vision-ml-engineers' is not an IAM role/user ARN; use arn:aws:iam::<account>:role/<name>",
        )
    ]
    role = "arn:aws:iam::123456789012:role/vision-ml-engineers"
    assert team_issues(members=[{"principalArn": role}, {"principalArn": role, "access": "view"}]) == [
        ("gpucloud:team.members", f"['{role}'] listed more than once; one entry per principal with its access level")
    ]
    assert team_issues(members=[{"principalArn": role, "access": "owner"}])[0][0] == "gpucloud:team.members[0].access"
    # A user ARN and the default access level (edit) are accepted.
    team = copy.deepcopy(STACK_FILE["gpucloud:team"])
    team["members"] = [{"principalArn": "arn:aws:iam::123456789012:user/bob"}]
    assert [(m.principal_arn, m.access) for m in parse_team(team).members] == [
        ("arn:aws:iam::123456789012:user/bob", "edit")
    ]


def test_cost_center_label_values_are_valid_kubernetes_labels() -> None:
    from gpucloud.components.team import _label_value

    assert _label_value("ML Vision / EU") == "ML-Vision-EU"
    assert _label_value("-x-") == "x"
    assert len(_label_value("a" * 80)) == 63
    assert _label_value("***") == ""


def _finetune_pod(plan: Plan) -> dict[str, Any]:
    return plan.find("kubernetes:batch/v1:Job", "vision-finetune-job").get("spec.template.spec")


def test_training_pods_take_the_drain_grace_the_platform_exports_for_their_pool() -> None:
    refs = {**REFS, "poolDrainGraceSeconds": {"dev-l4": 150, "infer-l40s": 60}}
    plan = run_program(TEAM_DIR, "dev", config_overrides={"gpucloud:offlineStackReferences": {"gpucloud/dev": refs}})
    pod = _finetune_pod(plan)
    assert pod["terminationGracePeriodSeconds"] == 150
    assert "[ $i -lt 140 ]" in pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][2]


def test_training_pods_keep_110_seconds_on_an_older_platform_or_an_undeclared_pool(plan: Plan) -> None:
    # dev's platform exports an empty map (no dev pool declares a checkpoint model).
    assert REFS["poolDrainGraceSeconds"] == {}
    assert _finetune_pod(plan)["terminationGracePeriodSeconds"] == 110
    older = {k: v for k, v in REFS.items() if k != "poolDrainGraceSeconds"}
    plan = run_program(TEAM_DIR, "dev", config_overrides={"gpucloud:offlineStackReferences": {"gpucloud/dev": older}})
    assert _finetune_pod(plan)["terminationGracePeriodSeconds"] == 110
