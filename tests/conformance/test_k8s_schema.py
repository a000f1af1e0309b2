"""k8s.schema and k8s.crd: plan and rendered Kubernetes objects against the Kubernetes OpenAPI and the plan's CRDs.

CRDs come from the vendored upstream bundle (the files the charts' crds/ folders and the kustomize-only projects
ship), read here directly so these tests do not depend on the Helm check.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

# Checks run in registration order: importing k8s_schema first would register it ahead of the Helm check that
# feeds it, for every test of this session. The built-in list registers them all in run order.
import gpucloud.conformance.builtin  # noqa: F401
from gpucloud.conformance import ConformanceContext, DerivedObject, Finding, k8s_schema, run_conformance
from gpucloud.conformance.k8s_schema import (
    KV_VERSION,
    check_crd,
    check_schema,
    collect_objects,
    openapi_schemas,
    structural_to_jsonschema,
)
from gpucloud.conformance.k8s_schema import schema as k8s_schema_check
from gpucloud.conformance.k8s_schema.crd import _Loader
from gpucloud.plan import SECRET, UNKNOWN, Plan, ResourceRecord, run_callable, run_program

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "vendor" / "upstream"
SOURCE_134 = f"Kubernetes 1.34 OpenAPI (kubernetes-validate {KV_VERSION})"
CLUSTER = ResourceRecord(
    urn="urn:pulumi:t::p::aws:eks/cluster:Cluster::c",
    type="aws:eks/cluster:Cluster",
    name="c",
    parent=None,
    custom=True,
    dependencies=[],
    inputs={"version": "1.34"},
)


def _record(manifest: dict[str, Any], name: str = "r", token: str | None = None) -> ResourceRecord:
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    module = f"core/{api_version}" if "/" not in api_version else api_version
    type_ = token or f"kubernetes:{module}:{kind}"
    return ResourceRecord(
        urn=f"urn:pulumi:t::p::{type_}::{name}",
        type=type_,
        name=name,
        parent=None,
        custom=True,
        dependencies=[],
        inputs=copy.deepcopy(manifest),
    )


def _plan(*records: ResourceRecord, cluster: bool = True) -> Plan:
    return Plan(project="p", stack="t", resources=[*([CLUSTER] if cluster else []), *records])


def _crds(rel: str, source: str) -> list[DerivedObject]:
    docs = yaml.load_all((VENDOR / rel).read_text(), Loader=_Loader)
    return [
        DerivedObject(f"urn:pulumi:t::p::kubernetes:helm.sh/v3:Release::{source.split()[1]}", source, d)
        for d in docs
        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
    ]


def _findings(plan: Plan, derived: list[DerivedObject] | None = None) -> list[Finding]:
    ctx = ConformanceContext(plan=plan, derived=list(derived or []), kubernetes_version="1.34")
    return [*check_schema(ctx), *check_crd(ctx)]


def _deployment(**spec_overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
        },
    }
    spec.update(spec_overrides)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "x"}, "spec": spec}


# --- built-in kinds -----------------------------------------------------------------------------------------


def test_misspelled_field_is_reported_with_the_field_the_schema_has() -> None:
    manifest = _deployment()
    manifest["spec"]["replica"] = manifest["spec"].pop("replicas")
    [f] = _findings(_plan(_record(manifest, "web")))
    assert (f.check, f.severity, f.field) == ("k8s.schema", "error", "spec.replica")
    assert "unknown field 'replica' (did you mean 'replicas'?)" in f.message
    assert "replicas" in f.expected and "template" in f.expected
    assert f.source == SOURCE_134
    assert f.urn == "urn:pulumi:t::p::kubernetes:apps/v1:Deployment::web"
    assert f.object is None


def test_objects_found_valid_are_remembered_and_invalid_ones_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run skips validating an unchanged valid object; a changed or invalid one is validated anew."""
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path))
    bad = _deployment()
    bad["spec"]["replica"] = bad["spec"].pop("replicas")
    plan = _plan(_record(_deployment(), "web"), _record(bad, "bad"))
    first = _findings(plan)
    assert [(f.urn.rsplit("::", 1)[1], f.field) for f in first] == [("bad", "spec.replica")]
    [store] = (tmp_path / "verdicts").glob("k8s.schema-*.marshal")
    validated: list[str] = []
    real = k8s_schema.validate_object

    def spy(validator: Any, obj: Any, *args: Any) -> list[Finding]:
        validated.append(obj.urn.rsplit("::", 1)[1])
        return real(validator, obj, *args)

    # The schema check calls validate_object from its own module (k8s_schema/schema.py).
    monkeypatch.setattr(k8s_schema_check, "validate_object", spy)
    assert _findings(plan) == first
    assert validated == ["bad"]
    # The same object, one value changed: a new digest, so validated (and found wrong) again.
    changed = _deployment()
    changed["spec"]["replicas"] = "two"
    validated.clear()
    [f] = _findings(_plan(_record(changed, "web")))
    assert (validated, f.field) == (["web"], "spec.replicas")
    assert store.is_file()


