"""GpuAddons' planned Helm values rendered by real Helm against the vendored charts at their pinned versions.

Each test plans the component, takes the values recorded on the Release and renders the chart; assertions are on
the rendered objects (what the API server would get), never on the values dict the component wrote.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_addons import RELEASE, cluster_handle, platform_data

from gpucloud.charts.helm import HelmError, find_helm, helm_template
from gpucloud.components.addons import GpuAddons, GpuAddonsConfig
from gpucloud.plan import Plan, run_callable
from gpucloud.spec import PlatformSpec, parse_platform

CHARTS = Path(__file__).resolve().parents[2] / "vendor" / "upstream" / "charts"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
NEURON_TAINT = {"key": "aws.amazon.com/neuron", "value": "true", "effect": "NoSchedule"}

pytestmark = pytest.mark.skipif(find_helm() is None, reason="no helm binary (run `make`)")


def _plan(spec: PlatformSpec) -> Plan:
    def program() -> None:
        GpuAddons(
            "addons",
            GpuAddonsConfig(
                region=spec.region,
                tags=spec.all_tags,
                addons=spec.addons,
                pools=spec.node_pools,
                alert_emails=["oncall@example.com"],
            ),
            cluster_handle(),
        )

    return run_callable(program, preview=False, region="us-east-1")


def _with_trn_pool(addons: dict[str, Any] | None = None) -> PlatformSpec:
    data = platform_data(addons)
    data["nodePools"].append(
        {
            "name": "train-trn1",
            "workload": "training",
            "instanceTypes": ["trn1.32xlarge"],
            "minSize": 0,
            "desiredSize": 0,
            "maxSize": 2,
            "availabilityZones": ["us-east-1a"],
            "efa": {"enabled": True},
        }
    )
    return parse_platform(data)


@pytest.fixture(scope="module")
def device_plugin_plan() -> Plan:
    return _plan(_with_trn_pool())


@pytest.fixture(scope="module")
def operator_plan() -> Plan:
    return _plan(parse_platform(platform_data({"gpu": {"use": "gpu-operator"}})))


def chart_dir(release: dict[str, Any]) -> Path:
    # The chart input may be a name or an OCI reference; the vendored directory is <chart>-<version>.
    return CHARTS / f"{release['chart'].rstrip('/').rsplit('/', 1)[-1]}-{release['version']}"


@functools.cache
def _render_cached(path: str, release: str, namespace: str, values_json: str) -> list[dict[str, Any]]:
    return helm_template(path, release=release, namespace=namespace, values=json.loads(values_json))


def missing_subcharts(directory: Path) -> list[str]:
    dependencies = yaml.safe_load((directory / "Chart.yaml").read_text()).get("dependencies") or []
    return [d["name"] for d in dependencies if not (directory / "charts" / d["name"]).is_dir()]


def rendered(plan: Plan, role: str, values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The objects `helm install` would create for the planned release `role` (optionally with other values)."""
    inputs = plan.find(RELEASE, f"addons-{role}").inputs
    directory = chart_dir(inputs)
    missing = missing_subcharts(directory)
    if missing:
        pytest.skip(f"{directory.name}: sub-charts {missing} are not vendored on this branch")
    chosen = inputs["values"] if values is None else values
    return _render_cached(str(directory), inputs["name"], inputs["namespace"], json.dumps(chosen, sort_keys=True))


