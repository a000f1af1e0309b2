"""Node health gate: the agent's decisions (verdicts, patches, SigV4), the DaemonSets and RBAC under recording
mocks, the startup taint on each pool backend, and the Karpenter NodeRepair gate."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from test_addons import cluster_handle, platform_data

from gpucloud.components.addons import node_health_agent as agent
from gpucloud.components.addons.node_health import (
    HEALTH_TAINT,
    NodeHealth,
    NodeHealthConfig,
    dcgm_script,
    scaling_policy,
)
from gpucloud.components.karpenter import karpenter_values
from gpucloud.components.nodepools import GpuNodePool, GpuNodePoolConfig
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import SpecError, parse_platform

DS = "kubernetes:apps/v1:DaemonSet"
KEY = "startup-taint.cluster-autoscaler.kubernetes.io/gpucloud-health"


# -- the agent ---------------------------------------------------------------------------------------------------


def test_verdicts_wait_for_every_check(tmp_path) -> None:
    (tmp_path / "gpu").write_text("pass\n")
    assert agent.verdicts(str(tmp_path), ["gpu", "efa"]) is None
    assert agent.verdicts(str(tmp_path), ["efa", "gpu"]) is None
    (tmp_path / "efa").write_text("fail: fi_info -p efa: no provider\n")
    results = agent.verdicts(str(tmp_path), ["gpu", "efa"])
    assert results == {"gpu": "pass", "efa": "fail: fi_info -p efa: no provider"}
    assert agent.failures(results) == ["efa: fail: fi_info -p efa: no provider"]
    assert agent.failures({"gpu": "pass"}) == []


def test_fatal_xids_from_a_prometheus_answer() -> None:
    answer = {
        "data": {
            "result": [
                {"metric": {"gpu": "0"}, "value": [1, "79"]},
                {"metric": {"gpu": "1"}, "value": [1, "13"]},
                {"metric": {"gpu": "2"}, "value": [1, "48.0"]},
                {"metric": {"gpu": "3"}, "value": [1, "NaN"]},
                {"metric": {"gpu": "4"}},
            ]
        }
    }
    assert agent.fatal_xids(answer, {48, 79, 94}) == [48, 79]
    assert agent.fatal_xids({}, {48}) == []


def test_untaint_patch_removes_only_the_startup_taint_and_tests_first() -> None:
    gpu = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    health = {"key": KEY, "value": "unchecked", "effect": "NoSchedule"}
    node = {"spec": {"taints": [gpu, health]}}
    assert agent.untaint_patch(node, KEY) == [
        {"op": "test", "path": "/spec/taints", "value": [gpu, health]},
        {"op": "replace", "path": "/spec/taints", "value": [gpu]},
    ]
    assert agent.untaint_patch({"spec": {"taints": [gpu]}}, KEY) == []
    assert agent.untaint_patch({"spec": {}}, KEY) == []


def test_quarantine_cordons_labels_and_sets_the_repair_condition() -> None:
    patch = agent.quarantine_patch("gpu: fail: dcgmi diag -r 2")
    assert patch["spec"] == {"unschedulable": True}
    assert patch["metadata"]["labels"] == {"gpucloud.io/health": "failed"}
    assert patch["metadata"]["annotations"] == {"gpucloud.io/health-reason": "gpu: fail: dcgmi diag -r 2"}
    assert len(agent.quarantine_patch("x" * 5000)["metadata"]["annotations"]["gpucloud.io/health-reason"]) == 1000
    assert agent.condition_patch("why", "2026-11-30T00:00:00Z") == {
        "status": {
            "conditions": [
                {
                    "type": "AcceleratedHardwareReady",
                    "status": "False",
                    "reason": "GpucloudHealthCheckFailed",
                    "message": "why",
                    "lastHeartbeatTime": "2026-11-30T00:00:00Z",
                    "lastTransitionTime": "2026-11-30T00:00:00Z",
                }
            ]
        }
    }
    assert agent.passed_patch() == {
        "metadata": {"labels": {"gpucloud.io/health": "passed"}, "annotations": {"gpucloud.io/health-reason": None}}
    }


def test_instance_id_from_provider_id() -> None:
    assert agent.instance_id("aws:///us-east-1a/i-0123456789abcdef0") == "i-0123456789abcdef0"
    assert agent.instance_id("aws:///us-east-1a/fargate-ip-10-0-0-1") is None
    assert agent.instance_id("gce://p/z/i-123") is None
    assert agent.instance_id("") is None


def test_sigv4_matches_botocore() -> None:
    """The agent signs SetInstanceHealth itself (no SDK in the image); botocore's signer is the reference."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    creds = {"AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG", "Token": "session-token"}
    now = datetime.datetime(2026, 11, 30, 12, 0, 0, tzinfo=datetime.UTC)
    body = agent.set_instance_health_body("i-0123456789abcdef0")
    url = "https://autoscaling.us-east-1.amazonaws.com/"
    ours = agent.sigv4_headers("POST", url, body, "us-east-1", "autoscaling", creds, now)
    signed = {k: v for k, v in ours.items() if k != "authorization"}
    request = AWSRequest(method="POST", url=url, data=body, headers=signed)
    signer = SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", "session-token"), "autoscaling", "us-east-1")
    # botocore's own canonical request, string to sign and signature over the same headers and time.
    request.context["timestamp"] = now.strftime("%Y%m%dT%H%M%SZ")
    canonical = signer.canonical_request(request)
    signature = signer.signature(signer.string_to_sign(request, canonical), request)
    assert ours["authorization"].endswith(
        f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(request))}, Signature={signature}"
    )
    assert ours["x-amz-date"] == "20261130T120000Z"
    assert ours["x-amz-security-token"] == "session-token"
    # The autoscaling Query API request (API version 2011-01-01, SetInstanceHealth parameters).
    assert body == (
        "Action=SetInstanceHealth&Version=2011-01-01&InstanceId=i-0123456789abcdef0&HealthStatus=Unhealthy"
        "&ShouldRespectGracePeriod=false"
    )