def test_wrong_type_names_the_expected_type() -> None:
    [f] = _findings(_plan(_record(_deployment(replicas="two"))))
    assert f.field == "spec.replicas"
    assert f.message == 'Deployment web: "two" is string, not integer'
    assert f.expected == "type: integer"


def test_container_without_name_is_a_missing_required_field() -> None:
    manifest = _deployment()
    del manifest["spec"]["template"]["spec"]["containers"][0]["name"]
    [f] = _findings(_plan(_record(manifest)))
    assert f.field == "spec.template.spec.containers[0].name"
    assert f.message == "Deployment web: required field 'name' is missing"
    assert f.expected == "required: name"


def test_unknowns_and_secrets_at_preview_are_not_errors() -> None:
    # An integer, a whole map, a list item and an int-or-string that `pulumi up` fills in: nothing to judge yet.
    manifest = _deployment(replicas=UNKNOWN)
    pod = manifest["spec"]["template"]["spec"]
    pod["nodeSelector"] = UNKNOWN
    pod["containers"][0]["ports"][0]["containerPort"] = UNKNOWN
    pod["containers"][0]["env"] = [{"name": "TOKEN", "value": SECRET}, UNKNOWN]
    manifest["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": UNKNOWN}}
    assert _findings(_plan(_record(manifest))) == []
    # The same object with a real defect next to the unknowns still reports that defect alone.
    pod["containers"][0]["tty"] = "yes"
    [f] = _findings(_plan(_record(manifest)))
    assert f.field == "spec.template.spec.containers[0].tty"
    assert f.expected == "type: boolean"


def test_server_defaulted_required_field_may_be_left_out() -> None:
    # Job podFailurePolicy onPodConditions[].status is `required` in the OpenAPI document, whose own description
    # says "Defaults to True": the API server fills it in, so leaving it out is what the docs show.
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}},
        },
    }
    assert _findings(_plan(_record(job))) == []
    del job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"]
    [f] = _findings(_plan(_record(job)))
    assert f.field == "spec.podFailurePolicy.rules[0].onPodConditions[0].type"


def test_api_version_the_cluster_no_longer_serves() -> None:
    pdb = {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {}}
    [f] = _findings(_plan(_record(pdb)))
    assert (f.check, f.field) == ("k8s.schema", "apiVersion")
    assert f.message == "Kubernetes 1.34.0 serves no PodDisruptionBudget in policy/v1beta1"
    assert f.expected == "apiVersion one of: policy/v1"


def test_pulumi_kubernetes_resources_as_the_engine_records_them() -> None:
    """Real SDK registrations: typed Deployment (snake_case args) and a generic CustomResource."""
    # Imported here: a program's SDK imports go through the plan engine's lazy loader (see gpucloud.plan.lazy_sdk).
    import pulumi_kubernetes as k8s

    def program() -> None:
        k8s.apps.v1.Deployment(
            "web",
            metadata={"name": "web"},
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=2,
                selector={"match_labels": {"app": "web"}},
                template={
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "i", "image_pull_policy": "Always"}]},
                },
            ),
        )
        k8s.apiextensions.CustomResource(
            "job",
            api_version="kubeflow.org/v2beta1",
            kind="MPIJob",
            metadata={"name": "nccl", "namespace": "t"},
            spec={"slotsPerWorker": 8},
        )
        k8s.helm.v3.Release("rel", chart="x", version="1.0.0")

    plan = run_callable(program)
    objects = collect_objects(plan, [])
    assert [(o.api_version, o.kind, o.name) for o in objects] == [
        ("apps/v1", "Deployment", "web"),
        ("kubeflow.org/v2beta1", "MPIJob", "nccl"),
    ]
    assert _findings(plan.__class__(plan.project, plan.stack, [CLUSTER, *plan.resources])) == [
        Finding(
            check="k8s.crd",
            severity="warning",
            urn="urn:pulumi:test::gpucloud::kubernetes:kubeflow.org/v2beta1:MPIJob::job",
            field="apiVersion",
            message=(
                "undecided: MPIJob nccl: no CRD for kind MPIJob in group kubeflow.org among the plan's objects, and "
                "Helm releases were not rendered (rel): cannot tell whether one installs it"
            ),
            expected=(
                "a CustomResourceDefinition for MPIJob.kubeflow.org serving v2beta1, installed by the plan; the "
                "vendored upstream bundle has it: CRD mpijobs.kubeflow.org serving v1 from "
                "vendor/upstream/crds/training-operator-v1.8.1/kubeflow.org_mpijobs.yaml; CRD mpijobs.kubeflow.org "
                "serving v2beta1 from vendor/upstream/manifests/mpi-operator-v0.8.0/mpi-operator.yaml"
            ),
            source="the plan's CRDs (CustomResourceDefinition resources and the CRDs rendered charts install)",
            object=None,
        )
    ]


