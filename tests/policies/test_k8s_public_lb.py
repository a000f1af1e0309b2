"""k8s-no-public-load-balancer (which absorbed lb-internal-only): the scheme each controller gives a Service or an
Ingress, the per-stack allowInternetFacing switch, the retired name in configs, and the VllmServer path."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.components.workloads.vllm import nlb_annotations
from gpucloud.guard import PolicyConfigError, evaluate
from gpucloud.guard.config import validate_config
from gpucloud.guard.harness import UNKNOWN, Res, stack_flagged, stack_messages
from gpucloud.plan.model import Plan
from gpucloud.policies.gpucloud_policies import by_name, initial_config
from gpucloud.policies.gpucloud_policies.registry import RETIRED

POLICY = "k8s-no-public-load-balancer"
SVC = "kubernetes:core/v1:Service"
ING = "kubernetes:networking.k8s.io/v1:Ingress"
A = "service.beta.kubernetes.io/"
TYPE = A + "aws-load-balancer-type"
SCHEME = A + "aws-load-balancer-scheme"
INTERNAL = A + "aws-load-balancer-internal"
RESTRICTED = ["203.0.113.0/24"]
ALLOW = {"allowInternetFacing": True}


def svc(name, annotations=None, ranges=RESTRICTED, type_="LoadBalancer", cls=None, ns="ml"):
    spec = {"type": type_, "ports": [{"port": 443}], "loadBalancerSourceRanges": ranges}
    if cls:
        spec["loadBalancerClass"] = cls
    meta = {"name": name, "namespace": ns, "annotations": annotations or {}}
    return Res(SVC, name, {"kind": "Service", "metadata": meta, "spec": spec})


def ing(name, annotations):
    meta = {"name": name, "namespace": "web", "annotations": annotations}
    return Res(ING, name, {"kind": "Ingress", "metadata": meta})


# lb-internal-only's cases, now restricted to known networks: what decides them is the scheme alone.
PER_CONTROLLER = [
    svc("lbc-internal", {TYPE: "external", SCHEME: "internal"}),
    svc("lbc-default-scheme", {TYPE: "external"}),
    svc("lbc-public", {TYPE: "external", SCHEME: "internet-facing"}),
    svc("lbc-class-public", {SCHEME: "internet-facing"}, cls="service.k8s.aws/nlb"),
    svc("nlb-ip-default", {TYPE: "nlb-ip"}),
    svc("in-tree-default"),
    svc("in-tree-internal", {INTERNAL: "true"}),
    svc("cluster-ip", {SCHEME: "internet-facing"}, type_="ClusterIP"),
]


def test_restricted_internet_facing_services_need_allow_internet_facing():
    assert stack_flagged(POLICY, PER_CONTROLLER) == {"lbc-public", "lbc-class-public", "in-tree-default"}
    assert stack_flagged(POLICY, PER_CONTROLLER, ALLOW) == set()
    [(name, message)] = stack_messages(POLICY, [PER_CONTROLLER[2]])
    assert name == "lbc-public"
    assert message == (
        "lbc-public: Service ml/lbc-public is an internet-facing load balancer (type LoadBalancer, "
        "aws-load-balancer-scheme: internet-facing, loadBalancerSourceRanges ['203.0.113.0/24']), which this "
        "stack does not allow (allowInternetFacing is false). Fix: make it internal "
        "(service.beta.kubernetes.io/aws-load-balancer-type: external with "
        "service.beta.kubernetes.io/aws-load-balancer-scheme: internal, or alb.ingress.kubernetes.io/scheme: "
        "internal), or set allowInternetFacing for this stack."
    )


def test_a_public_service_is_reported_once():
    # The defect lb-internal-only + k8s-no-public-load-balancer had: two findings for one Service.
    found = stack_messages(POLICY, [svc("open", {TYPE: "external", SCHEME: "internet-facing"}, ranges=[])])
    assert [name for name, _ in found] == ["open"]
    assert "open to the world" in found[0][1]
    assert "lb-internal-only" not in by_name()


@pytest.mark.parametrize(
    ("annotations", "public"),
    [
        # The controller reads the deprecated bool only without a scheme, as Go's strconv.ParseBool does.
        ({TYPE: "external", INTERNAL: "false"}, True),
        ({TYPE: "external", INTERNAL: "False"}, True),
        ({TYPE: "external", INTERNAL: "0"}, True),
        ({TYPE: "external", INTERNAL: "f"}, True),
        ({TYPE: "external", INTERNAL: "true"}, False),
        ({TYPE: "external", INTERNAL: "1"}, False),
        # A value the controller cannot parse makes it refuse the Service: no load balancer.
        ({TYPE: "external", INTERNAL: "yes"}, False),
        ({TYPE: "external", SCHEME: "Internet-Facing"}, False),
        # The scheme wins over the legacy bool.
        ({TYPE: "external", SCHEME: "internal", INTERNAL: "false"}, False),
        ({TYPE: "external", SCHEME: "internet-facing", INTERNAL: "true"}, True),
        # Without the controller's markers the in-tree provider may answer: anything but "false" is internal
        # there, while the controller (through its Service webhook) reads the same value as a bool.
        ({INTERNAL: "false"}, True),
        ({INTERNAL: "0.0.0.0/0"}, False),
        ({INTERNAL: "0"}, True),
        ({INTERNAL: ""}, True),
        ({SCHEME: "internal"}, True),
        ({SCHEME: "internal", INTERNAL: "true"}, False),
        ({TYPE: "nlb"}, True),
    ],
)
def test_service_scheme_per_controller(annotations, public):
    assert stack_flagged(POLICY, [svc("s", annotations)]) == ({"s"} if public else set())


def test_other_load_balancer_classes_are_judged_as_unmarked_services():
    assert stack_flagged(POLICY, [svc("other", cls="example.com/lb")]) == {"other"}
    assert stack_flagged(POLICY, [svc("other", {INTERNAL: "true"}, cls="example.com/lb")]) == set()


def test_reasons_name_the_annotation_that_decided():
    [(_, legacy)] = stack_messages(POLICY, [svc("s", {TYPE: "external", INTERNAL: "0"}, ranges=[])])
    assert "(type LoadBalancer, aws-load-balancer-internal: 0, no loadBalancerSourceRanges)" in legacy
    [(_, webhook)] = stack_messages(POLICY, [svc("s", {INTERNAL: "f"})])
    assert "(type LoadBalancer, aws-load-balancer-internal: f, loadBalancerSourceRanges ['203.0.113.0/24'])" in (
        webhook
    )
    [(_, in_tree)] = stack_messages(POLICY, [svc("s", {SCHEME: "internal"})])
    assert "the in-tree AWS provider makes LoadBalancer Services internet-facing without" in in_tree


def test_restricted_internet_facing_ingresses_need_allow_internet_facing():
    s = "alb.ingress.kubernetes.io/scheme"
    c = "alb.ingress.kubernetes.io/inbound-cidrs"
    restricted = ing("nb", {s: "internet-facing", c: "203.0.113.0/24"})
    [(_, message)] = stack_messages(POLICY, [restricted])
    assert message.startswith(
        "nb: Ingress web/nb is an internet-facing load balancer (alb.ingress.kubernetes.io/scheme: internet-facing, "
        "alb.ingress.kubernetes.io/inbound-cidrs ['203.0.113.0/24']), which this stack does not allow"
    )
    assert stack_messages(POLICY, [restricted], ALLOW) == []
    assert stack_flagged(POLICY, [ing("typo", {s: "Internet-Facing"}), ing("internal", {s: "internal"})]) == set()


def test_allowed_public_covers_restricted_and_open_objects():
    rs = [
        svc("api", {TYPE: "external", SCHEME: "internet-facing"}),
        svc("open", {TYPE: "external", SCHEME: "internet-facing"}, ranges=["0.0.0.0/0"]),
    ]
    allowed = [{"namespace": "ml", "name": n, "reason": "public API"} for n in ("api", "open")]
    assert stack_flagged(POLICY, rs) == {"api", "open"}
    assert stack_flagged(POLICY, rs, {"allowedPublic": allowed}) == set()
    # allowInternetFacing allows restricted ones only: the world still needs a named allowance.
    assert stack_flagged(POLICY, rs, ALLOW) == {"open"}


@pytest.mark.parametrize(("internet_facing", "allow", "flagged"), [(False, False, set()), (True, False, {"vllm"})])
def test_vllm_server_service_follows_the_stack_switch(internet_facing, allow, flagged):
    # The annotations VllmServer puts on its Service; the platform's allowInternetFacing is mirrored per stack.
    service = svc("vllm", nlb_annotations(internet_facing))
    assert stack_flagged(POLICY, [service], {"allowInternetFacing": allow}) == flagged
    assert stack_flagged(POLICY, [service], ALLOW) == set()


def test_allow_internet_facing_defaults_to_false():
    assert initial_config()[POLICY]["allowInternetFacing"] is False


def test_a_config_naming_the_retired_policy_is_refused_with_where_it_went():
    config = {"lb-internal-only": {"allowInternetFacing": True}}
    [problem] = validate_config(config, by_name(), RETIRED)
    assert problem == (
        "lb-internal-only: retired: folded into k8s-no-public-load-balancer (GC-SEC-147), which judges "
        'LoadBalancer Services and Ingresses. Fix: move this entry under "k8s-no-public-load-balancer" '
        "(allowInternetFacing keeps its meaning for load balancers restricted to known source ranges; one open to "
        "the world also needs an allowedPublic entry)."
    )
    # Without the pack's retired names it is just unknown.
    assert validate_config(config, by_name())[0].startswith("lb-internal-only: no such policy in the pack")
    with pytest.raises(PolicyConfigError, match=r"lb-internal-only: retired: folded into k8s-no-public-load"):
        evaluate(Plan("p", "prod", []), config)


SVC_PATCH = "kubernetes:core/v1:ServicePatch"
ING_PATCH = "kubernetes:networking.k8s.io/v1:IngressPatch"


def svc_patch(name, annotations=None, spec=None):
    body = {"kind": "Service", "metadata": {"name": name, "namespace": "ml", "annotations": annotations or {}}}
    if spec is not None:
        body["spec"] = spec
    return Res(SVC_PATCH, name, body)


def ing_patch(name, annotations):
    return Res(
        ING_PATCH, name, {"kind": "Ingress", "metadata": {"name": name, "namespace": "web", "annotations": annotations}}
    )


def test_patches_are_judged_on_the_fields_they_set():
    # What the patch sets wins over the patched object: internal, or no load balancer at all, passes; internet-
    # facing with ranges of its own is judged as a whole object (not allowed here; allowed with the switch).
    decided = [
        svc_patch("labels-only"),
        svc_patch("to-cluster-ip", spec={"type": "ClusterIP"}),
        svc_patch("lb-internal", {TYPE: "external", SCHEME: "internal", INTERNAL: "true"}, {"type": "LoadBalancer"}),
        svc_patch(
            "lb-public-ranged",
            {TYPE: "external", SCHEME: "internet-facing"},
            {"type": "LoadBalancer", "loadBalancerSourceRanges": RESTRICTED},
        ),
        svc_patch(
            "lb-world",
            {TYPE: "external", SCHEME: "internet-facing"},
            {"type": "LoadBalancer", "loadBalancerSourceRanges": ["0.0.0.0/0"]},
        ),
        ing_patch("alb-internal", {"alb.ingress.kubernetes.io/scheme": "internal"}),
    ]
    assert stack_flagged(POLICY, decided) == {"lb-public-ranged", "lb-world"}
    assert stack_flagged(POLICY, decided, ALLOW) == {"lb-world"}
    [(_, message)] = stack_messages(POLICY, [decided[4]])
    assert "open to the world" in message and "['0.0.0.0/0'] cover the internet" in message


@pytest.mark.parametrize(
    "patch",
    [
        # Internet-facing by the patch, with whatever source ranges the patched object already has.
        svc_patch("public-no-ranges", {TYPE: "external", SCHEME: "internet-facing"}, {"type": "LoadBalancer"}),
        ing_patch("alb-public", {"alb.ingress.kubernetes.io/scheme": "internet-facing"}),
        # Scheme annotations on a Service whose type the patch leaves to the object; ranges without a scheme.
        svc_patch("annotations-only", {SCHEME: "internet-facing"}),
        ing_patch("alb-cidrs-only", {"alb.ingress.kubernetes.io/inbound-cidrs": "10.0.0.0/8"}),
    ],
)
def test_a_patch_whose_exposure_depends_on_the_patched_object_is_undecided(patch):
    with pytest.raises(UnknownValueError) as exc:
        stack_messages(POLICY, [patch])
    assert f"{patch.name} (a patch: the exposure depends on the patched object, not in the plan)" in exc.value.message


@pytest.mark.parametrize(
    "patch",
    [
        svc_patch("ports-only", spec={"ports": [{"port": 80}]}),
        svc_patch("node-port", {SCHEME: "internet-facing"}, {"type": "NodePort"}),
        ing_patch("labels-only", {}),
        ing_patch("tls-only", {"alb.ingress.kubernetes.io/certificate-arn": "arn:aws:acm:us-east-1:1:certificate/x"}),
    ],
)
def test_a_patch_that_sets_no_exposure_field_or_no_load_balancer_passes(patch):
    assert stack_messages(POLICY, [patch]) == []


@pytest.mark.parametrize(
    "patch",
    [
        svc_patch("class-only", spec={"loadBalancerClass": "service.k8s.aws/nlb"}),
        svc_patch("legacy-internal-only", {INTERNAL: "true"}),
        svc_patch("ranges-only", spec={"loadBalancerSourceRanges": RESTRICTED}),
    ],
)
def test_a_patch_of_part_of_what_decides_is_undecided(patch):
    with pytest.raises(UnknownValueError) as exc:
        stack_messages(POLICY, [patch])
    assert exc.value.message == (
        "1 resource(s) could not be decided: stack (metadata.annotations): "
        "Services/Ingresses that cannot be decided at preview: "
        f"['ServicePatch ml/{patch.name} (a patch: the exposure depends on the patched object, not in the plan)']"
    )


def test_patch_messages_allowed_public_and_unknowns():
    ranged = svc_patch(
        "api",
        {TYPE: "external", SCHEME: "internet-facing"},
        {"type": "LoadBalancer", "loadBalancerSourceRanges": RESTRICTED},
    )
    assert stack_messages(POLICY, [ranged]) == [
        (
            "api",
            "api: ServicePatch ml/api is an internet-facing load balancer (type LoadBalancer, "
            "aws-load-balancer-scheme: internet-facing, loadBalancerSourceRanges ['203.0.113.0/24']), which this "
            "stack does not allow (allowInternetFacing is false). Fix: make it internal "
            "(service.beta.kubernetes.io/aws-load-balancer-type: external with "
            "service.beta.kubernetes.io/aws-load-balancer-scheme: internal, or "
            "alb.ingress.kubernetes.io/scheme: internal), or set allowInternetFacing for this stack.",
        )
    ]
    open_patch = svc_patch("open", {TYPE: "external", SCHEME: "internet-facing"}, {"type": "LoadBalancer"})
    allowed = {"allowedPublic": [{"namespace": "ml", "name": name, "reason": "r"} for name in ("api", "open")]}
    # Named in allowedPublic: neither judged nor undecided.
    assert stack_messages(POLICY, [ranged, open_patch], allowed) == []
    # An annotation unknown at preview: undecided by the object's own name, judged after the others.
    computed = svc_patch("computed", {SCHEME: UNKNOWN}, {"type": "LoadBalancer"})
    found: list[tuple[str, str]] = []
    with pytest.raises(UnknownValueError) as exc:
        stack_messages(POLICY, [computed, ranged], found=found)
    assert "['ServicePatch ml/computed']" in exc.value.message
    assert [name for name, _ in found] == ["api"]
