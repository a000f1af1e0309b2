"""GC-SEC-147 k8s-no-public-load-balancer: which Services and Ingresses put an internet-facing load balancer in
front of the cluster, and whether the stack allows that (the one policy for public load balancers; it absorbed
issue 15's ``lb-internal-only``, GC-SEC-148, whose config key ``allowInternetFacing`` it keeps).

Which controller answers a LoadBalancer Service on EKS, and the scheme it picks:

- The AWS Load Balancer Controller v3.5.0 (the pinned chart aws-load-balancer-controller 3.5.0) takes a Service
  annotated ``service.beta.kubernetes.io/aws-load-balancer-type: external`` or ``nlb-ip``, or with
  ``spec.loadBalancerClass: service.k8s.aws/nlb`` (docs/guide/service/annotations.md). Its scheme is
  ``aws-load-balancer-scheme`` (``internal`` | ``internet-facing``, default ``internal``); without it the
  deprecated ``aws-load-balancer-internal`` is read as a Go bool (pkg/service/model_build_load_balancer.go,
  buildLoadBalancerSchemeLegacyAnnotation). Any other value makes the controller refuse the Service: no load
  balancer at all.
- Any other LoadBalancer Service goes to the in-tree cloud-provider-aws, which makes it internet-facing unless
  ``aws-load-balancer-internal`` is set to anything but ``"false"`` (aws.go, EnsureLoadBalancer); it ignores
  ``aws-load-balancer-scheme``. The controller's Service mutator webhook (chart value
  ``enableServiceMutatorWebhook``, default true; gpucloud's platform turns it off) would instead hand such a
  Service to the controller. Which of the two answers depends on the cluster, so the Service counts as
  internet-facing when either would make it so: an ``aws-load-balancer-scheme: internal`` alone is internal only
  where the webhook runs.

An ALB Ingress is internet-facing with ``alb.ingress.kubernetes.io/scheme: internet-facing`` (default internal;
docs/guide/ingress/annotations.md). Source ranges (``spec.loadBalancerSourceRanges``, the
``service.beta.kubernetes.io/load-balancer-source-ranges`` annotation, ``alb.ingress.kubernetes.io/inbound-cidrs``)
default to ``0.0.0.0/0``; absent, or reaching the internet as a union (readers/reach.py), they count as the world.

The verdict: an internet-facing load balancer open to the world is a violation unless ``allowedPublic`` names it;
one restricted to known networks is a violation unless the stack sets ``allowInternetFacing`` (the policy mirror
of the platform's ``addons.loadBalancerController.allowInternetFacing``). Rendered chart objects are checked too
(``k8s.py``).

A ServicePatch or IngressPatch (server-side apply onto an object that exists already) is judged on the fields it
sets, since they win over the object's: a patch that sets nothing exposure-related is not exposure; one that
makes the object internal, or internet-facing with source ranges of its own, is judged like a whole object; one
that makes it internet-facing without ranges, or sets only part of what decides it (annotations without
``spec.type``, ranges without a scheme), depends on the patched object the plan does not show, and is undecided
with that reason (fail closed, the pack's ``unknowns`` rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
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
from ..readers import reach

ANN = "service.beta.kubernetes.io/"
TYPE = ANN + "aws-load-balancer-type"
SCHEME = ANN + "aws-load-balancer-scheme"
INTERNAL = ANN + "aws-load-balancer-internal"
SOURCE_RANGES = ANN + "load-balancer-source-ranges"
LBC_TYPES = ("external", "nlb-ip")
LBC_CLASS = "service.k8s.aws/nlb"
ALB_SCHEME = "alb.ingress.kubernetes.io/scheme"
ALB_CIDRS = "alb.ingress.kubernetes.io/inbound-cidrs"
# strconv.ParseBool, which the controller's annotation parser uses.
GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


@dataclass(frozen=True)
class Exposure:
    """An internet-facing load balancer: why it is one, its source ranges, and whether they are the world."""

    why: str
    ranges: list[str]
    world: bool
    range_field: str


def _annotations(obj: KObject) -> dict[str, str]:
    ann = get(obj.body, "metadata", "annotations")
    if not isinstance(ann, Mapping):
        return {}
    return {k: text(ann[k]) for k in ann if isinstance(k, str)}


def _ranges(values: list[str]) -> list[str]:
    return reach.split(values)


def is_world(cidrs: list[str]) -> bool:
    """True when the ranges reach the internet (readers/reach.py: 0.0.0.0/0, 0.0.0.0/1 + 128.0.0.0/1, ::/1, ...).

    An unparsable range counts as the world: the controller would reject it, and a typo must not read as safe."""
    return reach.Reach.of(cidrs).is_world(unparsable_is_world=True)


def controller_reason(ann: Mapping[str, str]) -> str | None:
    """Why the AWS Load Balancer Controller makes this Service internet-facing (scheme first, then the legacy
    bool), or None: internal, or refused for a value it cannot parse."""
    if SCHEME in ann:
        return "aws-load-balancer-scheme: internet-facing" if ann[SCHEME] == "internet-facing" else None
    return f"aws-load-balancer-internal: {ann[INTERNAL]}" if ann.get(INTERNAL) in GO_FALSE else None


def in_tree_public(ann: Mapping[str, str]) -> bool:
    """Whether cloud-provider-aws makes this Service internet-facing: only aws-load-balancer-internal counts."""
    return ann.get(INTERNAL, "") in ("", "false")


def service_scheme_reason(obj: KObject, ann: Mapping[str, str]) -> str | None:
    """Why this Service gets an internet-facing load balancer, or None when it gets none or an internal one."""
    if text(get(obj.body, "spec", "type")) != "LoadBalancer":
        return None
    by_controller = controller_reason(ann)
    if ann.get(TYPE, "") in LBC_TYPES or text(get(obj.body, "spec", "loadBalancerClass")) == LBC_CLASS:
        return by_controller
    if by_controller:
        return by_controller
    if in_tree_public(ann):
        return "the in-tree AWS provider makes LoadBalancer Services internet-facing without aws-load-balancer-internal"
    return None


def _service(obj: KObject, ann: dict[str, str]) -> Exposure | None:
    why = service_scheme_reason(obj, ann)
    if why is None:
        return None
    ranges = _ranges(strings(get(obj.body, "spec", "loadBalancerSourceRanges")))
    ranges += _ranges([ann[SOURCE_RANGES]] if SOURCE_RANGES in ann else [])
    return Exposure(f"type LoadBalancer, {why}", ranges, not ranges or is_world(ranges), "loadBalancerSourceRanges")


def _ingress(obj: KObject, ann: dict[str, str]) -> Exposure | None:
    if ann.get(ALB_SCHEME, "") != "internet-facing":
        return None
    ranges = _ranges([ann[ALB_CIDRS]] if ALB_CIDRS in ann else [])
    return Exposure(f"{ALB_SCHEME}: internet-facing", ranges, not ranges or is_world(ranges), ALB_CIDRS)


def _allowed(obj: KObject, allowed: Any) -> bool:
    return any(
        isinstance(e, Mapping) and e.get("namespace") == obj.namespace and e.get("name") == obj.name
        for e in (allowed if isinstance(allowed, list) else [])
    )


def message(obj: KObject, exposure: Exposure, allow_internet_facing: bool) -> str | None:
    """The violation for one internet-facing object under this stack's config, or None when it is allowed."""
    if exposure.world:
        named = "inbound-cidrs" if obj.kind == "Ingress" else "source ranges"
        shown = f"{named} {exposure.ranges} cover the internet" if exposure.ranges else f"no {exposure.range_field}"
        return (
            f"{obj.ref} is an internet-facing load balancer open to the world ({exposure.why}, {shown}). Fix: make "
            "it internal (aws-load-balancer-scheme / alb.ingress.kubernetes.io/scheme: internal) or restrict "
            "loadBalancerSourceRanges / inbound-cidrs to known networks."
        )
    if allow_internet_facing:
        return None
    return (
        f"{obj.ref} is an internet-facing load balancer ({exposure.why}, {exposure.range_field} "
        f"{exposure.ranges}), which this stack does not allow (allowInternetFacing is false). Fix: make it internal "
        f"({TYPE}: external with {SCHEME}: internal, or {ALB_SCHEME}: internal), or set allowInternetFacing for "
        "this stack."
    )