def one(objects: list[dict[str, Any]], kind: str, name_suffix: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
    assert len(found) == 1, [(o["kind"], o["metadata"]["name"]) for o in objects]
    return found[0]


def tolerates(tolerations: list[dict[str, Any]] | None, taint: dict[str, str]) -> bool:
    """Kubernetes toleration matching (core/v1 Toleration semantics)."""
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint["value"]:
            return True
    return False


def schedules_on(pod_spec: dict[str, Any], labels: dict[str, str], taints: list[dict[str, str]]) -> bool:
    """Whether a pod spec fits a node with these labels and taints (nodeSelector, required node affinity, taints)."""
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    if not all(tolerates(pod_spec.get("tolerations"), taint) for taint in taints):
        return False
    required = (
        (pod_spec.get("affinity") or {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if not required:
        return True

    def term_matches(term: dict[str, Any]) -> bool:
        for expr in term.get("matchExpressions", []):
            op, value = expr["operator"], labels.get(expr["key"])
            if op == "In" and value not in expr["values"]:
                return False
            if op == "NotIn" and value in expr["values"]:
                return False
            if op == "Exists" and value is None:
                return False
            if op == "DoesNotExist" and value is not None:
                return False
        return True

    return any(term_matches(t) for t in required["nodeSelectorTerms"])


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]


# Nodes as the pools register them (gpucloud.io/pool from the pool builder, instance type from the kubelet), and
# as NFD labels them once its worker runs there.
H100_NODE = {"gpucloud.io/pool": "train-h100", "node.kubernetes.io/instance-type": "p5.48xlarge"}
L40S_NODE = {"gpucloud.io/pool": "infer-l40s", "node.kubernetes.io/instance-type": "g6e.12xlarge"}
TRN1_NODE = {"gpucloud.io/pool": "train-trn1", "node.kubernetes.io/instance-type": "trn1.32xlarge"}
NFD_NVIDIA = {"feature.node.kubernetes.io/pci-10de.present": "true"}
NFD_EFA = {"vpc.amazonaws.com/efa.present": "true"}


# -- NFD under the device plugin's `nfd` alias, and under gpu-operator's un-aliased sub-chart ------------------


def _assert_nfd_configured(objects: list[dict[str, Any]]) -> None:
    worker = one(objects, "DaemonSet", "node-feature-discovery-worker")
    assert tolerates(pod_spec(worker).get("tolerations"), GPU_TAINT)
    assert tolerates(pod_spec(worker).get("tolerations"), NEURON_TAINT)
    worker_conf = yaml.safe_load(
        one(objects, "ConfigMap", "node-feature-discovery-worker-conf")["data"]["nfd-worker.conf"]
    )
    efa_rule = worker_conf["sources"]["custom"][0]
    assert efa_rule["labels"] == {"vpc.amazonaws.com/efa.present": "true"}
    assert efa_rule["matchFeatures"][0]["matchExpressions"]["vendor"] == {"op": "In", "value": ["1d0f"]}
    # The parent chart's PCI settings survive the merge: they make NFD emit pci-10de.present.
    assert worker_conf["sources"]["pci"]["deviceLabelFields"] == ["vendor"]
    master_conf = yaml.safe_load(
        one(objects, "ConfigMap", "node-feature-discovery-master-conf")["data"]["nfd-master.conf"]
    )
    assert "vpc.amazonaws.com" in master_conf["extraLabelNs"]


def test_device_plugin_nfd_gets_the_toleration_efa_rule_and_label_namespace(device_plugin_plan: Plan) -> None:
    _assert_nfd_configured(rendered(device_plugin_plan, "nvidia-device-plugin"))


def test_values_under_the_sub_chart_name_are_dropped_by_the_alias(device_plugin_plan: Plan) -> None:
    # The defect put back: NFD values under `node-feature-discovery` instead of the alias.
    values = copy.deepcopy(device_plugin_plan.find(RELEASE, "addons-nvidia-device-plugin").inputs["values"])
    nfd = values.pop("nfd")
    values["nfd"] = {"enabled": nfd.pop("enabled")}
    values["node-feature-discovery"] = nfd
    worker = one(rendered(device_plugin_plan, "nvidia-device-plugin", values), "DaemonSet", "feature-discovery-worker")
    # The chart's default toleration is nvidia.com/gpu=present, which does not match the pools' value "true".
    assert not tolerates(pod_spec(worker).get("tolerations"), GPU_TAINT)


def test_gpu_operator_nfd_gets_the_same_configuration(operator_plan: Plan) -> None:
    _assert_nfd_configured(rendered(operator_plan, "gpu-operator"))


def test_device_plugin_and_gfd_schedule_on_gpu_nodes_labelled_by_nfd(device_plugin_plan: Plan) -> None:
    objects = rendered(device_plugin_plan, "nvidia-device-plugin")
    for suffix in ("nvidia-device-plugin", "gpu-feature-discovery"):
        spec = pod_spec(one(objects, "DaemonSet", suffix))
        assert schedules_on(spec, {**H100_NODE, **NFD_NVIDIA}, [GPU_TAINT]), suffix
        assert not schedules_on(spec, {**TRN1_NODE, **NFD_EFA}, [NEURON_TAINT]), suffix


# -- dcgm-exporter ---------------------------------------------------------------------------------------------


def test_dcgm_exporter_schedules_on_every_gpu_pool_without_operator_labels(device_plugin_plan: Plan) -> None:
    spec = pod_spec(one(rendered(device_plugin_plan, "dcgm-exporter"), "DaemonSet", "dcgm-exporter"))
    # No nvidia.com/gpu.present here: only the GPU Operator sets it.
    assert schedules_on(spec, H100_NODE, [GPU_TAINT])
    assert schedules_on(spec, L40S_NODE, [GPU_TAINT])
    assert schedules_on(spec, {"node.kubernetes.io/instance-type": "g5.12xlarge", **NFD_NVIDIA}, [GPU_TAINT])
    assert not schedules_on(spec, TRN1_NODE, [NEURON_TAINT])
    assert not schedules_on(spec, {"gpucloud.io/pool": "system"}, [])


def test_dcgm_exporter_on_the_operator_label_misses_device_plugin_nodes(device_plugin_plan: Plan) -> None:
    # The defect put back: nodeSelector nvidia.com/gpu.present=true, which nothing sets without the GPU Operator.
    values = copy.deepcopy(device_plugin_plan.find(RELEASE, "addons-dcgm-exporter").inputs["values"])
    values.pop("affinity")
    values["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
    spec = pod_spec(one(rendered(device_plugin_plan, "dcgm-exporter", values), "DaemonSet", "dcgm-exporter"))
    assert not schedules_on(spec, {**H100_NODE, **NFD_NVIDIA}, [GPU_TAINT])


# -- EFA ------------------------------------------------------------------------------------------------------


def test_efa_plugin_runs_on_efa_pools_only(device_plugin_plan: Plan) -> None:
    spec = pod_spec(
        one(rendered(device_plugin_plan, "aws-efa-k8s-device-plugin"), "DaemonSet", "efa-k8s-device-plugin")
    )
    assert schedules_on(spec, {**H100_NODE, **NFD_EFA}, [GPU_TAINT])
    assert schedules_on(spec, {**TRN1_NODE, **NFD_EFA}, [NEURON_TAINT])
    assert not schedules_on(spec, {**L40S_NODE, **NFD_EFA}, [GPU_TAINT])
    assert not schedules_on(spec, H100_NODE, [GPU_TAINT])  # NFD found no EFA device on it


def test_efa_affinity_value_is_ignored_by_the_chart(device_plugin_plan: Plan) -> None:
    # The defect put back: instance types under `affinity`, which v0.5.13 never reads; its built-in list of every
    # EFA-capable type (g6e.12xlarge included) stays in force.
    values = copy.deepcopy(device_plugin_plan.find(RELEASE, "addons-aws-efa-k8s-device-plugin").inputs["values"])
    types = values.pop("supportedInstanceLabels")["values"]
    values["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}
                        ]
                    }
                ]
            }
        }
    }
    ds = one(rendered(device_plugin_plan, "aws-efa-k8s-device-plugin", values), "DaemonSet", "efa-k8s-device-plugin")
    assert schedules_on(pod_spec(ds), {**L40S_NODE, **NFD_EFA}, [GPU_TAINT])


