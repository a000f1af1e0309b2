"""VllmServer and the AWS Load Balancer Controller under recording mocks: tensor parallelism from the catalog,
model-aware readiness, KEDA triggers, the NLB annotations (internal unless allowed), the controller's chart
values against the pinned chart and its IAM policy."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from test_addons import cluster_handle, platform_data

from gpucloud.charts import lock as charts_lock
from gpucloud.components.addons.lb_controller import (
    LoadBalancerController,
    LoadBalancerControllerConfig,
    controller_policy,
    controller_values,
)
from gpucloud.components.workloads import VllmServer, VllmServerConfig
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import SpecError, parse_platform

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "gpucloud", "Env": "dev"}
PROM = "http://kube-prometheus-stack-prometheus.monitoring.svc.cluster.local:9090"


def config(**overrides: Any) -> VllmServerConfig:
    kwargs: dict[str, Any] = {
        "region": "us-east-1",
        "tags": TAGS,
        "namespace": "vision",
        "job_name": "assistant",
        "pool": "infer-l40s",
        "instance_type": "g6e.12xlarge",
        "image": "vllm/vllm-openai:v0.11.0",
        "model": "/fsx/models/qwen2.5-72b-instruct",
        "claim_name": "vision-fsx-lustre",
        "prometheus_server_url": PROM,
        **overrides,
    }
    return VllmServerConfig(**kwargs)


def render(cfg: VllmServerConfig) -> Plan:
    return run_callable(lambda: VllmServer("srv", cfg), preview=False, region="us-east-1")


def one(plan: Plan, type_: str) -> dict[str, Any]:
    found = plan.of_type(type_)
    assert len(found) == 1, type_
    return found[0].inputs


def test_tensor_parallel_size_is_the_nodes_gpu_count_and_weights_come_from_fsx() -> None:
    dep = one(render(config()), "kubernetes:apps/v1:Deployment")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    # g6e.12xlarge has 4 L40S GPUs (catalog): one replica spans them.
    assert args[args.index("--tensor-parallel-size") + 1] == "4"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert args[args.index("--model") + 1] == "/fsx/models/qwen2.5-72b-instruct"
    assert "--load-format" not in args
    assert {"name": "weights", "mountPath": "/fsx", "readOnly": True} in container["volumeMounts"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/v1/models"
    assert container["startupProbe"]["httpGet"]["path"] == "/v1/models"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    one_gpu = one(render(config(instance_type="g6e.xlarge")), "kubernetes:apps/v1:Deployment")
    one_args = one_gpu["spec"]["template"]["spec"]["containers"][0]["args"]
    assert one_args[one_args.index("--tensor-parallel-size") + 1] == "1"


def test_s3_weights_stream_with_the_runai_loader_under_the_team_identity() -> None:
    dep = one(
        render(config(model="s3://models/qwen", claim_name=None, service_account="vision-workloads")),
        "kubernetes:apps/v1:Deployment",
    )
    pod = dep["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args[args.index("--load-format") + 1] == "runai_streamer"
    assert pod["serviceAccountName"] == "vision-workloads"
    assert [v["name"] for v in pod["volumes"]] == ["dshm"]


def test_keda_scales_on_queue_depth_and_gpu_utilisation() -> None:
    so = one(
        render(config(queue_depth_target=5, gpu_utilization_target_percent=70)),
        "kubernetes:keda.sh/v1alpha1:ScaledObject",
    )
    triggers = so["spec"]["triggers"]
    assert [(t["metricType"], t["metadata"]["query"], t["metadata"]["threshold"]) for t in triggers] == [
        ("AverageValue", 'sum(vllm:num_requests_waiting{namespace="vision", pod=~"assistant-.*"})', "5"),
        ("Value", 'avg(DCGM_FI_DEV_GPU_UTIL{namespace="vision", pod=~"assistant-.*"})', "70"),
    ]
    assert (so["spec"]["minReplicaCount"], so["spec"]["maxReplicaCount"]) == (1, 2)
    monitor = one(render(config()), "kubernetes:monitoring.coreos.com/v1:PodMonitor")
    assert monitor["spec"]["podMetricsEndpoints"] == [{"port": "http", "path": "/metrics"}]


def test_service_is_an_internal_nlb_unless_the_platform_allows_internet_facing() -> None:
    svc = one(render(config()), "kubernetes:core/v1:Service")
    assert svc["spec"]["type"] == "LoadBalancer"
    assert svc["metadata"]["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    }
    with pytest.raises(ValidationError) as err:
        config(internet_facing=True)
    assert "allowInternetFacing" in str(err.value)
    public = one(
        render(config(internet_facing=True, allow_internet_facing=True, source_ranges=["203.0.113.0/24"])),
        "kubernetes:core/v1:Service",
    )
    assert public["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internet-facing"
    assert public["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ValidationError) as err:
        config(model="/data/models/x")
    assert "model: a path must be under mount_path /fsx" in str(err.value)
    with pytest.raises(ValidationError) as err:
        config(claim_name=None)
    assert "claim_name" in str(err.value)
    with pytest.raises(ValidationError) as err:
        config(min_replicas=3, max_replicas=2)
    assert "max_replicas" in str(err.value)


# -- the load balancer controller --------------------------------------------------------------------------------


def test_controller_values_are_chart_keys_and_render() -> None:
    from gpucloud.charts.helm import helm_template

    chart = charts_lock.pin("aws-load-balancer-controller").chart_dir
    upstream = yaml.safe_load((chart / "values.yaml").read_text())
    values = controller_values("gpucloud-test", "us-east-1", "vpc-0123")
    assert set(values) <= set(upstream)
    objects = helm_template(
        chart, release="aws-load-balancer-controller", namespace="kube-system", values=values, kube_version="1.34.0"
    )
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--cluster-name=gpucloud-test" in args
    assert "--aws-vpc-id=vpc-0123" in args
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "aws-load-balancer-controller"
    assert not any(o["kind"] == "IngressClass" for o in objects)


def test_controller_release_role_and_policy() -> None:
    spec = parse_platform(platform_data({"loadBalancerController": {"enabled": True}}))

    def program() -> None:
        LoadBalancerController(
            "lbc",
            LoadBalancerControllerConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons),
            cluster_handle(),
        )

    plan = run_callable(program, preview=False, region="us-east-1")
    release = one(plan, "kubernetes:helm.sh/v3:Release")
    assert (release["version"], release["namespace"]) == ("3.5.0", "kube-system")
    pia = one(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (pia["namespace"], pia["serviceAccount"]) == ("kube-system", "aws-load-balancer-controller")
    policy = json.loads(one(plan, "aws:iam/rolePolicy:RolePolicy")["policy"])
    assert policy == controller_policy("aws")


def test_policy_mutates_only_what_the_controller_tagged() -> None:
    statements = controller_policy("aws-cn")["Statement"]
    deletes = [s for s in statements if "elasticloadbalancing:DeleteLoadBalancer" in s["Action"]]
    assert [s["Condition"] for s in deletes] == [{"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}]
    sg_delete = [s for s in statements if "ec2:DeleteSecurityGroup" in s["Action"]]
    assert [s["Condition"] for s in sg_delete] == [{"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}]
    creates = next(s for s in statements if "elasticloadbalancing:CreateLoadBalancer" in s["Action"])
    assert creates["Condition"] == {"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}}
    assert all(
        r.startswith("arn:aws-cn:")
        for s in statements
        for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
        if r != "*"
    )


def test_lb_controller_spec_errors() -> None:
    with pytest.raises(SpecError) as err:
        parse_platform(platform_data({"loadBalancerController": {"enabled": True, "version": "2.0.0"}}))
    assert "addons.loadBalancerController.version" in str(err.value)


def _grants(policy: dict) -> set[tuple[str, str, str, str]]:
    """(effect, action, resource, condition) for every single grant: statement order and grouping do not matter."""
    out = set()
    for st in policy["Statement"]:
        actions = [st["Action"]] if isinstance(st["Action"], str) else st["Action"]
        resources = [st["Resource"]] if isinstance(st["Resource"], str) else st["Resource"]
        condition = json.dumps(st.get("Condition") or {}, sort_keys=True)
        out |= {(st["Effect"], a, r, condition) for a in actions for r in resources}
    return out


def test_controller_policy_is_upstreams_documented_policy_at_the_pinned_version() -> None:
    from gpucloud.charts.lock import artifact, pin

    policy_pin = artifact("aws-load-balancer-controller-iam-policy")
    # The vendored policy is the one for the controller the pinned chart installs.
    assert policy_pin.version == pin("aws-load-balancer-controller").app_version == "v3.5.0"
    upstream = json.loads((policy_pin.artifact_dir / "iam_policy.json").read_text())
    assert controller_policy("aws") == upstream
    assert len(_grants(upstream)) == 98
    # Upstream's own China-partition copy (reordered statements) grants exactly what the partition move gives.
    china = json.loads((policy_pin.artifact_dir / "iam_policy_cn.json").read_text())
    assert _grants(controller_policy("aws-cn")) == _grants(china)
    assert controller_policy("aws-us-gov")["Statement"][5]["Resource"] == "arn:aws-us-gov:ec2:*:*:security-group/*"
    # Target registration is granted on target groups only, never on every tagged resource.
    register = {g for g in _grants(upstream) if g[1] == "elasticloadbalancing:RegisterTargets"}
    assert register == {
        ("Allow", "elasticloadbalancing:RegisterTargets", "arn:aws:elasticloadbalancing:*:*:targetgroup/*/*", "{}")
    }
