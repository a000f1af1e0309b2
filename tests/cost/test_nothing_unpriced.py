"""Nothing provisioned is left out of the cost section in silence: every billable object of the shipped plans
(with the objects their charts render) ends in a priced item or an unpriced entry, and every resource type of the
foreign corpus (tests/fixtures/corpus/expected.json, the types its programs plan) is classified."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gpucloud.conformance import run_conformance
from gpucloud.cost import PricingOptions, price_plan, price_resources
from gpucloud.cost.billable import kube_billable
from gpucloud.cost.engine import classify
from gpucloud.cost.pricer import k8s_token
from gpucloud.fleet import types as T

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from stackcopy import plan_stack  # noqa: E402

DEFAULT = "ingressclass.kubernetes.io/is-default-class"
STACKS = [("dev", ROOT), ("staging", ROOT), ("prod", ROOT), ("dev", ROOT / "stacks" / "teams" / "vision")]
# Priced types whose handler rightly adds nothing for some objects, and why (AWS bills those nothing).
NO_CHARGE = {
    T.VPC_ENDPOINT: lambda i: i.get("vpcEndpointType", "Gateway") == "Gateway",  # gateway endpoints are free
    T.EKS_ADDON: lambda i: i.get("addonName") != "amazon-cloudwatch-observability",  # add-ons bill nothing
    T.K8S_SERVICE: lambda i: (i.get("spec") or {}).get("type") != "LoadBalancer",
    T.K8S_PVC: lambda i: (i.get("spec") or {}).get("storageClassName") == "",  # binds a pre-provisioned volume
    T.K8S_STATEFULSET: lambda i: not (i.get("spec") or {}).get("volumeClaimTemplates"),
}


def _custom(r: Any) -> bool:
    return "/" in r.type.split(":")[1] if r.type.count(":") >= 2 else False


@pytest.mark.parametrize(("stack", "program"), STACKS, ids=["dev", "staging", "prod", "team-vision"])
def test_every_billable_object_of_a_shipped_plan_is_priced_or_listed(stack: str, program: Path) -> None:
    plan = plan_stack(stack, program_dir=program)
    plan.derived = list(run_conformance(plan, only=["helm"]).derived)
    cost = price_plan(plan)
    accounted = {i["urn"] for i in cost["items"]} | {u["urn"] for u in cost["unpriced"]}
    text = [i["name"] for i in cost["items"]] + [u["reason"] for u in cost["unpriced"]]
    silent = []
    for r in plan.resources:
        if not r.custom or not _custom(r) or r.type.startswith("pulumi:"):
            continue
        kind = classify(r.type)
        assert kind != "unclassified", f"{r.type} has no price rule and no classification"
        if kind == "free" or r.urn in accounted:
            continue
        no_charge = NO_CHARGE.get(r.type)
        if no_charge is not None and no_charge(r.inputs):
            continue
        if r.type in T.POOL_TYPES and any(u["urn"] == r.urn for u in cost["unpriced"]):
            continue
        silent.append((r.type, r.name))
    # Registered and rendered Kubernetes objects that make AWS bill: named by an item or an unpriced entry.
    manifests = [r.inputs for r in plan.resources if r.type.startswith("kubernetes:")] + [
        d.manifest for d in plan.derived
    ]
    silent += _silent_kube(manifests, text)
    assert silent == []


def _silent_kube(manifests: list[dict[str, Any]], text: list[str]) -> list[tuple[str, str]]:
    """The Kubernetes objects that make AWS bill and that no item name or unpriced reason names."""
    alb = [
        m for m in manifests
        if m.get("kind") == "IngressClass" and (m.get("spec") or {}).get("controller") == "ingress.k8s.aws/alb"
    ]  # fmt: skip
    classes = {"alb", *(str(m["metadata"]["name"]) for m in alb)}
    default = next(
        (str(m["metadata"]["name"]) for m in alb if (m["metadata"].get("annotations") or {}).get(DEFAULT) == "true"),
        None,
    )
    silent = []
    for m in manifests:
        label = kube_billable(m, classes, default)
        if label is not None and not any(label in t for t in text):
            silent.append((k8s_token(m), label))
    return silent


def _ingress(name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"name": name, "namespace": "web", "annotations": annotations or {}}
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta, "spec": spec}
    return {"urn": f"urn:pulumi:s::p::{T.K8S_INGRESS}::{name}", "type": T.K8S_INGRESS, "name": name,
            "custom": True, "inputs": body}  # fmt: skip


def test_alb_ingresses_are_in_the_predicate_and_none_is_silent() -> None:
    # The shipped plans declare no Ingress (their LBC creates no IngressClass): the predicate is exercised here.
    group = {"alb.ingress.kubernetes.io/group.name": "edge"}
    ingress_class = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                     "metadata": {"name": "public", "annotations": {DEFAULT: "true"}},
                     "spec": {"controller": "ingress.k8s.aws/alb"}}  # fmt: skip
    class_token = "kubernetes:networking.k8s.io/v1:IngressClass"
    class_resource = {"urn": f"urn:pulumi:s::p::{class_token}::public", "type": class_token, "name": "public",
                      "custom": True, "inputs": ingress_class}  # fmt: skip
    resources = [
        class_resource,
        _ingress("a", {"ingressClassName": "alb"}, group),
        _ingress("b", {"ingressClassName": "alb"}, group),
        _ingress("c", {"ingressClassName": "public"}),
        _ingress("d", {}),  # no class: the default IngressClass "public" (an ALB)
        _ingress("e", {"ingressClassName": "nginx"}),
    ]
    manifests = [r["inputs"] for r in resources]
    labels = [kube_billable(m, {"alb", "public"}, "public") for m in manifests]
    assert labels == [None, "Ingress group edge", "Ingress group edge", "Ingress web/c", "Ingress web/d", None]
    cost = price_resources(resources, PricingOptions(region="us-east-1"))
    text = [i["name"] for i in cost["items"]] + [u["reason"] for u in cost["unpriced"]]
    assert _silent_kube(manifests, text) == []
    # The predicate does fail: an ALB Ingress the cost section does not name is reported.
    assert _silent_kube(manifests, []) == [
        (T.K8S_INGRESS, "Ingress group edge"),
        (T.K8S_INGRESS, "Ingress group edge"),
        (T.K8S_INGRESS, "Ingress web/c"),
        (T.K8S_INGRESS, "Ingress web/d"),
    ]


def test_the_prod_prometheus_volume_and_the_team_nlb_are_in_the_cost_section() -> None:
    # The two cases the issue names: Prometheus's 500 GiB in prod (rendered by kube-prometheus-stack) and the
    # team's LoadBalancer Service (an internal NLB through the AWS Load Balancer Controller).
    prod = plan_stack("prod")
    prod.derived = list(run_conformance(prod, only=["helm"]).derived)
    items = {i["name"]: i for i in price_plan(prod)["items"]}
    tsdb = items["Prometheus monitoring/kube-prometheus-stack-prometheus storage x1 (gpucloud-gp3) (gp3)"]
    assert (tsdb["quantity"], tsdb["unit"], tsdb["region"]) == (500, "GiB-month", "us-east-1")
    team = plan_stack("dev", program_dir=ROOT / "stacks" / "teams" / "vision")
    [nlb] = [u for u in price_plan(team)["unpriced"] if "vision-assistant-service" in u["urn"]]
    assert "Service vision/assistant creates an AWS Network Load Balancer" in nlb["reason"]
    assert "no us-west-2 figure" in nlb["reason"]


def test_every_resource_type_of_the_foreign_corpus_is_classified() -> None:
    expected = json.loads((ROOT / "tests" / "fixtures" / "corpus" / "expected.json").read_text())
    types = {t for program in expected.values() for t in program.get("resources", {})}
    assert len(types) > 100
    # Provider resources (pkg:module/sub:Type); components (eks:index:Cluster) and providers bill nothing.
    resources = {t for t in types if t.count(":") >= 2 and "/" in t.split(":")[1] and not t.startswith("pulumi:")}
    assert {t: classify(t) for t in sorted(resources) if classify(t) == "unclassified"} == {}
