"""GpuAddons under recording mocks: which Helm releases and objects each option renders, and their values."""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from gpucloud.components.addons import GpuAddons, GpuAddonsConfig
from gpucloud.components.interfaces import ClusterHandle
from gpucloud.components.platform import Platform, _build_addons, build
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import PlatformSpec, SpecError, parse_platform

RELEASE = "kubernetes:helm.sh/v3:Release"
KMS = "arn:aws:kms:us-east-1:123456789012:key/abcd"


def cluster_handle(provider: pulumi.ProviderResource | None = None) -> ClusterHandle:
    return ClusterHandle(
        name="gpucloud-test",
        kubernetes_version="1.34",
        endpoint="https://example.eks.amazonaws.com",
        certificate_authority="Q0E=",
        vpc_id="vpc-0123",
        vpc_cidr="10.40.0.0/16",
        subnet_ids_by_az={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"},
        node_security_group_id="sg-node",
        cluster_security_group_id="sg-cluster",
        efa_security_group_id="sg-efa",
        node_role_arn="arn:aws:iam::123456789012:role/nodes",
        node_role_name="nodes",
        oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x",
        oidc_provider_url="https://oidc.example",
        kms_key_arn=KMS,
        k8s_provider=provider,
    )


def platform_data(addons: dict[str, Any] | None = None, backend: str = "managed", efa: bool = True) -> dict[str, Any]:
    pools: list[dict[str, Any]] = [
        {
            "name": "train-h100",
            "workload": "training",
            "instanceTypes": ["p5.48xlarge"],
            "minSize": 0,
            "desiredSize": 2,
            "maxSize": 4,
            "availabilityZones": ["us-east-1a"],
            "efa": {"enabled": efa},
            "backend": backend,
        },
        {
            "name": "infer-l40s",
            "workload": "inference",
            "instanceTypes": ["g6e.12xlarge"],
            "minSize": 1,
            "desiredSize": 1,
            "maxSize": 4,
            "backend": backend,
        },
    ]
    data: dict[str, Any] = {
        "name": "gpucloud-test",
        "environment": "prod",
        "region": "us-east-1",
        "availabilityZones": ["us-east-1a", "us-east-1b"],
        "tags": {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud"},
        "cluster": {
            "kubernetesVersion": "1.34",
            "adminPrincipalArns": ["arn:aws:iam::123456789012:role/platform-admin"],
        },
        "nodePools": pools,
        "budget": {"monthlyLimitUsd": 1000, "alertEmails": ["a@example.com"]},
    }
    if addons is not None:
        data["addons"] = addons
    return data


def spec_of(addons: dict[str, Any] | None = None, **kwargs: Any) -> PlatformSpec:
    return parse_platform(platform_data(addons, **kwargs))


def render(spec: PlatformSpec, with_provider: bool = False) -> Plan:
    def program() -> None:
        provider = k8s.Provider("eks", kubeconfig="{}") if with_provider else None
        GpuAddons(
            "addons",
            GpuAddonsConfig(region=spec.region, tags=spec.all_tags, addons=spec.addons, pools=spec.node_pools),
            cluster_handle(provider),
        )

    return run_callable(program, preview=False, region="us-east-1")


def releases(plan: Plan) -> dict[str, dict[str, Any]]:
    return {r.name.removeprefix("addons-"): r.inputs for r in plan.of_type(RELEASE)}


def names(plan: Plan, type_: str) -> set[str]:
    return {r.name for r in plan.of_type(type_)}


# -- defaults ---------------------------------------------------------------------------------------------


def test_defaults_render_device_plugin_prometheus_logs_and_cluster_autoscaler() -> None:
    plan = render(spec_of())
    assert set(releases(plan)) == {
        "nvidia-device-plugin",
        "aws-efa-k8s-device-plugin",
        "kube-prometheus-stack",
        "dcgm-exporter",
        "aws-for-fluent-bit",
        "cluster-autoscaler",
        "keda",
        "metrics-server",
    }
    assert names(plan, "kubernetes:core/v1:Namespace") == {
        "addons-gpu-ns",
        "addons-monitoring-ns",
        "addons-logging-ns",
        "addons-keda-ns",
    }
    assert names(plan, "kubernetes:core/v1:ConfigMap") == {
        "addons-device-plugin-config",
        "addons-gpu-dashboard",
        "addons-ca-priorities",
    }
    assert names(plan, "kubernetes:monitoring.coreos.com/v1:PrometheusRule") == {"addons-gpu-alerts"}
    assert names(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation") == {
        "addons-fluent-bit-pod-identity",
        "addons-cluster-autoscaler-pod-identity",
        "addons-alertmanager-pod-identity",
    }
    assert plan.of_type("aws:amp/workspace:Workspace") == []
    # Prometheus' volume needs the EBS CSI driver; nothing else installs it.
    assert names(plan, "aws:eks/addon:Addon") == {"addons-ebs-csi-driver"}
    assert names(plan, "kubernetes:storage.k8s.io/v1:StorageClass") == {"addons-gp3"}
    assert names(plan, "kubernetes:core/v1:Secret") == {"addons-grafana-admin"}
    assert names(plan, "aws:sns/topic:Topic") == {"addons-alerts"}
    assert [r for r in plan if "mpi-operator" in r.name] == []


def test_every_release_pins_chart_version_repo_and_namespace() -> None:
    rel = releases(render(spec_of()))
    assert {k: (v["chart"], v["version"], v["repositoryOpts"]["repo"], v["namespace"]) for k, v in rel.items()} == {
        "nvidia-device-plugin": (
            "nvidia-device-plugin",
            "0.18.2",
            "https://nvidia.github.io/k8s-device-plugin",
            "nvidia-device-plugin",
        ),
        "aws-efa-k8s-device-plugin": (
            "aws-efa-k8s-device-plugin",
            "v0.5.13",
            "https://aws.github.io/eks-charts",
            "kube-system",
        ),
        "kube-prometheus-stack": (
            "kube-prometheus-stack",
            "75.6.1",
            "https://prometheus-community.github.io/helm-charts",
            "monitoring",
        ),
        "dcgm-exporter": ("dcgm-exporter", "4.8.1", "https://nvidia.github.io/dcgm-exporter/helm-charts", "monitoring"),
        "aws-for-fluent-bit": ("aws-for-fluent-bit", "0.1.35", "https://aws.github.io/eks-charts", "logging"),
        "cluster-autoscaler": (
            "cluster-autoscaler",
            "9.53.0",
            "https://kubernetes.github.io/autoscaler",
            "kube-system",
        ),
        "keda": ("keda", "2.20.2", "https://kedacore.github.io/charts", "keda"),
        "metrics-server": (
            "metrics-server",
            "3.13.1",
            "https://kubernetes-sigs.github.io/metrics-server",
            "kube-system",
        ),
    }
    assert all(v["name"] == k and v["atomic"] is True for k, v in rel.items())


def test_chart_version_outside_the_lock_is_a_spec_error_naming_the_pin() -> None:
    problems = _problems({"gpu": {"devicePluginVersion": "0.17.1"}, "efa": {"version": "v0.5.7"}})
    upgrade = "(upgrading is a lock change plus the vendored copy)"
    assert problems == [
        (
            "gpucloud:platform.addons.gpu.devicePluginVersion",
            f"chart nvidia-device-plugin version '0.17.1' is not pinned; the lock pins 0.18.2 {upgrade}",
        ),
        (
            "gpucloud:platform.addons.efa.version",
            f"chart aws-efa-k8s-device-plugin version 'v0.5.7' is not pinned; the lock pins v0.5.13 {upgrade}",
        ),
    ]


def test_namespace_prefix_applies_to_our_namespaces_not_kube_system() -> None:
    rel = releases(render(spec_of({"namespacePrefix": "gpc-"})))
    assert {k: v["namespace"] for k, v in rel.items()} == {
        "nvidia-device-plugin": "gpc-nvidia-device-plugin",
        "aws-efa-k8s-device-plugin": "kube-system",
        "kube-prometheus-stack": "gpc-monitoring",
        "dcgm-exporter": "gpc-monitoring",
        "aws-for-fluent-bit": "gpc-logging",
        "cluster-autoscaler": "kube-system",
        "keda": "gpc-keda",
        "metrics-server": "kube-system",
    }


def test_kubernetes_objects_use_the_cluster_provider() -> None:
    plan = render(spec_of(), with_provider=True)
    k8s_records = [r for r in plan if r.type.startswith("kubernetes:") and r.custom]
    assert k8s_records
    assert all(r.provider and "pulumi:providers:kubernetes" in r.provider for r in k8s_records)


# -- GPU device plugin / GPU Operator --------------------------------------------------------------------


def test_device_plugin_values_reference_the_sharing_configmap_and_tolerate_the_gpu_taint() -> None:
    plan = render(spec_of())
    values = releases(plan)["nvidia-device-plugin"]["values"]
    assert values["config"] == {"name": "nvidia-device-plugin-configs", "default": "default"}
    assert values["gfd"] == {"enabled": True}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]
    # nvidia-device-plugin 0.18.2 declares node-feature-discovery with `alias: nfd`.
    assert "node-feature-discovery" not in values
    efa_rule = values["nfd"]["worker"]["config"]["sources"]["custom"][0]
    assert efa_rule["labels"] == {"vpc.amazonaws.com/efa.present": "true"}
    assert values["nfd"]["enabled"] is True
    cm = plan.find("kubernetes:core/v1:ConfigMap", "addons-device-plugin-config")
    assert set(cm.inputs["data"]) == {"default"}
    assert yaml.safe_load(cm.inputs["data"]["default"]) == {"version": "v1", "flags": {"migStrategy": "none"}}


def test_time_slicing_adds_a_named_config_and_node_labels() -> None:
    spec = spec_of({"gpu": {"timeSlicing": {"replicas": 4, "pools": ["infer-l40s"]}}})
    cm = render(spec).find("kubernetes:core/v1:ConfigMap", "addons-device-plugin-config")
    assert set(cm.inputs["data"]) == {"default", "time-sliced"}
    assert yaml.safe_load(cm.inputs["data"]["time-sliced"])["sharing"] == {
        "timeSlicing": {"renameByDefault": False, "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
    }
    assert spec.addons.node_labels_for("infer-l40s") == {"nvidia.com/device-plugin.config": "time-sliced"}
    assert spec.addons.node_labels_for("train-h100") == {}


# GPU Operator operand digests from gpucloud/charts/images.json (NVIDIA/gpu-operator v26.3.0 OLM bundle).
DRIVER_MANAGER_DIGEST = "sha256:6677437faff2c45506484dd9f0f04ad3b4880aa65b26d11f76d169e65497fade"
TOOLKIT_DIGEST = "sha256:62204e9fc0f817e6e3fd8edc18d0322feda3728cdf89270d20a8d01d7ef0edb5"
MIG_MANAGER_DIGEST = "sha256:2efec3ae4208909d18166811254538b6f6996d6bb1d0b524139429fb79c03c70"


def test_gpu_operator_keeps_ami_driver_and_exports_dcgm_itself() -> None:
    rel = releases(render(spec_of({"gpu": {"use": "gpu-operator"}})))
    assert "nvidia-device-plugin" not in rel
    assert "dcgm-exporter" not in rel
    op = rel["gpu-operator"]
    assert (op["chart"], op["version"], op["repositoryOpts"]["repo"], op["namespace"]) == (
        "gpu-operator",
        "v26.3.0",
        "https://helm.ngc.nvidia.com/nvidia",
        "gpu-operator",
    )
    v = op["values"]
    # The image lock's operand digests (NVIDIA's v26.3.0 OLM bundle) ride along as each operand's version.
    assert (v["driver"], v["toolkit"]) == (
        {"enabled": False, "manager": {"version": DRIVER_MANAGER_DIGEST}},
        {"enabled": False, "version": TOOLKIT_DIGEST},
    )
    assert v["dcgmExporter"] == {
        "enabled": True,
        "serviceMonitor": {"enabled": True, "interval": "15s", "honorLabels": True},
        "version": "sha256:b5d8813707469c5717ce27a5fefb933a29e8ba6cd2fd7d93ad3dcd6ae18579ef",
    }
    assert v["migManager"] == {"enabled": False, "version": MIG_MANAGER_DIGEST}
    assert "mig" not in v


def test_gpu_operator_with_mig_and_a_plain_ami() -> None:
    spec = spec_of(
        {
            "gpu": {
                "use": "gpu-operator",
                "driverPreinstalled": False,
                "mig": {"strategy": "mixed", "pools": ["train-h100"]},
            }
        }
    )
    plan = render(spec)
    v = releases(plan)["gpu-operator"]["values"]
    assert (v["driver"], v["toolkit"]) == (
        {"enabled": True, "manager": {"version": DRIVER_MANAGER_DIGEST}},
        {"enabled": True, "version": TOOLKIT_DIGEST},
    )
    assert v["mig"] == {"strategy": "mixed"}
    assert v["migManager"] == {"enabled": True, "config": {"default": "all-disabled"}, "version": MIG_MANAGER_DIGEST}
    cm = plan.find("kubernetes:core/v1:ConfigMap", "addons-device-plugin-config")
    assert yaml.safe_load(cm.inputs["data"]["default"])["flags"] == {"migStrategy": "mixed"}
    assert spec.addons.node_labels_for("train-h100") == {"nvidia.com/mig.config": "all-1g.10gb"}


# -- EFA -----------------------------------------------------------------------------------------------------


def test_efa_plugin_runs_only_on_efa_nodes() -> None:
    v = releases(render(spec_of()))["aws-efa-k8s-device-plugin"]["values"]
    assert v["nodeSelector"] == {"vpc.amazonaws.com/efa.present": "true"}
    assert v["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"},
    ]
    # The chart reads supportedInstanceLabels, never `affinity`.
    assert "affinity" not in v
    assert v["supportedInstanceLabels"] == {"keys": ["node.kubernetes.io/instance-type"], "values": ["p5.48xlarge"]}


@pytest.mark.parametrize(
    ("region", "repository"),
    [
        # The chart's default is the us-west-2 copy; each Region pulls its own (EKS user guide, add-ons-images).
        ("us-east-1", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"),
        ("us-west-2", "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin"),
        ("ap-east-1", "800184023465.dkr.ecr.ap-east-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"),
        ("eu-south-1", "590381155156.dkr.ecr.eu-south-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"),
        ("cn-north-1", "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/aws-efa-k8s-device-plugin"),
        ("us-gov-west-1", "013241004608.dkr.ecr.us-gov-west-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"),
    ],
)
def test_efa_plugin_pulls_from_the_stacks_own_region(region: str, repository: str) -> None:
    spec = spec_of()

    def program() -> None:
        GpuAddons(
            "addons",
            GpuAddonsConfig(region=region, tags=spec.all_tags, addons=spec.addons, pools=spec.node_pools),
            cluster_handle(),
        )

    v = releases(run_callable(program, preview=False, region=region))["aws-efa-k8s-device-plugin"]["values"]
    assert v["image"] == {"repository": repository}


def test_every_eks_region_has_a_registry() -> None:
    from gpucloud.catalog.registries import eks_registry

    assert eks_registry("xx-nowhere-1") is None
    assert eks_registry("eusc-de-east-1") == "877088126301.dkr.ecr.eusc-de-east-1.amazonaws.eu"
    # ap-east-2's row in the user guide names an ap-east-1 host; the host is built from the Region.
    assert eks_registry("ap-east-2") == "533267051163.dkr.ecr.ap-east-2.amazonaws.com"


@pytest.mark.parametrize(("addons", "efa"), [(None, False), ({"efa": {"enabled": False}}, True)])
def test_no_efa_plugin_without_efa_pools_or_when_disabled(addons: dict[str, Any] | None, efa: bool) -> None:
    assert "aws-efa-k8s-device-plugin" not in releases(render(spec_of(addons, efa=efa)))


# -- observability -------------------------------------------------------------------------------------------


def test_dashboard_configmap_is_a_grafana_dashboard_with_dcgm_metrics() -> None:
    plan = render(spec_of())
    cm = plan.find("kubernetes:core/v1:ConfigMap", "addons-gpu-dashboard")
    assert cm.inputs["metadata"]["labels"] == {"grafana_dashboard": "1"}
    assert cm.inputs["metadata"]["namespace"] == "monitoring"
    dashboard = json.loads(cm.inputs["data"]["gpucloud-gpus.json"])
    assert [p["title"] for p in dashboard["panels"]] == [
        "GPU utilisation",
        "GPU memory used",
        "GPU temperature",
        "GPU power",
        "XID errors (last XID per GPU)",
        "Fleet average utilisation",
    ]
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for metric in (
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_XID_ERRORS",
    ):
        assert metric in exprs
    kps = releases(plan)["kube-prometheus-stack"]["values"]
    assert kps["grafana"]["sidecar"]["dashboards"]["label"] == "grafana_dashboard"
    assert kps["prometheus"]["prometheusSpec"]["ruleSelectorNilUsesHelmValues"] is False


def test_alert_rules_cover_idle_spend_xid_and_temperature() -> None:
    spec = spec_of({"observability": {"alerts": {"idleUtilizationPercent": 5, "idleForHours": 3}}})
    plan = render(spec)
    rule = plan.find("kubernetes:monitoring.coreos.com/v1:PrometheusRule", "addons-gpu-alerts")
    rules = {r["alert"]: r for r in rule.inputs["spec"]["groups"][0]["rules"]}
    assert set(rules) == {"GpuIdle", "GpuXidError", "GpuFatalXidError", "GpuHighTemperature"}
    assert (rules["GpuIdle"]["expr"], rules["GpuIdle"]["for"]) == ("avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL) < 5", "3h")
    assert rules["GpuHighTemperature"]["expr"] == "max by (Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP) > 85"
    assert "DCGM_FI_DEV_XID_ERRORS == 79" in rules["GpuFatalXidError"]["expr"]
    assert rules["GpuFatalXidError"]["labels"]["severity"] == "critical"
    kps = plan.find(RELEASE, "addons-kube-prometheus-stack")
    assert kps.urn in rule.dependencies


def test_alerts_off_renders_no_rule() -> None:
    plan = render(spec_of({"observability": {"alerts": {"enabled": False}}}))
    assert plan.of_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule") == []


def test_dcgm_exporter_values() -> None:
    v = releases(render(spec_of()))["dcgm-exporter"]["values"]
    assert v["serviceMonitor"] == {"enabled": True, "interval": "15s", "honorLabels": True}
    assert "nodeSelector" not in v
    terms = v["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "gpucloud.io/pool", "operator": "In", "values": ["infer-l40s", "train-h100"]}]},
        {
            "matchExpressions": [
                {"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]}
            ]
        },
    ]
    assert v["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_amp_replaces_in_cluster_prometheus() -> None:
    plan = render(spec_of({"observability": {"metrics": "amp"}}))
    rel = releases(plan)
    assert "kube-prometheus-stack" not in rel
    assert rel["dcgm-exporter"]["values"]["serviceMonitor"]["enabled"] is False
    ws = plan.find("aws:amp/workspace:Workspace", "addons-amp")
    assert ws.inputs["kmsKeyArn"] == KMS
    scraper = plan.find("aws:amp/scraper:Scraper", "addons-scraper")
    assert scraper.inputs["source"]["eks"]["subnetIds"] == ["subnet-a", "subnet-b"]
    assert scraper.inputs["source"]["eks"]["clusterArn"] == "arn:aws:eks:us-east-1:123456789012:cluster/gpucloud-test"
    scrape = yaml.safe_load(scraper.inputs["scrapeConfiguration"])
    assert scrape["scrape_configs"][0]["job_name"] == "dcgm-exporter"
    rules = yaml.safe_load(
        plan.find("aws:amp/ruleGroupNamespace:RuleGroupNamespace", "addons-gpu-alerts").inputs["data"]
    )
    assert [r["alert"] for r in rules["groups"][0]["rules"]] == [
        "GpuIdle",
        "GpuXidError",
        "GpuFatalXidError",
        "GpuHighTemperature",
    ]
    entry = plan.find("aws:eks/accessEntry:AccessEntry", "addons-scraper-access")
    assert entry.inputs["userName"] == "aps-collector-user"
    # AMP's rules need an alert manager definition to go anywhere; AMP publishes to the topic as aps.amazonaws.com.
    definition = yaml.safe_load(
        plan.find("aws:amp/alertManagerDefinition:AlertManagerDefinition", "addons-alert-manager").inputs["definition"]
    )
    config = yaml.safe_load(definition["alertmanager_config"])
    assert config["route"]["receiver"] == "sns"
    assert config["receivers"][0]["sns_configs"][0]["sigv4"] == {"region": "us-east-1"}
    topic_policy = json.loads(plan.find("aws:sns/topicPolicy:TopicPolicy", "addons-alerts-policy").inputs["policy"])
    assert topic_policy["Statement"][0]["Principal"] == {"Service": "aps.amazonaws.com"}
    assert "kmsMasterKeyId" not in plan.find("aws:sns/topic:Topic", "addons-alerts").inputs
    auth = plan.find("kubernetes:keda.sh/v1alpha1:ClusterTriggerAuthentication", "addons-keda-amp-auth")
    assert auth.inputs["spec"] == {"podIdentity": {"provider": "aws", "identityOwner": "keda"}}
    keda_policy = json.loads(plan.find("aws:iam/rolePolicy:RolePolicy", "addons-keda-policy").inputs["policy"])
    assert keda_policy["Statement"][0]["Action"][0] == "aps:QueryMetrics"
    assert plan.of_type("kubernetes:core/v1:ConfigMap") and "addons-gpu-dashboard" not in names(
        plan, "kubernetes:core/v1:ConfigMap"
    )


def test_metrics_none_keeps_dcgm_exporter_without_service_monitor() -> None:
    plan = render(spec_of({"observability": {"metrics": "none"}}))
    rel = releases(plan)
    assert "kube-prometheus-stack" not in rel
    assert rel["dcgm-exporter"]["values"]["serviceMonitor"]["enabled"] is False
    assert plan.of_type("aws:amp/workspace:Workspace") == []
    assert plan.of_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule") == []


def test_container_insights_addon_with_pod_identity() -> None:
    plan = render(spec_of({"observability": {"enableContainerInsights": True}}))
    addon = plan.find("aws:eks/addon:Addon", "addons-container-insights")
    assert addon.inputs["addonName"] == "amazon-cloudwatch-observability"
    assert addon.inputs["clusterName"] == "gpucloud-test"
    assert addon.inputs["podIdentityAssociations"][0]["serviceAccount"] == "cloudwatch-agent"
    attach = plan.find("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "addons-container-insights-managed-0")
    assert attach.inputs["policyArn"] == "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"
    trust = json.loads(plan.find("aws:iam/role:Role", "addons-container-insights-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}


def test_fluent_bit_ships_to_an_encrypted_log_group_via_pod_identity() -> None:
    plan = render(spec_of({"observability": {"fluentBit": {"retentionDays": 90}}}))
    group = plan.find("aws:cloudwatch/logGroup:LogGroup", "addons-container-logs")
    assert (group.inputs["name"], group.inputs["retentionInDays"], group.inputs["kmsKeyId"]) == (
        "/gpucloud/addons/containers",
        90,
        KMS,
    )
    assoc = plan.find("aws:eks/podIdentityAssociation:PodIdentityAssociation", "addons-fluent-bit-pod-identity")
    assert (assoc.inputs["namespace"], assoc.inputs["serviceAccount"]) == ("logging", "aws-for-fluent-bit")
    values = releases(plan)["aws-for-fluent-bit"]["values"]
    assert values["cloudWatchLogs"] == {
        "enabled": True,
        "region": "us-east-1",
        "logGroupName": "/gpucloud/addons/containers",
        "autoCreateGroup": False,
    }
    assert values["tolerations"] == [{"operator": "Exists"}]


def test_fluent_bit_off() -> None:
    plan = render(spec_of({"observability": {"fluentBit": {"enabled": False}}}))
    assert "aws-for-fluent-bit" not in releases(plan)
    assert plan.of_type("aws:cloudwatch/logGroup:LogGroup") == []


# -- autoscaling -----------------------------------------------------------------------------------------------


def test_cluster_autoscaler_iam_is_scoped_to_the_cluster_tag_and_prefers_reserved_then_on_demand() -> None:
    plan = render(spec_of())
    policy = json.loads(plan.find("aws:iam/rolePolicy:RolePolicy", "addons-cluster-autoscaler-policy").inputs["policy"])
    scale = policy["Statement"][0]
    assert scale["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert scale["Condition"] == {
        "StringEquals": {
            "aws:ResourceTag/k8s.io/cluster-autoscaler/gpucloud-test": "owned",
            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
        }
    }
    cm = plan.find("kubernetes:core/v1:ConfigMap", "addons-ca-priorities")
    assert cm.inputs["metadata"] == {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"}
    # Reserved (paid for anyway) > on-demand group (its max is the pool's on-demand share) > spot > the rest.
    assert yaml.safe_load(cm.inputs["data"]["priorities"]) == {
        40: [".*-reserved.*|.*-capacity-block.*"],
        30: [".*-on-demand.*"],
        20: [".*-spot.*"],
        10: [".*"],
    }
    values = releases(plan)["cluster-autoscaler"]["values"]
    assert values["autoDiscovery"] == {"clusterName": "gpucloud-test"}
    assert values["extraArgs"]["expander"] == "priority"
    assert values["rbac"]["serviceAccount"]["name"] == "cluster-autoscaler"


@pytest.mark.parametrize(
    ("addons", "backend"), [(None, "karpenter"), ({"autoscaling": {"autoscaler": "none"}}, "managed")]
)
def test_no_cluster_autoscaler_with_karpenter_pools_or_when_off(addons: dict[str, Any] | None, backend: str) -> None:
    plan = render(spec_of(addons, backend=backend))
    assert "cluster-autoscaler" not in releases(plan)
    assert "addons-ca-priorities" not in names(plan, "kubernetes:core/v1:ConfigMap")


def test_metrics_server_runs_two_replicas_under_a_budget_on_system_nodes() -> None:
    values = releases(render(spec_of()))["metrics-server"]
    assert values["namespace"] == "kube-system"
    assert values["chart"] == "metrics-server"
    assert values["version"] == "3.13.1"
    # The image lock pins the chart's image by digest (gpucloud/charts/images.json: minikube v1.38.1's pin).
    assert values["values"] == {
        "replicas": 2,
        "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
        "image": {"tag": "v0.8.1@sha256:b2d2efaf5ac3b366ed0f839d2412a2c4279d4fc2a2a733f12c52133faed36c41"},
    }


def test_metrics_server_single_replica_has_no_budget_and_can_be_off() -> None:
    one = releases(render(spec_of({"autoscaling": {"metricsServer": {"replicas": 1}}})))["metrics-server"]
    assert one["values"] == {
        "replicas": 1,
        "image": {"tag": "v0.8.1@sha256:b2d2efaf5ac3b366ed0f839d2412a2c4279d4fc2a2a733f12c52133faed36c41"},
    }
    assert "metrics-server" not in releases(render(spec_of({"autoscaling": {"metricsServer": {"enabled": False}}})))
    with pytest.raises(SpecError, match=r"addons.autoscaling.metricsServer.version"):
        spec_of({"autoscaling": {"metricsServer": {"version": "3.12.0"}}})


def test_keda_off_and_mpi_operator_on_from_the_vendored_manifest() -> None:
    plan = render(spec_of({"autoscaling": {"keda": {"enabled": False}}, "mpiOperator": {"enabled": True}}))
    assert "keda" not in releases(plan)
    objects = {(r.type, r.inputs["metadata"]["name"]) for r in plan if "mpi-operator" in r.name}
    assert objects == {
        ("kubernetes:core/v1:Namespace", "mpi-operator"),
        ("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "mpijobs.kubeflow.org"),
        ("kubernetes:core/v1:ServiceAccount", "mpi-operator"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kubeflow-mpijobs-admin"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kubeflow-mpijobs-edit"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kubeflow-mpijobs-view"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "mpi-operator"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "mpi-operator"),
        ("kubernetes:apps/v1:Deployment", "mpi-operator"),
    }
    crd = plan.find(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "addons-mpi-operator-customresourcedefinition-mpijobs.kubeflow.org",
    )
    # v2beta1 is the API the NCCL test's MPIJob uses by default.
    assert [v["name"] for v in crd.inputs["spec"]["versions"]] == ["v2beta1"]
    binding = plan.find(
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "addons-mpi-operator-clusterrolebinding-mpi-operator",
    )
    assert binding.inputs["roleRef"]["name"] == "mpi-operator"
    deployment = plan.find("kubernetes:apps/v1:Deployment", "addons-mpi-operator-deployment-mpi-operator")
    assert crd.urn in deployment.dependencies
    assert deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"] == "mpioperator/mpi-operator:0.8.0"


# -- spec rules ----------------------------------------------------------------------------------------------


def _problems(addons: dict[str, Any], **kwargs: Any) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as err:
        spec_of(addons, **kwargs)
    return [(i.path, i.message) for i in err.value.issues]


def test_spec_rejects_mig_without_operator_and_missing_nccl_image() -> None:
    problems = _problems({"gpu": {"mig": {"pools": ["train-h100"]}}, "acceptance": {"enableNcclTest": True}})
    assert [p for p, _ in problems] == [
        "gpucloud:platform.addons.gpu.mig",
        "gpucloud:platform.addons.acceptance.ncclTestImage",
    ]
    assert "gpu.use: gpu-operator" in problems[0][1]


def test_spec_rejects_mig_on_gpus_without_mig_and_unknown_pools() -> None:
    problems = _problems({"gpu": {"use": "gpu-operator", "mig": {"pools": ["infer-l40s", "nope"]}}})
    assert [p for p, _ in problems] == [
        "gpucloud:platform.addons.gpu.mig.pools",
        "gpucloud:platform.addons.gpu.mig.pools",
    ]
    assert "['nope'] are not node pools" in problems[0][1]
    assert "g6e.12xlarge" in problems[1][1]


def test_spec_rejects_karpenter_autoscaler_for_managed_pools_and_v1_mpijob() -> None:
    problems = _problems(
        {
            "autoscaling": {"autoscaler": "karpenter"},
            "acceptance": {"enableNcclTest": True, "ncclTestImage": "nccl:1", "mpiApiVersion": "kubeflow.org/v1"},
        }
    )
    assert [p for p, _ in problems] == ["gpucloud:platform.addons.acceptance.mpiApiVersion"]
    assert "use kubeflow.org/v2beta1" in problems[0][1]
    problems = _problems({"autoscaling": {"autoscaler": "karpenter"}})
    assert [p for p, _ in problems] == ["gpucloud:platform.addons.autoscaling.autoscaler"]
    assert "['train-h100', 'infer-l40s']" in problems[0][1]


def test_spec_rejects_a_pool_in_both_sharing_modes() -> None:
    problems = _problems(
        {
            "gpu": {
                "use": "gpu-operator",
                "mig": {"pools": ["train-h100"]},
                "timeSlicing": {"replicas": 2, "pools": ["train-h100"]},
            }
        }
    )
    assert [p for p, _ in problems] == ["gpucloud:platform.addons.gpu.timeSlicing.pools"]


def test_dcgm_exporter_no_longer_needs_feature_discovery() -> None:
    # The exporter selects GPU pools by their own label, so GFD may be off.
    spec = spec_of({"gpu": {"enableGpuFeatureDiscovery": False}})
    values = releases(render(spec))["nvidia-device-plugin"]["values"]
    assert (values["gfd"], values["nfd"]["enabled"]) == ({"enabled": False}, True)


@pytest.mark.parametrize(
    ("addons", "path", "needle"),
    [
        ({"autoscaling": {"gpuUtilizationTargetPercent": 70}}, "autoscaling.gpuUtilizationTargetPercent", "team"),
        ({"trainingOperator": {"enabled": True}}, "trainingOperator", "mpiOperator.enabled"),
        (
            {"acceptance": {"enableNcclTest": True, "ncclTestImage": "n:1"}, "mpiOperator": {"enabled": False}},
            "mpiOperator.enabled",
            "MPIJob",
        ),
        (
            {
                "observability": {
                    "alerts": {"emails": ["a@example.com"], "snsTopicArn": "arn:aws:sns:us-east-1:123456789012:t"}
                }
            },
            "observability.alerts.emails",
            "snsTopicArn",
        ),
    ],
)
def test_spec_removed_and_contradictory_keys_name_the_field_and_the_fix(
    addons: dict[str, Any], path: str, needle: str
) -> None:
    problems = _problems(addons)
    assert [p for p, _ in problems] == [f"gpucloud:platform.addons.{path}"]
    assert needle in problems[0][1]


def test_training_operator_off_is_still_accepted() -> None:
    assert not spec_of({"trainingOperator": {"enabled": False}}).addons.mpi_operator_enabled


def test_resolved_autoscaler() -> None:
    assert spec_of().addons.resolved_autoscaler(spec_of().node_pools) == "cluster-autoscaler"
    karpenter = spec_of(backend="karpenter")
    assert karpenter.addons.resolved_autoscaler(karpenter.node_pools) == "karpenter"


def test_existing_stacks_still_validate_with_default_addons() -> None:
    for env in ("dev", "staging", "prod"):
        with open(f"stacks/Pulumi.{env}.yaml", encoding="utf-8") as fh:
            data = yaml.safe_load(fh)["config"]["gpucloud:platform"]
        parse_platform(copy.deepcopy(data))


# -- platform wiring -----------------------------------------------------------------------------------------


def test_platform_builds_addons_and_switched_on_acceptance_jobs() -> None:
    spec = spec_of(
        {"acceptance": {"enableNcclTest": True, "ncclTestImage": "registry/nccl-tests:2.27", "enableDcgmDiag": True}}
    )

    def program() -> None:
        platform = Platform(spec=spec, cluster=cluster_handle())
        _build_addons(spec, platform)
        assert set(platform.components) == {"addons", "nccl-train-h100", "dcgm-train-h100", "dcgm-infer-l40s"}
        assert platform.exports["nodeAutoscaler"] == "cluster-autoscaler"

    plan = run_callable(program, preview=False, region="us-east-1")
    assert names(plan, "gpucloud:workloads:NcclTest") == {"gpucloud-test-train-h100-nccl"}
    assert names(plan, "gpucloud:workloads:DcgmDiag") == {
        "gpucloud-test-train-h100-dcgm-diag",
        "gpucloud-test-infer-l40s-dcgm-diag",
    }
    mpi = plan.find("kubernetes:kubeflow.org/v2beta1:MPIJob", "gpucloud-test-train-h100-nccl-mpijob")
    assert mpi.inputs["metadata"]["namespace"] == "gpu-acceptance"
    diag = plan.find("kubernetes:batch/v1:Job", "gpucloud-test-train-h100-dcgm-diag-job")
    assert diag.inputs["spec"]["completions"] == 2


def test_platform_without_acceptance_jobs() -> None:
    spec = spec_of()

    def program() -> None:
        platform = Platform(spec=spec, cluster=cluster_handle())
        _build_addons(spec, platform)
        assert set(platform.components) == {"addons"}

    run_callable(program, preview=False, region="us-east-1")
    # The whole platform always has a cluster, so the add-ons come with it: exactly one GpuAddons.
    plan = run_callable(lambda: build(spec), preview=False, region="us-east-1")
    assert [r.name for r in plan.of_type("gpucloud:addons:GpuAddons")] == ["gpucloud-test-addons"]


def test_prod_stack_gets_addons_observability_autoscaling_and_acceptance_jobs() -> None:
    with open("stacks/Pulumi.prod.yaml", encoding="utf-8") as fh:
        spec = parse_platform(yaml.safe_load(fh)["config"]["gpucloud:platform"])

    def program() -> None:
        _build_addons(spec, Platform(spec=spec, cluster=cluster_handle()))

    plan = run_callable(program, preview=False, region="us-east-1")
    assert {r.name.removeprefix("gpucloud-prod-addons-") for r in plan.of_type(RELEASE)} == {
        "gpu-operator",
        "aws-efa-k8s-device-plugin",
        "kube-prometheus-stack",
        "aws-for-fluent-bit",
        "cluster-autoscaler",
        "keda",
        "metrics-server",
        "opencost",
    }
    assert names(plan, "aws:eks/addon:Addon") == {
        "gpucloud-prod-addons-container-insights",
        "gpucloud-prod-addons-ebs-csi-driver",
    }
    assert names(plan, "kubernetes:monitoring.coreos.com/v1:PrometheusRule") == {"gpucloud-prod-addons-gpu-alerts"}
    assert names(plan, "kubernetes:kubeflow.org/v2beta1:MPIJob") == {
        "gpucloud-prod-train-h100-nccl-mpijob",
        "gpucloud-prod-train-h200-nccl-mpijob",
    }
    crd = plan.find(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "gpucloud-prod-addons-mpi-operator-customresourcedefinition-mpijobs.kubeflow.org",
    )
    nccl = plan.find("gpucloud:workloads:NcclTest", "gpucloud-prod-train-h100-nccl")
    assert crd.urn in nccl.dependencies
    subs = {r.inputs["endpoint"] for r in plan.of_type("aws:sns/topicSubscription:TopicSubscription")}
    assert subs == {"ml-platform-alerts@example.com"}
    assert len(plan.of_type("gpucloud:workloads:DcgmDiag")) == 3
    efa = plan.find(RELEASE, "gpucloud-prod-addons-aws-efa-k8s-device-plugin").inputs["values"]
    assert efa["supportedInstanceLabels"]["values"] == ["p5.48xlarge", "p5en.48xlarge"]