# -- the component -------------------------------------------------------------------------------------------------


def _spec(**node_health: Any) -> Any:
    addons: dict[str, Any] = {"nodeHealth": {"enabled": True, **node_health}}
    return parse_platform(platform_data(addons))


def _render(spec: Any, prometheus: str | None = "http://prom:9090") -> Plan:
    def program() -> None:
        NodeHealth(
            "health",
            NodeHealthConfig(
                region=spec.region,
                tags=spec.all_tags,
                addons=spec.addons,
                pools=spec.node_pools,
                prometheus_url=prometheus,
            ),
            cluster_handle(),
        )

    return run_callable(program, preview=False, region="us-east-1")


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container["env"]}


def test_daemonsets_per_pool_group_with_efa_check_only_where_an_image_exists() -> None:
    plan = _render(_spec())
    ds = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type(DS)}
    # No EFA image (no NCCL test image, no efaCheckImage): the EFA pool gets the GPU checks only.
    assert sorted(ds) == ["gpu-node-health"]
    plan = _render(_spec(efaCheckImage="registry.example/nccl-tests:1"))
    ds = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type(DS)}
    assert sorted(ds) == ["gpu-node-health", "gpu-node-health-efa"]
    efa = ds["gpu-node-health-efa"]
    pod = efa["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "gpucloud.io/pool", "operator": "In", "values": ["train-h100"]}]}]
    assert [c["name"] for c in pod["containers"]] == ["dcgm", "efa", "agent"]
    assert {"key": KEY, "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert efa["metadata"]["annotations"] == {"gpucloud.io/removes-taint": KEY}
    env = _env(pod["containers"][2])
    assert env["CHECKS"] == "gpu,efa"
    assert env["TAINT_KEY"] == KEY
    assert env["FATAL_XIDS"] == "48,63,64,74,79,94,95"
    assert env["PROMETHEUS_URL"] == "http://prom:9090"
    gpu_pod = ds["gpu-node-health"]["spec"]["template"]["spec"]
    assert _env(gpu_pod["containers"][-1])["CHECKS"] == "gpu"
    assert gpu_pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][
        0
    ]["matchExpressions"][0]["values"] == ["infer-l40s"]


def test_rbac_is_nodes_and_events_only_and_iam_only_set_instance_health() -> None:
    plan = _render(_spec(), prometheus=None)
    role = plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")[0].inputs
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    ]
    policy = json.loads(plan.of_type("aws:iam/rolePolicy:RolePolicy")[0].inputs["policy"])
    assert policy == scaling_policy("gpucloud-test")
    assert policy["Statement"][0]["Action"] == "autoscaling:SetInstanceHealth"
    assert policy["Statement"][0]["Condition"] == {
        "StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/gpucloud-test": "owned"}
    }
    ds = plan.of_type(DS)[0].inputs["spec"]["template"]["spec"]
    assert "PROMETHEUS_URL" not in _env(ds["containers"][-1])
    no_replace = _render(_spec(replaceFailed=False))
    assert no_replace.of_type("aws:iam/role:Role") == []
    assert (
        _env(no_replace.of_type(DS)[0].inputs["spec"]["template"]["spec"]["containers"][-1])["REPLACE_FAILED"]
        == "false"
    )