# -- Neuron ---------------------------------------------------------------------------------------------------


def test_neuron_device_plugin_runs_on_trainium_pools(device_plugin_plan: Plan) -> None:
    release = device_plugin_plan.find(RELEASE, "addons-neuron-device-plugin").inputs
    assert (release["chart"], release["version"], release["namespace"]) == (
        "oci://public.ecr.aws/neuron/neuron-helm-chart",  # the lock pins it at its OCI URL
        "1.0.0",
        "kube-system",
    )
    objects = rendered(device_plugin_plan, "neuron-device-plugin")
    daemonsets = [o["metadata"]["name"] for o in objects if o["kind"] == "DaemonSet"]
    # The problem detector would deploy into a namespace nothing creates.
    assert daemonsets == ["neuron-device-plugin"]
    assert {o["metadata"].get("namespace") for o in objects} <= {"kube-system", None}
    spec = pod_spec(objects[[o["kind"] for o in objects].index("DaemonSet")])
    assert schedules_on(spec, TRN1_NODE, [NEURON_TAINT])
    assert not schedules_on(spec, H100_NODE, [GPU_TAINT])


def test_no_neuron_plugin_without_neuron_pools(operator_plan: Plan) -> None:
    assert "addons-neuron-device-plugin" not in {r.name for r in operator_plan.of_type(RELEASE)}


