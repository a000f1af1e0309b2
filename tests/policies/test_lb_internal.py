"""lb-internal-only: which LoadBalancer Services get an internet-facing load balancer, per controller."""

from gpucloud.guard.harness import Res, flagged, resource_messages

SERVICE = "kubernetes:core/v1:Service"
TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"


def svc(name: str, annotations: dict[str, str] | None = None, type_: str = "LoadBalancer", **spec: str) -> Res:
    return Res(SERVICE, name, {"metadata": {"annotations": annotations or {}}, "spec": {"type": type_, **spec}})


SERVICES = [
    svc("lbc-internal", {TYPE: "external", SCHEME: "internal"}),
    svc("lbc-default-scheme", {TYPE: "external"}),
    svc("lbc-public", {TYPE: "external", SCHEME: "internet-facing"}),
    svc("lbc-class-public", {SCHEME: "internet-facing"}, loadBalancerClass="service.k8s.aws/nlb"),
    svc("in-tree-default"),
    svc("in-tree-internal", {"service.beta.kubernetes.io/aws-load-balancer-internal": "true"}),
    svc("cluster-ip", type_="ClusterIP"),
]


def test_internet_facing_load_balancers_are_flagged_per_controller() -> None:
    assert flagged("lb-internal-only", SERVICES) == {"lbc-public", "lbc-class-public", "in-tree-default"}
    assert flagged("lb-internal-only", SERVICES, {"allowInternetFacing": True}) == set()
    [message] = resource_messages("lb-internal-only", SERVICES[2])
    assert "internet-facing load balancer" in message and f"{SCHEME}: internal" in message
