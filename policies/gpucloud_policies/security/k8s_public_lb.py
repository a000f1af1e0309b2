"""GC-SEC-147 k8s-no-public-load-balancer: no Service or Ingress puts an internet-facing load balancer in front
of the cluster open to the whole internet.

Which load balancer a Service gets on EKS, and its scheme, follow the AWS Load Balancer Controller docs
(kubernetes-sigs.github.io/aws-load-balancer-controller, service/ingress annotations): the controller handles a
Service with ``aws-load-balancer-type: external`` / ``nlb-ip`` or ``loadBalancerClass: service.k8s.aws/nlb`` and
makes it *internal* unless ``aws-load-balancer-scheme: internet-facing``; any other LoadBalancer Service goes to
the legacy in-tree provider, which makes it *internet-facing* unless ``aws-load-balancer-internal`` is set. An
Ingress is internet-facing with ``alb.ingress.kubernetes.io/scheme: internet-facing`` (the controller's default
is internal). Source ranges (``spec.loadBalancerSourceRanges``, the ``load-balancer-source-ranges`` annotation,
``alb.ingress.kubernetes.io/inbound-cidrs``) absent, or covering half of an address family, count as the world.
Rendered chart objects are checked too (``k8s.py``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    UnknownValueError,
    get,
    strings,
    text,
    unknown,
)
from ..k8s import KObject, objects, unseen_releases

ANN = "service.beta.kubernetes.io/"
LBC_TYPES = ("external", "nlb-ip")
LBC_CLASS = "service.k8s.aws/nlb"


def _annotations(obj: KObject) -> dict[str, str]:
    ann = get(obj.body, "metadata", "annotations")
    if not isinstance(ann, Mapping):
        return {}
    return {k: text(ann[k]) for k in ann if isinstance(k, str)}


def _ranges(values: list[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def is_world(cidrs: list[str]) -> bool:
    """True when the ranges cover at least half of IPv4 or of IPv6 (0.0.0.0/0, 0.0.0.0/1 + 128.0.0.0/1, ::/1,...).

    An unparsable range counts as the world: the controller would reject it, and a typo must not read as safe."""
    v4 = 0
    v6 = 0
    nets: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for c in cidrs:
        try:
            nets.append(ipaddress.ip_network(c, strict=False))
        except ValueError:
            return True
    for n in ipaddress.collapse_addresses([n for n in nets if n.version == 4]):
        v4 += n.num_addresses
    for n6 in ipaddress.collapse_addresses([n for n in nets if n.version == 6]):
        v6 += n6.num_addresses
    return v4 >= 2**31 or v6 >= 2**127


def _service(obj: KObject, ann: dict[str, str]) -> str | None:
    if text(get(obj.body, "spec", "type")) != "LoadBalancer":
        return None
    lb_type = ann.get(ANN + "aws-load-balancer-type", "")
    lbc = lb_type in LBC_TYPES or text(get(obj.body, "spec", "loadBalancerClass")) == LBC_CLASS
    scheme = ann.get(ANN + "aws-load-balancer-scheme", "")
    if lbc:
        public = scheme == "internet-facing"
        why = "aws-load-balancer-scheme: internet-facing"
    else:
        internal = ann.get(ANN + "aws-load-balancer-internal", "")
        public = internal.strip().lower() not in ("true", "0.0.0.0/0") and scheme != "internal"
        why = "the in-tree AWS provider makes LoadBalancer Services internet-facing without aws-load-balancer-internal"
        if scheme == "internet-facing":
            public, why = True, "aws-load-balancer-scheme: internet-facing"
    if not public:
        return None
    ranges = _ranges(strings(get(obj.body, "spec", "loadBalancerSourceRanges")))
    ranges += _ranges([ann[k] for k in (ANN + "load-balancer-source-ranges",) if k in ann])
    if ranges and not is_world(ranges):
        return None
    shown = f"source ranges {ranges} cover the internet" if ranges else "no loadBalancerSourceRanges"
    return f"type LoadBalancer, {why}, {shown}"


def _ingress(obj: KObject, ann: dict[str, str]) -> str | None:
    if ann.get("alb.ingress.kubernetes.io/scheme", "") != "internet-facing":
        return None
    ranges = _ranges(
        [ann["alb.ingress.kubernetes.io/inbound-cidrs"]] if "alb.ingress.kubernetes.io/inbound-cidrs" in ann else []
    )
    if ranges and not is_world(ranges):
        return None
    shown = f"inbound-cidrs {ranges} cover the internet" if ranges else "no alb.ingress.kubernetes.io/inbound-cidrs"
    return f"alb.ingress.kubernetes.io/scheme: internet-facing, {shown}"


def _allowed(obj: KObject, allowed: Any) -> bool:
    return any(
        isinstance(e, Mapping) and e.get("namespace") == obj.namespace and e.get("name") == obj.name
        for e in (allowed if isinstance(allowed, list) else [])
    )


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    undecided: list[str] = []
    for obj in objects(args.resources, {"Service", "Ingress"}):
        if _allowed(obj, cfg["allowedPublic"]):
            continue
        try:
            ann = _annotations(obj)
            what = _service(obj, ann) if obj.kind == "Service" else _ingress(obj, ann)
        except UnknownValueError:
            undecided.append(obj.ref)
            continue
        if what:
            report(
                obj.urn,
                f"{obj.ref} is an internet-facing load balancer open to the world ({what}). Fix: make it internal "
                "(aws-load-balancer-scheme / alb.ingress.kubernetes.io/scheme: internal) or restrict "
                "loadBalancerSourceRanges / inbound-cidrs to known networks.",
            )
    undecided += [f"{r.name} (rendered objects not visible)" for r in unseen_releases(args.resources)]
    if undecided:
        raise unknown(
            "metadata.annotations", f"Services/Ingresses that cannot be decided at preview: {sorted(undecided)}"
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-147",
    name="k8s-no-public-load-balancer",
    description="Kubernetes Services of type LoadBalancer and Ingresses must not be internet-facing and open to "
    "the world.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Set service.beta.kubernetes.io/aws-load-balancer-scheme (or alb.ingress.kubernetes.io/"
    "scheme) to internal, or restrict loadBalancerSourceRanges / alb.ingress.kubernetes.io/inbound-cidrs.",
    references=("AWS Load Balancer Controller annotations", "CKV_K8S_* (none)"),
    kind="stack",
    validate=validate,
    config={
        "allowedPublic": {
            "type": "array",
            "default": [],
            "description": "Services/Ingresses allowed to be public: namespace and name, each with a reason.",
            "items": {
                "type": "object",
                "properties": {
                    "namespace": {"type": "string"},
                    "name": {"type": "string"},
                    "reason": {"type": "string", "minLength": 1},
                },
                "required": ["namespace", "name", "reason"],
                "additionalProperties": False,
            },
        },
    },
)