def test_rendered_object_is_reported_against_its_owner() -> None:
    owner = "urn:pulumi:t::p::kubernetes:helm.sh/v3:Release::dcgm"
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "dcgm-exporter", "namespace": "monitoring"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "e", "image": "i"}], "tolerations": {"key": "nvidia.com/gpu"}},
            },
        },
    }
    derived = [DerivedObject(owner, "chart dcgm-exporter@4.8.1", ds)]
    [f] = _findings(_plan(), derived)
    assert f.urn == owner
    assert f.object == "apps/v1/DaemonSet monitoring/dcgm-exporter"
    assert f.field == "spec.template.spec.tolerations"
    assert f.expected == "type: array"


def test_crd_objects_are_checked_for_their_own_shape() -> None:
    [crd] = _crds("crds/training-operator-v1.8.1/kubeflow.org_mpijobs.yaml", "kustomize training-operator@v1.8.1")
    assert _findings(_plan(), [crd]) == []
    broken = copy.deepcopy(crd.manifest)
    broken["spec"]["scopee"] = broken["spec"].pop("scope")
    found = _findings(_plan(), [DerivedObject(crd.owner, crd.source, broken)])
    assert sorted(f.field for f in found) == ["spec.scope", "spec.scopee"]


def test_malformed_objects_get_findings_not_tracebacks() -> None:
    owner = "urn:pulumi:t::p::kubernetes:helm.sh/v3:Release::odd"
    odd: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "cm", "data": {"a": 1}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": ["replicas"]},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "spec": ["x"]},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "spec": {"names": "x"}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": None}, "spec": None},
        {"kind": "ConfigMap"},
        {},
    ]
    found = _findings(_plan(), [DerivedObject(owner, "chart odd@1", m) for m in odd])
    assert {(f.object, f.field) for f in found if f.severity == "error"} >= {
        ("v1/ConfigMap", "metadata"),
        ("v1/ConfigMap", "data.a"),
        ("apps/v1/Deployment d", "spec"),
        ("/ConfigMap", "apiVersion"),
        ("/", "apiVersion"),
    }


# --- custom resources ---------------------------------------------------------------------------------------

KPS_RULES = "charts/kube-prometheus-stack-75.6.1/charts/crds/crds/crd-prometheusrules.yaml"


def _prometheus_rule(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "gpu-alerts", "namespace": "monitoring"},
        "spec": {"groups": [{"name": "gpu", "rules": [rule]}]},
    }


def test_prometheus_rule_against_the_kube_prometheus_stack_crd() -> None:
    crds = _crds(KPS_RULES, "chart kube-prometheus-stack@75.6.1")
    good = {"alert": "GpuIdle", "expr": "avg(DCGM_FI_DEV_GPU_UTIL) < 10", "for": "2h", "labels": {"s": "w"}}
    assert _findings(_plan(_record(_prometheus_rule(good), "alerts")), crds) == []
    bad = {**good, "severity": "warning", "for": "two hours"}
    found = _findings(_plan(_record(_prometheus_rule(bad), "alerts")), crds)
    assert sorted((f.check, f.field) for f in found) == [
        ("k8s.crd", "spec.groups[0].rules[0].for"),
        ("k8s.crd", "spec.groups[0].rules[0].severity"),
    ]
    by_field = {f.field: f for f in found}
    assert (
        by_field["spec.groups[0].rules[0].for"].expected
        == 'pattern: "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"'
    )
    unknown = by_field["spec.groups[0].rules[0].severity"]
    assert "unknown field 'severity'" in unknown.message
    assert unknown.source == "CRD prometheusrules.monitoring.coreos.com v1 from chart kube-prometheus-stack@75.6.1"