def test_dcgm_script_levels_and_period() -> None:
    script = dcgm_script(3, 30)
    assert "run 3\n" in script and "sleep 1800; run 1" in script
    assert "run 1" not in dcgm_script(2, 0).split("run 2\n", 1)[1]


def test_the_dcgm_check_defaults_to_the_bundle_pinned_dcgm_build_and_runs_only_dcgm_and_coreutils() -> None:
    import re

    plan = _render(_spec())
    (ds,) = plan.of_type(DS)
    dcgm = ds.inputs["spec"]["template"]["spec"]["containers"][0]
    # DCGM 4.5.2's ubi9 build, as NVIDIA's GPU Operator v26.3 OLM bundle pins it (digest from the image lock).
    assert dcgm["image"] == (
        "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubi9@sha256:"
        "d7558fa75ed7b703665cbc6ba6360ef4e53ecdefe65c1881c165d2ac816c674a"
    )
    # The image's entrypoint (nv-hostengine) is replaced by /bin/sh, and the script calls DCGM's two binaries by
    # PATH and coreutils only: nothing that one base (ubi9, ubuntu22.04) has and the other lacks.
    assert dcgm["command"][:2] == ["/bin/sh", "-c"]
    keywords = {"do", "done", "else", "fi", "if", "then", "while", "run", "set", "true", "echo"}
    words = {
        m.group(1)
        for m in re.finditer(
            r"(?=(?:^|[;&|(]|\b(?:then|do|else|if|while)\b)[ \t]*([a-z][\w.-]*)(?![\w.-]*=))", dcgm["command"][2], re.M
        )
    }
    assert words - keywords == {"nv-hostengine", "dcgmi", "sleep", "tail", "tr", "mv"}


def test_bad_values_are_one_clear_message() -> None:
    with pytest.raises(SpecError) as err:
        _spec(diagLevel=4)
    assert "addons.nodeHealth.diagLevel" in str(err.value)


# -- pools and Karpenter -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["managed", "self-managed", "karpenter"])
def test_startup_taint_on_every_backend(backend: str) -> None:
    spec = parse_platform(platform_data(backend=backend, efa=False))
    pool = spec.node_pools[1]

    def program() -> None:
        GpuNodePool(
            "p",
            GpuNodePoolConfig(
                region=spec.region,
                tags=spec.all_tags,
                environment="prod",
                pool=pool,
                cluster=cluster_handle(),
                startup_taint=HEALTH_TAINT,
                karpenter=None,
            ),
        )

    if backend == "karpenter":
        from gpucloud.components.nodepools.common import GPU_TAINT
        from gpucloud.components.nodepools.karpenter_pool import karpenter_node_pool_spec

        node_pool = karpenter_node_pool_spec(pool, ["us-east-1a"], {}, GPU_TAINT, startup_taint=HEALTH_TAINT)
        assert node_pool["template"]["spec"]["startupTaints"] == [
            {"key": KEY, "value": "unchecked", "effect": "NoSchedule"}
        ]
        assert node_pool["template"]["spec"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
        ]
        assert "startupTaints" not in karpenter_node_pool_spec(pool, ["us-east-1a"], {}, GPU_TAINT)["template"]["spec"]
        return
    plan = run_callable(program, preview=False, region="us-east-1")
    if backend == "managed":
        group = plan.of_type("aws:eks/nodeGroup:NodeGroup")[0].inputs
        assert group["taints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
            {"key": KEY, "value": "unchecked", "effect": "NO_SCHEDULE"},
        ]
    else:
        asg = plan.of_type("aws:autoscaling/group:Group")[0].inputs
        # Cluster Autoscaler simulates an empty group without startup-taint.cluster-autoscaler.kubernetes.io/*
        # taints, so no node-template tag announces it.
        assert not any(KEY in t["key"] for t in asg["tags"])


def test_karpenter_node_repair_gate() -> None:
    assert karpenter_values("c", "https://e", "q")["settings"]["featureGates"] == {"reservedCapacity": True}
    assert karpenter_values("c", "https://e", "q", node_repair=True)["settings"]["featureGates"] == {
        "reservedCapacity": True,
        "nodeRepair": True,
    }