# The annotations that decide a Service's / an Ingress's exposure (besides spec.type and the Service's spec fields).
_SERVICE_ANNOTATIONS = (TYPE, SCHEME, INTERNAL, SOURCE_RANGES)
_INGRESS_ANNOTATIONS = (ALB_SCHEME, ALB_CIDRS)


def patch_verdict(obj: KObject, ann: dict[str, str]) -> tuple[Exposure | None, bool]:
    """(exposure, decided) for a ServicePatch / IngressPatch from the fields it sets (see the module docstring)."""
    whole = replace(obj, kind=obj.kind.removesuffix("Patch"))
    exposure = _service(whole, ann) if whole.kind == "Service" else _ingress(whole, ann)
    if exposure is not None:
        # Internet-facing for certain; open to the world only if the object has no ranges the patch leaves.
        return exposure, bool(exposure.ranges)
    spec = get(obj.body, "spec")
    if whole.kind == "Service":
        if text(get(spec, "type")):
            return None, True  # no load balancer (ClusterIP, NodePort), or one the patch's annotations make internal
        decides = isinstance(spec, Mapping) and any(
            k in spec for k in ("loadBalancerClass", "loadBalancerSourceRanges")
        )
        return None, not (decides or any(a in ann for a in _SERVICE_ANNOTATIONS))
    if ann.get(ALB_SCHEME) == "internal":
        return None, True
    return None, not any(a in ann for a in _INGRESS_ANNOTATIONS)


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    undecided: list[str] = []
    for obj in objects(args.resources, {"ServicePatch", "IngressPatch"}):
        if _allowed(obj, cfg["allowedPublic"]):
            continue
        try:
            exposure, decided = patch_verdict(obj, _annotations(obj))
        except UnknownValueError:
            undecided.append(obj.ref)
            continue
        if not decided:
            undecided.append(f"{obj.ref} (a patch: the exposure depends on the patched object, not in the plan)")
            continue
        found = message(obj, exposure, bool(cfg["allowInternetFacing"])) if exposure else None
        if found:
            report(obj.urn, found)
    for obj in objects(args.resources, {"Service", "Ingress"}):
        if _allowed(obj, cfg["allowedPublic"]):
            continue
        try:
            ann = _annotations(obj)
            exposure = _service(obj, ann) if obj.kind == "Service" else _ingress(obj, ann)
        except UnknownValueError:
            undecided.append(obj.ref)
            continue
        found = message(obj, exposure, bool(cfg["allowInternetFacing"])) if exposure else None
        if found:
            report(obj.urn, found)
    undecided += [f"{r.name} (rendered objects not visible)" for r in unseen_releases(args.resources)]
    if undecided:
        raise unknown(
            "metadata.annotations", f"Services/Ingresses that cannot be decided at preview: {sorted(undecided)}"
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-147",
    name="k8s-no-public-load-balancer",
    description="Kubernetes Services of type LoadBalancer and Ingresses must not be internet-facing unless the "
    "stack allows it, and never open to the world.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Annotate LoadBalancer Services with aws-load-balancer-type: external and "
    "aws-load-balancer-scheme: internal (Ingresses: alb.ingress.kubernetes.io/scheme: internal); where a stack "
    "allows internet-facing ones (allowInternetFacing), restrict loadBalancerSourceRanges / "
    "alb.ingress.kubernetes.io/inbound-cidrs to known networks.",
    references=(
        "AWS Load Balancer Controller v3.5.0 service and ingress annotations",
        "cloud-provider-aws service annotations",
        "CKV_K8S_* (none)",
    ),
    kind="stack",
    surfaces=frozenset({"network"}),
    # A List kind's items are Services and Ingresses too (k8s.objects yields them).
    reads=frozenset(
        {
            "kubernetes:*:Service",
            "kubernetes:*:Ingress",
            "kubernetes:*:ServiceList",
            "kubernetes:*:IngressList",
            "kubernetes:*:ServicePatch",
            "kubernetes:*:IngressPatch",
        }
    ),
    validate=validate,
    config={
        "allowInternetFacing": {
            "type": "boolean",
            "default": False,
            "description": "Allow internet-facing load balancers restricted to known source ranges (mirror of the "
            "platform's addons.loadBalancerController.allowInternetFacing). Open to the world needs allowedPublic.",
        },
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