def test_go_regex_patterns_of_a_crd_apply() -> None:
    """prometheus-operator's `^(?i)(abort|warn)?$` is RE2 syntax Python rejects as written; it still applies."""
    crds = _crds(KPS_RULES, "chart kube-prometheus-stack@75.6.1")
    rule = _prometheus_rule({"record": "gpu:util", "expr": "avg(DCGM_FI_DEV_GPU_UTIL)"})
    rule["spec"]["groups"][0]["partial_response_strategy"] = "WARN"
    assert _findings(_plan(_record(rule, "alerts")), crds) == []
    rule["spec"]["groups"][0]["partial_response_strategy"] = "ignore"
    [f] = _findings(_plan(_record(rule, "alerts")), crds)
    assert (f.field, f.expected) == ("spec.groups[0].partial_response_strategy", 'pattern: "^(?i)(abort|warn)?$"')


def test_custom_resource_without_any_crd_is_an_error() -> None:
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}
    [f] = _findings(_plan(_record(cr, "widget")))
    assert (f.check, f.severity, f.field) == ("k8s.crd", "error", "apiVersion")
    assert f.message == (
        "Widget w: no CRD for kind Widget in group example.com is installed by this plan: the API server rejects "
        "the object"
    )


def _release(name: str) -> ResourceRecord:
    return ResourceRecord(
        urn=f"urn:pulumi:t::p::kubernetes:helm.sh/v3:Release::{name}",
        type="kubernetes:helm.sh/v3:Release",
        name=name,
        parent=None,
        custom=True,
        dependencies=[],
        inputs={"chart": name},
    )


def test_release_that_failed_to_render_installs_no_crd() -> None:
    """With the Helm check's renders in the context, a release that rendered nothing installs no CRD."""
    training, kps = _release("training-operator"), _release("kube-prometheus-stack")
    plan = _plan(training, kps, _record({**MPIJOB_V2, "apiVersion": "kubeflow.org/v1"}, "nccl"))
    derived = _crds(KPS_RULES, "chart kube-prometheus-stack@75.6.1")
    derived = [DerivedObject(kps.urn, d.source, d.manifest) for d in derived]
    facts = {"helm.releases": {training.urn: {}, kps.urn: {}}}
    ctx = ConformanceContext(plan=plan, derived=derived, kubernetes_version="1.34", facts=facts)
    [f] = list(check_crd(ctx))
    assert (f.severity, f.field) == ("error", "apiVersion")
    assert f.message.startswith("MPIJob nccl: no CRD for kind MPIJob in group kubeflow.org is installed by this plan")
    # Without the Helm check's renders, the same plan cannot tell: a warning naming the releases.
    [w] = list(check_crd(ConformanceContext(plan=plan, kubernetes_version="1.34")))
    assert w.severity == "warning"
    assert "Helm releases were not rendered (training-operator, kube-prometheus-stack)" in w.message


def test_eks_builtin_crds_need_no_install() -> None:
    eni = {"apiVersion": "crd.k8s.amazonaws.com/v1alpha1", "kind": "ENIConfig", "metadata": {"name": "us-east-1a"}}
    assert _findings(_plan(_record(eni, "eni"))) == []


def test_cluster_created_elsewhere_uses_the_vendored_crd() -> None:
    """A team stack deploys onto the platform's cluster: its CRDs are not in the plan, the vendored one stands in."""
    pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "team"},
        "spec": {"template": {"spec": {"nodeClassRef": {"group": "g", "kind": "k", "name": "n"}}}, "weight": 500},
    }
    found = _findings(_plan(_record(pool, "pool"), cluster=False))
    assert sorted((f.severity, f.field) for f in found) == [
        ("error", "spec.template.spec.requirements"),
        ("error", "spec.weight"),
        ("warning", "apiVersion"),
    ]
    warning = next(f for f in found if f.severity == "warning")
    assert "the cluster is created elsewhere" in warning.message
    assert "validated against the vendored CRD instead" in warning.message
    errors = {f.source for f in found if f.severity == "error"}
    assert errors == {
        "CRD nodepools.karpenter.sh v1 from vendor/upstream/charts/karpenter-1.12.1/crds/karpenter.sh_nodepools.yaml"
    }


