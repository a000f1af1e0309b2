"""Load balancers that Kubernetes objects make AWS create: Services of type LoadBalancer and ALB Ingresses.

Which controller takes a Service, and what it creates (AWS Load Balancer Controller docs, guide/service/nlb and
guide/service/annotations; EKS user guide, "Route TCP and UDP traffic with Network Load Balancers"):

* ``spec.loadBalancerClass: service.k8s.aws/nlb``, or the annotation
  ``service.beta.kubernetes.io/aws-load-balancer-type`` ``external`` or ``nlb-ip``: the AWS Load Balancer
  Controller (LBC) creates a Network Load Balancer;
* ``aws-load-balancer-type: nlb`` without a class: the in-tree cloud provider creates a Network Load Balancer;
* neither: the in-tree cloud provider creates a Classic Load Balancer, unless the LBC (v2.5 or later) runs with its
  Service mutator webhook (chart value ``enableServiceMutatorWebhook``, on by default), which sets
  ``loadBalancerClass: service.k8s.aws/nlb`` on new Services, so the LBC creates an NLB;
* any other ``loadBalancerClass``: another controller, not an AWS load balancer gpucloud can name.

An Ingress of class ``alb`` (``spec.ingressClassName`` or the ``kubernetes.io/ingress.class`` annotation, or an
IngressClass whose controller is ``ingress.k8s.aws/alb``) gets an Application Load Balancer; Ingresses sharing an
``alb.ingress.kubernetes.io/group.name`` share one.

Each balancer is priced at the region's hourly rate plus one capacity unit-hour (LCU/NLCU) each hour, an estimate
(marked so in ``rate_source`` and the item's name): capacity units are billed by traffic, which a plan cannot know;
what traffic adds above that is listed as usage-billed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gpucloud.cost.pricer import Pricer, prices
from gpucloud.fleet import types as T
from gpucloud.fleet.values import get, is_unknown, obj, text
from gpucloud.prices import rates

LBC_DOCS: Final = "AWS Load Balancer Controller docs (guide/service/nlb, guide/service/annotations)"
ANN_TYPE: Final = "service.beta.kubernetes.io/aws-load-balancer-type"
NLB_CLASS: Final = "service.k8s.aws/nlb"
LBC_TYPES: Final = ("external", "nlb-ip")
ALB_CLASS: Final = "alb"
ALB_CONTROLLER: Final = "ingress.k8s.aws/alb"
INGRESS_CLASS_ANNOTATION: Final = "kubernetes.io/ingress.class"
DEFAULT_INGRESS_CLASS: Final = "ingressclass.kubernetes.io/is-default-class"
GROUP_ANNOTATION: Final = "alb.ingress.kubernetes.io/group.name"
LBC_CHART: Final = "aws-load-balancer-controller"
ESTIMATE: Final = "estimate: one capacity unit each hour; capacity units are billed by traffic"

# What each balancer kind bills: (hourly item, capacity-unit item or None, usage line, name).
_KINDS: Final[dict[str, tuple[str, str | None, str, str]]] = {
    "nlb": (
        rates.NLB_HOUR,
        rates.NLB_LCU_HOUR,
        "NLCU-hours above the estimated one are billed by new and active flows and bytes processed",
        "Network Load Balancer",
    ),
    "alb": (
        rates.ALB_HOUR,
        rates.ALB_LCU_HOUR,
        "LCU-hours above the estimated one are billed by new and active connections, bytes and rule evaluations",
        "Application Load Balancer",
    ),
    "clb": (rates.CLB_HOUR, None, "Classic Load Balancer data processing is billed per GB", "Classic Load Balancer"),
}


def _lbc_webhook(pricer: Pricer) -> bool | None:
    """True when the plan installs the LBC with its Service mutator webhook on; False when off; None: no LBC."""
    cached = pricer.shared.get("lbc_webhook", "unset")
    if cached != "unset":
        return bool(cached) if cached is not None else None
    found: bool | None = None
    for r in pricer.resources:
        inputs = r.get("inputs") or {}
        if str(r.get("type", "")).startswith("kubernetes:helm.sh/") and inputs.get("chart") == LBC_CHART:
            values = inputs.get("values")
            found = not (isinstance(values, Mapping) and values.get("enableServiceMutatorWebhook") is False)
            break
    pricer.shared["lbc_webhook"] = found
    return found


def _bill(pricer: Pricer, r: Mapping[str, Any], kind: str, label: str) -> None:
    hour_item, unit_item, usage, what = _KINDS[kind]
    held = pricer.rates.service
    hour = held.get(hour_item)
    if hour is None:
        where = ", ".join(rates.shipped_regions(hour_item)) or "no region"
        pricer.skip(
            r,
            f"billed, no rate in gpucloud: {label} creates an AWS {what}, billed per hour plus "
            f"{'capacity units' if unit_item else 'GB processed'}; "
            f"gpucloud's service rates hold no {pricer.region} figure for it (they hold {where}); not priced at "
            "another region's rate",
            "hour",
        )
        return
    pricer.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=hour.usd, unit="hour", rate=hour,
               name=f"{label} ({what})")  # fmt: skip
    if unit_item is not None and (unit := held.get(unit_item)) is not None:
        pricer.add(
            r,
            pricing="fixed",
            quantity=1,
            max_quantity=1,
            unit_price=unit.usd,
            unit="hour",
            source=f"{unit.source}+{ESTIMATE}",
            as_of=unit.as_of,
            name=f"{label} {rates.unit_of(unit_item)} (estimate: 1 each hour)",
        )
    pricer.skip(r, f"usage-billed: {usage}", rates.unit_of(unit_item) if unit_item else rates.unit_of(rates.CLB_GB))


def service_balancer(pricer: Pricer, manifest: Mapping[str, Any]) -> tuple[str | None, str]:
    """What AWS creates for a Service: ("nlb" | "clb" | None, why). None: no AWS load balancer (or unknown)."""
    spec = obj(manifest.get("spec"))
    if spec.get("type") != "LoadBalancer":
        return None, "not of type LoadBalancer"
    annotations = obj(get(manifest, "metadata.annotations"))
    lb_class = spec.get("loadBalancerClass")
    lb_type = annotations.get(ANN_TYPE)
    if is_unknown(lb_class) or is_unknown(lb_type):
        return None, "loadBalancerClass or the aws-load-balancer-type annotation is unknown at preview"
    if lb_class == NLB_CLASS or (lb_class is None and lb_type in LBC_TYPES):
        return "nlb", "the AWS Load Balancer Controller creates an NLB"
    if lb_class is not None:
        return None, f"loadBalancerClass {lb_class}: another controller, not an AWS load balancer gpucloud models"
    if lb_type == "nlb":
        return "nlb", "the in-tree cloud provider creates an NLB (aws-load-balancer-type: nlb)"
    if _lbc_webhook(pricer):
        return "nlb", "the plan's AWS Load Balancer Controller webhook sets loadBalancerClass service.k8s.aws/nlb"
    return "clb", "the in-tree cloud provider creates a Classic Load Balancer (no class, no NLB annotation)"


def _label(r: Mapping[str, Any], manifest: Mapping[str, Any], kind: str) -> str:
    meta = obj(manifest.get("metadata"))
    name = text(meta.get("name")) or str(r.get("name"))
    namespace = text(meta.get("namespace"))
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


@prices(T.K8S_SERVICE)
def service(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    if obj(inputs.get("spec")).get("type") != "LoadBalancer":
        return  # ClusterIP, NodePort, ExternalName, headless: AWS bills nothing for them
    kind, why = service_balancer(pricer, inputs)
    label = _label(r, inputs, "Service")
    if kind is None:
        pricer.skip(r, f"{label}: {why}")
        return
    if kind == "clb" and _lbc_webhook(pricer) is None:
        pricer.warnings.append(
            f"{label}: priced as a Classic Load Balancer ({why}); on a cluster running the AWS Load Balancer "
            f"Controller v2.5+ with its Service webhook it becomes an NLB ({LBC_DOCS})"
        )
    _bill(pricer, r, kind, label)


def _ingress_classes(pricer: Pricer) -> tuple[set[str], str | None]:
    """Names of the plan's IngressClasses whose controller is the LBC's ALB controller, and the one of them marked
    the cluster's default (an Ingress without a class gets it: Kubernetes docs, "Default IngressClass"; the LBC
    chart marks its class so with ``ingressClassConfig.default``)."""
    cached = pricer.shared.get("alb_ingress_classes")
    if cached is None:
        names, default = {ALB_CLASS}, None
        for o in pricer.kube_objects():
            m = o.get("inputs") or {}
            if m.get("kind") == "IngressClass" and obj(m.get("spec")).get("controller") == ALB_CONTROLLER:
                name = text(get(m, "metadata.name"))
                if name:
                    names.add(name)
                    if str(obj(get(m, "metadata.annotations")).get(DEFAULT_INGRESS_CLASS)) == "true":
                        default = name
        cached = pricer.shared["alb_ingress_classes"] = (names, default)
    names, default = cached
    return set(names), default


@prices(T.K8S_INGRESS)
def ingress(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    annotations = obj(get(inputs, "metadata.annotations"))
    cls = obj(inputs.get("spec")).get("ingressClassName") or annotations.get(INGRESS_CLASS_ANNOTATION)
    label = _label(r, inputs, "Ingress")
    if is_unknown(cls):
        pricer.skip(r, f"{label}: ingressClassName is unknown at preview, so which load balancer it gets is unknown")
        return
    alb_classes, default = _ingress_classes(pricer)
    if (cls or default) not in alb_classes:
        return  # another ingress controller (nginx, ...): its own Service of type LoadBalancer is what bills
    group = annotations.get(GROUP_ANNOTATION)
    if isinstance(group, str) and group:
        groups: set[str] = pricer.shared.setdefault("alb_groups", set())
        if group in groups:
            return  # the group's first Ingress carries the shared ALB
        groups.add(group)
        label = f"Ingress group {group}"
    _bill(pricer, r, "alb", label)