# -- kube-prometheus-stack: storage, Alertmanager receiver, Grafana admin -----------------------------------------


def test_prometheus_keeps_its_tsdb_on_an_encrypted_gp3_claim(device_plugin_plan: Plan) -> None:
    prometheus = one(rendered(device_plugin_plan, "kube-prometheus-stack"), "Prometheus", "prometheus")
    claim = prometheus["spec"]["storage"]["volumeClaimTemplate"]["spec"]
    storage_class = device_plugin_plan.find("kubernetes:storage.k8s.io/v1:StorageClass", "addons-gp3").inputs
    assert claim["storageClassName"] == storage_class["metadata"]["name"] == "gpucloud-gp3"
    assert claim["resources"]["requests"]["storage"] == "100Gi"
    assert (storage_class["provisioner"], storage_class["parameters"]["type"]) == ("ebs.csi.aws.com", "gp3")
    addon = device_plugin_plan.find("aws:eks/addon:Addon", "addons-ebs-csi-driver").inputs
    assert addon["addonName"] == "aws-ebs-csi-driver"
    assert addon["podIdentityAssociations"][0]["serviceAccount"] == "ebs-csi-controller-sa"


def test_alertmanager_routes_to_sns_as_its_pod_identity(device_plugin_plan: Plan) -> None:
    objects = rendered(device_plugin_plan, "kube-prometheus-stack")
    secret = one(objects, "Secret", "-alertmanager")
    config = yaml.safe_load(base64.b64decode(secret["data"]["alertmanager.yaml"]))
    assert config["route"]["receiver"] == "sns"
    receivers = {r["name"]: r for r in config["receivers"]}
    assert receivers["sns"]["sns_configs"][0]["sigv4"] == {"region": "us-east-1"}
    alertmanager = one(objects, "Alertmanager", "alertmanager")
    association = device_plugin_plan.find(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "addons-alertmanager-pod-identity"
    ).inputs
    assert alertmanager["spec"]["serviceAccountName"] == association["serviceAccount"]
    assert association["namespace"] == alertmanager["metadata"]["namespace"] == "monitoring"
    subscriptions = device_plugin_plan.of_type("aws:sns/topicSubscription:TopicSubscription")
    assert [s.inputs["endpoint"] for s in subscriptions] == ["oncall@example.com"]


def test_grafana_reads_its_admin_password_from_the_generated_secret(device_plugin_plan: Plan) -> None:
    objects = rendered(device_plugin_plan, "kube-prometheus-stack")
    grafana = one(objects, "Deployment", "grafana")
    env = {e["name"]: e for c in pod_spec(grafana)["containers"] for e in c.get("env", [])}
    ref = env["GF_SECURITY_ADMIN_PASSWORD"]["valueFrom"]["secretKeyRef"]
    secret = device_plugin_plan.find("kubernetes:core/v1:Secret", "addons-grafana-admin")
    assert (ref["name"], ref["key"]) == (secret.inputs["metadata"]["name"], "admin-password")
    assert "stringData" in secret.inputs
    for obj in objects:
        if obj["kind"] == "Secret":
            assert all(b"prom-operator" not in base64.b64decode(v) for v in (obj.get("data") or {}).values())


def test_every_planned_release_renders(device_plugin_plan: Plan, operator_plan: Plan) -> None:
    checked = []
    for plan in (device_plugin_plan, operator_plan):
        for release in plan.of_type(RELEASE):
            if missing_subcharts(chart_dir(release.inputs)):
                continue
            role = release.name.removeprefix("addons-")
            try:
                objects = rendered(plan, role)
            except HelmError as exc:
                pytest.fail(f"{role}: {exc}")
            assert objects, role
            checked.append(role)
    assert {"nvidia-device-plugin", "gpu-operator", "dcgm-exporter", "neuron-device-plugin"} <= set(checked)