MPIJOB_V2 = {
    "apiVersion": "kubeflow.org/v2beta1",
    "kind": "MPIJob",
    "metadata": {"name": "nccl", "namespace": "t"},
    "spec": {"slotsPerWorker": 8, "mpiReplicaSpecs": {}},
}


def test_mpijob_v2beta1_with_only_the_training_operator_crd() -> None:
    crds = _crds("crds/training-operator-v1.8.1/kubeflow.org_mpijobs.yaml", "kustomize training-operator@v1.8.1")
    [f] = _findings(_plan(_record(MPIJOB_V2, "nccl")), crds)
    assert (f.check, f.severity, f.field) == ("k8s.crd", "error", "apiVersion")
    assert f.message == (
        "MPIJob nccl: kubeflow.org/v2beta1 is not served by the installed mpijobs.kubeflow.org: the API server "
        "rejects the object"
    )
    assert f.expected == (
        "apiVersion one of: kubeflow.org/v1; CRD mpijobs.kubeflow.org serving v2beta1 from "
        "vendor/upstream/manifests/mpi-operator-v0.8.0/mpi-operator.yaml"
    )
    assert f.source == "CRD mpijobs.kubeflow.org serving v1 from kustomize training-operator@v1.8.1"


def test_two_crds_of_one_name_with_different_versions_clash() -> None:
    training = _crds("crds/training-operator-v1.8.1/kubeflow.org_mpijobs.yaml", "kustomize training-operator@v1.8.1")
    mpi = _crds("manifests/mpi-operator-v0.8.0/mpi-operator.yaml", "manifest mpi-operator@v0.8.0")
    found = [f for f in _findings(_plan(), training + mpi) if f.check == "k8s.crd"]
    [f] = found
    assert f.field == "spec.versions"
    assert f.object == "apiextensions.k8s.io/v1/CustomResourceDefinition mpijobs.kubeflow.org"
    assert "v1 by kustomize training-operator@v1.8.1, v2beta1 by manifest mpi-operator@v0.8.0" in f.message


def test_karpenter_nodepool_against_its_crd() -> None:
    crds = _crds("charts/karpenter-1.12.1/crds/karpenter.sh_nodepools.yaml", "chart karpenter@1.12.1")
    pool: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                    "expireAfter": "720h",
                }
            },
            # x-kubernetes-int-or-string quantities; `disruption` is left out, so the CRD's default applies.
            "limits": {"nvidia.com/gpu": 8, "cpu": "1000"},
        },
    }
    assert _findings(_plan(_record(pool, "pool")), crds) == []
    # A `disruption` object of one's own replaces that default, and its consolidateAfter has none of its own.
    pool["spec"]["disruption"] = {"budgets": [{"nodes": "10%"}]}
    pool["spec"]["template"]["spec"]["requirements"][0]["operator"] = "in"
    pool["spec"]["weight"] = 500
    found = _findings(_plan(_record(pool, "pool")), crds)
    assert sorted((f.field, f.expected) for f in found) == [
        ("spec.disruption.consolidateAfter", "required: consolidateAfter"),
        (
            "spec.template.spec.requirements[0].operator",
            'one of: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        ("spec.weight", "maximum: 100"),
    ]
    assert {f.source for f in found} == {"CRD nodepools.karpenter.sh v1 from chart karpenter@1.12.1"}


def test_structural_schema_conversion() -> None:
    schema = structural_to_jsonschema(
        {
            "type": "object",
            "required": ["mode", "size"],
            "properties": {
                "mode": {"type": "string", "default": "fast"},
                "size": {"x-kubernetes-int-or-string": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "note": {"type": "string", "nullable": True},
                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            },
        }
    )
    v = jsonschema.Draft202012Validator(schema)
    assert v.is_valid({"size": "10%", "extra": {"anything": [1]}, "note": None, "ratio": 0.5})
    assert v.is_valid({"size": 3})
    assert [e.validator for e in v.iter_errors({"size": 1.5})] == ["type"]
    assert [e.validator for e in v.iter_errors({"size": 1, "ratio": 0})] == ["exclusiveMinimum"]
    assert [e.validator for e in v.iter_errors({"size": 1, "sise": 2})] == ["additionalProperties"]
    assert [e.validator for e in v.iter_errors({})] == ["required"]


def _mutations(value: Any, budget: int = 400) -> list[Any]:
    """Copies of an object with one value swapped for another JSON type, or one unexpected key added."""
    paths: list[list[Any]] = []

    def walk(node: Any, path: list[Any]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, [*path, k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, [*path, i])

    walk(value, [])
    out: list[Any] = []
    for path in paths[1:]:
        for replacement in ("x", 1.5, 7, True, None, [], {}, [{"a": 1}]):
            copy_ = copy.deepcopy(value)
            parent = copy_
            for part in path[:-1]:
                parent = parent[part]
            parent[path[-1]] = replacement
            out.append(copy_)
        if len(out) >= budget:
            break
    for path in paths:
        copy_ = copy.deepcopy(value)
        node = copy_
        for part in path:
            node = node[part]
        if isinstance(node, dict):
            node["unexpectedField"] = 1
            out.append(copy_)
    return out


def test_fast_validity_agrees_with_jsonschema() -> None:
    """The fast path answers "valid" exactly where jsonschema finds no error, for valid and mutated objects."""
    schemas = openapi_schemas("1.34")
    docs = yaml.load_all((VENDOR / "manifests/mpi-operator-v0.8.0/mpi-operator.yaml").read_text(), Loader=_Loader)
    objects = [d for d in docs if isinstance(d, dict) and d["kind"] != "CustomResourceDefinition"]
    objects.append(_deployment())
    assert sorted({o["kind"] for o in objects}) == [
        "ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace", "ServiceAccount",
    ]  # fmt: skip
    checked = 0
    for obj in objects:
        validator = schemas.validator(obj["apiVersion"], obj["kind"])
        assert validator is not None and validator.fast is not None
        for manifest in [obj, *_mutations(obj, budget=80)]:
            assert validator.fast(manifest) == validator.slow.is_valid(manifest), manifest
            checked += 1
    # A CRD's schema, converted: karpenter's NodePool with its patterns, bounds, enums and int-or-string maps.
    [crd] = _crds("charts/karpenter-1.12.1/crds/karpenter.sh_nodepools.yaml", "chart karpenter@1.12.1")
    tree = crd.manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    cr_validator = schemas.custom_validator(structural_to_jsonschema(tree, root=True))
    assert cr_validator.fast is not None
    pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {"spec": {"nodeClassRef": {"group": "g", "kind": "k", "name": "n"}, "requirements": []}},
            "limits": {"nvidia.com/gpu": 8},
            "disruption": {"consolidateAfter": "5m", "budgets": [{"nodes": "10%"}]},
            "weight": 10,
        },
    }
    # The same schema converted node by node as the fast check reaches it (what k8s.crd uses) decides alike.
    lazy = schemas.structural_validator(tree)
    assert lazy.fast is not None
    for manifest in [pool, *_mutations(pool, budget=250)]:
        assert cr_validator.fast(manifest) == cr_validator.slow.is_valid(manifest), manifest
        assert lazy.fast(manifest) == cr_validator.slow.is_valid(manifest), manifest
        checked += 1
    assert lazy.slow.schema == structural_to_jsonschema(tree, root=True)
    assert checked > 500


# --- the shipped stacks -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_plan() -> Plan:
    return run_program(ROOT, "dev")


def test_dev_stack_objects_conform(dev_plan: Plan) -> None:
    result = run_conformance(dev_plan, only=["k8s.schema", "k8s.crd"])
    assert [f for f in result.findings if f.severity == "error"] == []
    kinds = sorted({o.kind for o in collect_objects(dev_plan, [])})
    assert kinds == ["ClusterQueue", "ConfigMap", "Namespace", "PersistentVolume", "PersistentVolumeClaim",
                     "PrometheusRule", "ResourceFlavor", "Secret", "StorageClass"]  # fmt: skip


def test_defect_put_back_into_the_dev_stack_is_reported(dev_plan: Plan) -> None:
    """A copy of the dev plan whose FSx PersistentVolume has accessModes as a string, as a typo would give."""
    plan = copy.deepcopy(dev_plan)
    pv = next(r for r in plan if r.type == "kubernetes:core/v1:PersistentVolume")
    pv.inputs["spec"]["accessModes"] = "ReadWriteMany"
    errors = [f for f in run_conformance(plan, only=["k8s.schema"]).findings if f.severity == "error"]
    assert [(f.urn, f.field, f.expected) for f in errors] == [(pv.urn, "spec.accessModes", "type: array")]
