"""Kubernetes guardrails: Pod Security Standards on every pod-bearing kind (registered, CRDs, chart-rendered) and
public load balancers; exact objects flagged, messages, exemptions and undecided cases."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import k8s
from gpucloud.policies.gpucloud_policies.security.k8s_pod_security import violations
from gpucloud.policies.gpucloud_policies.security.k8s_public_lb import is_world

POD = "kubernetes:core/v1:Pod"
DEPLOY = "kubernetes:apps/v1:Deployment"
DS = "kubernetes:apps/v1:DaemonSet"
STS = "kubernetes:apps/v1:StatefulSet"
RS = "kubernetes:apps/v1:ReplicaSet"
JOB = "kubernetes:batch/v1:Job"
CRON = "kubernetes:batch/v1:CronJob"
MPI = "kubernetes:kubeflow.org/v2beta1:MPIJob"
PYT = "kubernetes:kubeflow.org/v1:PyTorchJob"
SVC = "kubernetes:core/v1:Service"
ING = "kubernetes:networking.k8s.io/v1:Ingress"
CM = "kubernetes:core/v1:ConfigMap"
RELEASE = "kubernetes:helm.sh/v3:Release"

SAFE = {"containers": [{"name": "app", "image": "app:1"}]}
RESTRICTED = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "app",
            "image": "app:1",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
    "volumes": [{"name": "cfg", "configMap": {"name": "c"}}],
}


def template(spec):
    return {"template": {"metadata": {"labels": {"app": "x"}}, "spec": spec}}


def workload(type_, name, spec, ns="ml"):
    kind = type_.rsplit(":", 1)[-1]
    meta = {"name": name, "namespace": ns}
    if kind == "Pod":
        return Res(type_, name, {"kind": kind, "metadata": meta, "spec": spec})
    if kind == "CronJob":
        body = {"schedule": "@daily", "jobTemplate": {"spec": template(spec)}}
        return Res(type_, name, {"kind": kind, "metadata": meta, "spec": body})
    return Res(type_, name, {"kind": kind, "metadata": meta, "spec": template(spec)})


@pytest.mark.parametrize(
    ("field", "spec", "expected"),
    [
        ("hostNetwork", {**SAFE, "hostNetwork": True}, "hostNetwork: true shares the node's namespaces"),
        ("hostPID", {**SAFE, "hostPID": True}, "hostPID: true shares the node's namespaces"),
        ("hostIPC", {**SAFE, "hostIPC": "true"}, "hostIPC: true shares the node's namespaces"),
        (
            "privileged",
            {"initContainers": [{"name": "i", "securityContext": {"privileged": True}}], **SAFE},
            "initContainers[0].securityContext.privileged: true",
        ),
        (
            "hostPath",
            {**SAFE, "volumes": [{"name": "root", "hostPath": {"path": "/"}}]},
            "volumes[0] (root) mounts hostPath /",
        ),
        (
            "hostPort",
            {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
            "containers[0].ports[0].hostPort 8080",
        ),
        (
            "capabilities",
            {"containers": [{"name": "c", "securityContext": {"capabilities": {"add": ["CAP_SYS_ADMIN", "CHOWN"]}}}]},
            "containers[0].securityContext.capabilities.add ['SYS_ADMIN'] beyond the baseline set",
        ),
        (
            "seccomp",
            {**SAFE, "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            "securityContext.seccompProfile.type: Unconfined",
        ),
        (
            "sysctls",
            {**SAFE, "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
            "securityContext.sysctls[0] kernel.msgmax is not in the safe set",
        ),
        (
            "procMount",
            {"containers": [{"name": "c", "securityContext": {"procMount": "Unmasked"}}]},
            "containers[0].securityContext.procMount: Unmasked",
        ),
        (
            "selinux",
            {**SAFE, "securityContext": {"seLinuxOptions": {"type": "spc_t"}}},
            "securityContext.seLinuxOptions.type 'spc_t' is not a container type",
        ),
        (
            "hostProcess",
            {**SAFE, "securityContext": {"windowsOptions": {"hostProcess": True}}},
            "securityContext.windowsOptions.hostProcess: true",
        ),
        (
            "apparmor",
            {"containers": [{"name": "c", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]},
            "containers[0].securityContext.appArmorProfile.type: Unconfined",
        ),
    ],
)
def test_baseline_controls(field, spec, expected):
    assert violations(spec, "baseline") == [expected]


def test_baseline_allows_the_default_set_and_safe_values():
    spec = {
        "containers": [
            {
                "name": "c",
                "ports": [{"containerPort": 80, "hostPort": 0}],
                "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "chown"]}, "procMount": "Default"},
            }
        ],
        "securityContext": {
            "sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}],
            "seLinuxOptions": {"type": "container_t", "level": "s0:c1"},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "hostNetwork": False,
        "volumes": [{"name": "e", "emptyDir": {}}],
    }
    assert violations(spec, "baseline") == []
    assert violations({**SAFE, "securityContext": {"seLinuxOptions": {"user": "system_u"}}}, "baseline") == [
        "securityContext.seLinuxOptions.user is set"
    ]


def test_restricted_controls():
    assert violations(RESTRICTED, "restricted") == []
    assert violations(SAFE, "restricted") == [
        "containers[0].securityContext.allowPrivilegeEscalation is not false",
        "containers[0]: runAsNonRoot is not true (pod or container)",
        "containers[0]: seccompProfile is not RuntimeDefault or Localhost (pod or container)",
        "containers[0].securityContext.capabilities.drop does not include ALL",
    ]
    loose = {
        "securityContext": {"runAsUser": 0},
        "containers": [
            {
                "name": "c",
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "runAsNonRoot": True,
                    "runAsUser": 0,
                    "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
                    "capabilities": {"drop": ["all"], "add": ["NET_BIND_SERVICE", "NET_RAW"]},
                },
            }
        ],
        "volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}, {"name": "p", "persistentVolumeClaim": {}}],
    }
    assert violations(loose, "restricted") == [
        "containers[0].securityContext.capabilities.add ['NET_RAW'] beyond the baseline set",
        "volumes[0] (n) is of type nfs, not allowed by restricted",
        "securityContext.runAsUser: 0",
        "containers[0].securityContext.runAsUser: 0",
        "containers[0].securityContext.capabilities.add ['NET_RAW']: restricted allows only NET_BIND_SERVICE",
    ]
    # A container may override the pod's runAsNonRoot with false.
    override = {
        **RESTRICTED,
        "containers": [
            {**RESTRICTED["containers"][0], "securityContext": {**RESTRICTED["containers"][0]["securityContext"]}}
        ],
    }
    override["containers"][0]["securityContext"]["runAsNonRoot"] = False
    override["containers"][0]["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    assert violations(override, "restricted") == [
        "containers[0].securityContext.seccompProfile.type: Unconfined",
        "containers[0]: runAsNonRoot is not true (pod or container)",
        "containers[0]: seccompProfile is not RuntimeDefault or Localhost (pod or container)",
    ]


BAD = {**SAFE, "hostNetwork": True}


def test_every_pod_bearing_kind_is_checked():
    rs = [workload(t, f"bad-{t.rsplit(':', 1)[-1].lower()}", BAD) for t in (POD, DEPLOY, DS, STS, RS, JOB, CRON)]
    rs += [workload(t, f"ok-{t.rsplit(':', 1)[-1].lower()}", SAFE) for t in (POD, DEPLOY, DS, CRON)]
    mpi = {
        "kind": "MPIJob",
        "metadata": {"name": "nccl", "namespace": "ml"},
        "spec": {"mpiReplicaSpecs": {"Launcher": template(SAFE), "Worker": template({**SAFE, "hostIPC": True})}},
    }
    pyt = {
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {"pytorchReplicaSpecs": {"Master": template(SAFE), "Worker": {"replicas": 2, **template(SAFE)}}},
    }
    rs += [Res(MPI, "mpi", mpi), Res(PYT, "pyt", pyt), Res(CM, "cm", {"data": {"containers": "x"}})]
    assert stack_flagged("k8s-pod-security", rs) == {
        "bad-pod",
        "bad-deployment",
        "bad-daemonset",
        "bad-statefulset",
        "bad-replicaset",
        "bad-job",
        "bad-cronjob",
        "mpi",
    }
    [(_name, message)] = stack_messages("k8s-pod-security", [Res(MPI, "mpi", mpi)])
    assert message == (
        "mpi: MPIJob ml/nccl breaks the baseline Pod Security Standard (Pod Security Standards (Kubernetes 1.34)): "
        "spec.mpiReplicaSpecs.Worker.template.spec: hostIPC: true shares the node's namespaces. Fix: drop the host "
        "access and privileges, or, for a system daemon that needs them, add "
        '{"namespace": "ml", "name": "nccl", "images": [...], "reason": "..."} to exemptions.'
    )


def test_level_and_exemptions():
    rs = [
        workload(DS, "device-plugin", BAD, ns="kube-system"),
        workload(DS, "device-plugin", BAD, ns="ml"),
        workload(JOB, "dcgm-diag-a", BAD, ns="gpu-acceptance"),
        workload(JOB, "dcgm-diag-b", BAD, ns="gpu-acceptance"),
        workload(DEPLOY, "dcgm-diag-c", BAD, ns="gpu-acceptance"),
        workload(DEPLOY, "app", SAFE),
    ]
    exemptions = [
        {"namespace": "kube-system", "name": "device-plugin", "images": ["app"], "reason": "registers devices"},
        {
            "namespace": "gpu-acceptance",
            "name": "dcgm-diag-*",
            "kind": "Job",
            "images": ["docker.io/library/app"],
            "reason": "SYS_ADMIN",
        },
    ]
    assert stack_flagged("k8s-pod-security", rs) == {"device-plugin", "dcgm-diag-a", "dcgm-diag-b", "dcgm-diag-c"}
    found = stack_messages("k8s-pod-security", rs, {"exemptions": exemptions})
    assert [n for n, _ in found] == ["device-plugin", "dcgm-diag-c"]
    assert "DaemonSet ml/device-plugin" in found[0][1]
    assert stack_flagged("k8s-pod-security", rs, {"exemptions": exemptions, "level": "restricted"}) == {
        "device-plugin",
        "dcgm-diag-c",
        "app",
    }
    # Bound to the images it exempts: the same name running another image is judged like any pod.
    miner = {**BAD, "containers": [{"name": "x", "image": "evil.io/miner:1"}]}
    impostor = workload(DS, "device-plugin", miner, ns="kube-system")
    [(_, message)] = stack_messages("k8s-pod-security", [impostor], {"exemptions": exemptions})
    assert "it runs ['evil.io/miner:1'], not the exempted images ['app']" in message
    # A pinned digest binds the entry to that digest.
    pinned = [{**exemptions[0], "images": ["app@sha256:" + "a" * 64]}]
    assert stack_flagged("k8s-pod-security", rs[:1], {"exemptions": pinned}) == {"device-plugin"}


def test_unknown_pod_field_is_undecided_for_that_object_only():
    rs = [workload(DEPLOY, "computed", {**SAFE, "hostNetwork": UNKNOWN}), workload(DEPLOY, "bad", BAD)]
    found: list[str] = []
    with pytest.raises(UnknownValueError) as exc:
        stack_messages("k8s-pod-security", rs)
    assert "Deployment ml/computed" in exc.value.message
    # The decidable object is still evaluated first: reported through the unknown only after the loop.
    rs2 = [workload(DEPLOY, "bad", BAD)]
    found = [n for n, _ in stack_messages("k8s-pod-security", rs2)]
    assert found == ["bad"]


def test_chart_rendered_objects_are_checked_and_unseen_releases_are_undecided():
    release = Res(RELEASE, "addons", {"chart": "x"})
    with pytest.raises(UnknownValueError) as exc:
        stack_messages("k8s-pod-security", [release])
    assert exc.value.message.endswith(
        "pod specs with values unknown at preview, or charts whose objects the pack cannot see: "
        "['Release addons (rendered objects not visible)']"
    )
    owner = "urn:pulumi:test::test::kubernetes:helm.sh/v3:Release::addons"
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "exporter", "namespace": "monitoring"},
        "spec": template({**SAFE, "hostPID": True}),
    }
    svc = {
        "kind": "Service",
        "metadata": {"name": "ui", "namespace": "monitoring"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
    }
    token = k8s.set_derived([(owner, "chart x@1.0", ds), (owner, "chart x@1.0", svc)])
    try:
        [(name, message)] = stack_messages("k8s-pod-security", [release])
        assert name == "addons"
        assert message.startswith("addons: DaemonSet monitoring/exporter (from chart x@1.0) breaks the baseline")
        entry = {"namespace": "monitoring", "name": "exporter", "images": ["app"], "reason": "node metrics"}
        exempt = {"exemptions": [entry]}
        assert stack_messages("k8s-pod-security", [release], exempt) == []
        # Bound to the chart: the Release renders chart x from no repository, not the exempted one.
        bound = {"exemptions": [{**entry, "chart": {"name": "x", "repository": "https://charts.example.com"}}]}
        [(_, bound_message)] = stack_messages("k8s-pod-security", [release], bound)
        assert "An exemption names it but does not apply: it comes from chart x of ?, not the exempted chart x of " in (
            bound_message
        )
        assert stack_flagged("k8s-no-public-load-balancer", [release]) == {"addons"}
    finally:
        k8s.reset_derived(token)


def svc(name, annotations=None, ranges=None, type_="LoadBalancer", cls=None):
    spec = {"type": type_, "ports": [{"port": 443}]}
    if ranges is not None:
        spec["loadBalancerSourceRanges"] = ranges
    if cls:
        spec["loadBalancerClass"] = cls
    return Res(
        SVC, name, {"kind": "Service", "metadata": {"name": name, "annotations": annotations or {}}, "spec": spec}
    )


A = "service.beta.kubernetes.io/"


def test_public_load_balancer_services():
    rs = [
        svc("in-tree-default"),
        svc("in-tree-internal", {A + "aws-load-balancer-internal": "true"}),
        svc("lbc-default", {A + "aws-load-balancer-type": "external"}),
        svc(
            "lbc-public", {A + "aws-load-balancer-type": "external", A + "aws-load-balancer-scheme": "internet-facing"}
        ),
        svc("class-public", {A + "aws-load-balancer-scheme": "internet-facing"}, cls="service.k8s.aws/nlb"),
        svc("public-restricted", {A + "aws-load-balancer-scheme": "internet-facing"}, ranges=["203.0.113.0/24"]),
        svc("public-split-world", {A + "aws-load-balancer-scheme": "internet-facing"}, ["0.0.0.0/1", "128.0.0.0/1"]),
        svc(
            "public-ann-world",
            {A + "aws-load-balancer-scheme": "internet-facing", A + "load-balancer-source-ranges": "::/0"},
        ),
        svc("cluster-ip", {A + "aws-load-balancer-scheme": "internet-facing"}, type_="ClusterIP"),
        svc("explicit-internal", {A + "aws-load-balancer-scheme": "internal"}),
    ]
    # explicit-internal: aws-load-balancer-scheme alone is internal only where the controller's Service webhook
    # runs; the in-tree provider (gpucloud's platform turns the webhook off) ignores it.
    world = {"in-tree-default", "lbc-public", "class-public", "public-split-world", "public-ann-world"}
    world.add("explicit-internal")
    assert stack_flagged("k8s-no-public-load-balancer", rs, {"allowInternetFacing": True}) == world
    assert stack_flagged("k8s-no-public-load-balancer", rs) == world | {"public-restricted"}
    allowed = {"allowedPublic": [{"namespace": "default", "name": "lbc-public", "reason": "public API"}]}
    assert "lbc-public" not in stack_flagged("k8s-no-public-load-balancer", rs, allowed)
    [(_, message)] = stack_messages("k8s-no-public-load-balancer", [rs[3]])
    assert message == (
        "lbc-public: Service default/lbc-public is an internet-facing load balancer open to the world (type "
        "LoadBalancer, aws-load-balancer-scheme: internet-facing, no loadBalancerSourceRanges). Fix: make it "
        "internal (aws-load-balancer-scheme / alb.ingress.kubernetes.io/scheme: internal) or restrict "
        "loadBalancerSourceRanges / inbound-cidrs to known networks."
    )


def test_public_ingresses():
    def ing(name, ann):
        return Res(ING, name, {"kind": "Ingress", "metadata": {"name": name, "namespace": "web", "annotations": ann}})

    s = "alb.ingress.kubernetes.io/scheme"
    c = "alb.ingress.kubernetes.io/inbound-cidrs"
    rs = [
        ing("public", {s: "internet-facing"}),
        ing("internal", {s: "internal"}),
        ing("default", {}),
        ing("restricted", {s: "internet-facing", c: "10.0.0.0/8, 203.0.113.0/24"}),
        ing("world", {s: "internet-facing", c: "0.0.0.0/0"}),
        ing("typo", {s: "internet-facing", c: "10.0.0.0/33"}),
    ]
    allow = {"allowInternetFacing": True}
    assert stack_flagged("k8s-no-public-load-balancer", rs, allow) == {"public", "world", "typo"}
    assert stack_flagged("k8s-no-public-load-balancer", rs) == {"public", "world", "typo", "restricted"}
    with pytest.raises(UnknownValueError):
        stack_messages("k8s-no-public-load-balancer", [ing("u", {s: UNKNOWN})])


def test_is_world():
    assert is_world(["0.0.0.0/0"])
    assert is_world(["0.0.0.0/1", "128.0.0.0/1"])
    assert is_world(["::/1", "8000::/1"])
    assert is_world(["0.0.0.0/2", "64.0.0.0/2"])
    # The pack's one notion of the world (readers/reach.py): a union covering 1 % of the public space.
    assert is_world(["0.0.0.0/2", "64.0.0.0/3"])
    assert not is_world(["8.0.0.0/8"])
    assert not is_world(["10.0.0.0/8", "::1/128"])
    assert not is_world([])


def test_offline_evaluation_hands_chart_objects_to_the_pack():
    from gpucloud.conformance import DerivedObject
    from gpucloud.guard import evaluate
    from gpucloud.plan.model import Plan, ResourceRecord

    urn = "urn:pulumi:prod::p::kubernetes:helm.sh/v3:Release::monitoring"
    release = ResourceRecord(urn, RELEASE, "monitoring", None, True, [], {"chart": "exporter", "namespace": "mon"})
    plan = Plan("p", "prod", [release])
    only = {"all": "disabled", "k8s-pod-security": "mandatory"}
    before = evaluate(plan, only)
    assert before.violations == []
    assert [n["policy"] for n in before.not_evaluated] == ["k8s-pod-security"]
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "exporter", "namespace": "mon"},
        "spec": template({**SAFE, "hostNetwork": True}),
    }
    plan.derived = [DerivedObject(urn, "chart exporter@1.2.3", ds)]
    after = evaluate(plan, only)
    assert after.not_evaluated == []
    assert [(v["policy"], v["urn"], v["enforcement"]) for v in after.violations] == [
        ("k8s-pod-security", urn, "mandatory")
    ]
    assert "DaemonSet mon/exporter (from chart exporter@1.2.3)" in after.violations[0]["message"]
    # The hand-over is scoped to the evaluation: nothing leaks into the next one.
    assert k8s.derived() is None


def test_is_world_boundaries():
    import ipaddress

    # The shared threshold (readers/reach.py DEFAULT_SHARE, 1 % of the public space of a family): a /7 of
    # public IPv4 is just under it, two of them over it.
    assert is_world(["0.0.0.0/1"])
    assert is_world(["::/1"])
    short = [
        str(n) for n in ipaddress.summarize_address_range(*map(ipaddress.ip_address, ("0.0.0.0", "127.255.255.254")))
    ]
    assert is_world(short)
    assert not is_world(["2.0.0.0/7"])
    assert is_world(["2.0.0.0/7", "4.0.0.0/7"])
    # Non-adjacent ranges add up.
    assert is_world(["0.0.0.0/2", "128.0.0.0/2"])
    assert is_world(["::/2", "8000::/2"])
    assert not is_world(["2001:db8::/120"])
    # Host bits set are accepted as the controller accepts them; garbage counts as the world.
    assert not is_world(["10.0.0.1/8"])
    assert is_world(["10.0.0.0/33"])


def test_load_balancer_scheme_rules_and_messages():
    rs = [
        svc("class-default", cls="service.k8s.aws/nlb"),
        svc("legacy-internal-cidr", {A + "aws-load-balancer-internal": "0.0.0.0/0"}),
        svc(
            "conflicting", {A + "aws-load-balancer-internal": "true", A + "aws-load-balancer-scheme": "internet-facing"}
        ),
        svc(
            "ann-restricted",
            {A + "aws-load-balancer-scheme": "internet-facing", A + "load-balancer-source-ranges": "203.0.113.0/24"},
        ),
        svc("nlb-ip-default", {A + "aws-load-balancer-type": "nlb-ip"}),
    ]
    assert stack_flagged("k8s-no-public-load-balancer", rs, {"allowInternetFacing": True}) == {"conflicting"}
    assert stack_flagged("k8s-no-public-load-balancer", rs) == {"conflicting", "ann-restricted"}
    [(_, in_tree)] = stack_messages("k8s-no-public-load-balancer", [svc("legacy")])
    assert in_tree.startswith(
        "legacy: Service default/legacy is an internet-facing load balancer open to the world (type LoadBalancer, "
        "the in-tree AWS provider makes LoadBalancer Services internet-facing without aws-load-balancer-internal, "
        "no loadBalancerSourceRanges). Fix:"
    )
    [(_, conflicting)] = stack_messages("k8s-no-public-load-balancer", [rs[2]])
    assert "(type LoadBalancer, aws-load-balancer-scheme: internet-facing, no loadBalancerSourceRanges)" in conflicting
    split = svc("split", {A + "aws-load-balancer-scheme": "internet-facing"}, ["0.0.0.0/1", "128.0.0.0/1"])
    [(_, message)] = stack_messages("k8s-no-public-load-balancer", [split])
    assert "source ranges ['0.0.0.0/1', '128.0.0.0/1'] cover the internet)" in message
    # An allowance names namespace and name together.
    other_ns = {"allowedPublic": [{"namespace": "web", "name": "legacy", "reason": "x"}]}
    assert stack_flagged("k8s-no-public-load-balancer", [svc("legacy")], other_ns) == {"legacy"}


def test_ingress_messages():
    def ing(ann):
        return Res(ING, "nb", {"kind": "Ingress", "metadata": {"name": "nb", "namespace": "web", "annotations": ann}})

    s = "alb.ingress.kubernetes.io/scheme"
    [(_, bare)] = stack_messages("k8s-no-public-load-balancer", [ing({s: "internet-facing"})])
    assert "(alb.ingress.kubernetes.io/scheme: internet-facing, no alb.ingress.kubernetes.io/inbound-cidrs)" in bare
    world = ing({s: "internet-facing", "alb.ingress.kubernetes.io/inbound-cidrs": "0.0.0.0/0"})
    [(_, message)] = stack_messages("k8s-no-public-load-balancer", [world])
    assert "(alb.ingress.kubernetes.io/scheme: internet-facing, inbound-cidrs ['0.0.0.0/0'] cover the internet)" in (
        message
    )


def test_objects_names_namespaces_and_kinds():
    from pulumi_policy import PolicyResource

    from gpucloud.guard.harness import options, urn

    def pr(type_, name, props):
        return PolicyResource(type_, props, urn(type_, name), name, options(), None, None, [], {})

    rs = [
        pr(DEPLOY, "autonamed", {"spec": {}}),
        pr(DEPLOY, "named", {"metadata": {"name": "api", "namespace": "web"}}),
        pr("kubernetes:core/v1:Namespace", "ns", {"metadata": {"name": "ml", "namespace": "ignored"}}),
        pr(RELEASE, "chart", {"chart": "x"}),
        pr("kubernetes:yaml:ConfigFile", "yaml", {}),
        pr("aws:s3/bucket:Bucket", "bucket", {}),
    ]
    got = [(o.kind, o.namespace, o.name, o.urn.rsplit("::", 1)[-1], o.source) for o in k8s.objects(rs)]
    assert got == [
        ("Deployment", "default", "autonamed", "autonamed", None),
        ("Deployment", "web", "api", "named", None),
        ("Namespace", "", "ml", "ns", None),
    ]
    assert [o.name for o in k8s.objects(rs, {"Namespace"})] == ["ml"]
    token = k8s.set_derived(
        [
            ("urn:x::chart", "chart c@1", {"kind": "ClusterRole", "metadata": {"name": "r", "namespace": "n"}}),
            ("urn:x::chart", "chart c@1", {"kind": "Service", "metadata": {"name": "s"}}),
            ("urn:x::chart", "chart c@1", {"metadata": {"name": "no-kind"}}),
        ]
    )
    try:
        derived = [(o.kind, o.namespace, o.name, o.source, o.ref) for o in k8s.objects([], {"Service", "ClusterRole"})]
        assert derived == [
            ("ClusterRole", "", "r", "chart c@1", "ClusterRole r (from chart c@1)"),
            ("Service", "default", "s", "chart c@1", "Service default/s (from chart c@1)"),
        ]
        assert k8s.unseen_releases(rs) == []
    finally:
        k8s.reset_derived(token)
    assert [r.name for r in k8s.unseen_releases(rs)] == ["chart"]


def test_pod_specs_by_kind_and_by_search():
    def obj(kind, body):
        return k8s.KObject("u", kind, "ns", "n", body)

    pod = {"containers": [{"name": "c"}]}
    assert k8s.pod_specs(obj("Pod", {"spec": pod})) == [("spec", pod)]
    assert k8s.pod_specs(obj("Job", {"spec": {"template": {"spec": pod}}})) == [("spec.template.spec", pod)]
    cron = {"spec": {"jobTemplate": {"spec": {"template": {"spec": pod}}}}}
    assert k8s.pod_specs(obj("CronJob", cron)) == [("spec.jobTemplate.spec.template.spec", pod)]
    assert k8s.pod_specs(obj("PodTemplate", {"template": {"spec": pod}})) == [("template.spec", pod)]
    assert k8s.pod_specs(obj("Deployment", {"spec": {"template": {"spec": "x"}}})) == []
    # Kinds that cannot hold pods are never searched, even when a field is called "containers".
    assert k8s.pod_specs(obj("ConfigMap", {"spec": {"x": pod}})) == []
    ray = {
        "spec": {
            "headGroupSpec": {"template": {"spec": pod}},
            "workerGroupSpecs": [{"template": {"spec": pod}}, {"template": {"metadata": {"x": pod}}}],
            "status": {"containers": []},
        },
        "status": pod,
    }
    assert [p for p, _ in k8s.pod_specs(obj("RayCluster", ray))] == [
        "spec.headGroupSpec.template.spec",
        "spec.workerGroupSpecs[0].template.spec",
    ]
    # The finder walks the whole object to depth 10 below its top-level keys.
    deep = pod
    for i in range(11):
        deep = {f"l{i}": deep}
    assert k8s.pod_specs(obj("Deep", {"spec": deep})) == []
    assert len(k8s.pod_specs(obj("Deep", {"spec": deep["l10"]}))) == 1


def test_pod_level_apparmor_and_container_host_process():
    assert violations({**SAFE, "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}, "baseline") == [
        "securityContext.appArmorProfile.type: Unconfined"
    ]
    assert violations({**SAFE, "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}, "baseline") == []
    windows = {"containers": [{"name": "w", "securityContext": {"windowsOptions": {"hostProcess": True}}}]}
    assert violations(windows, "baseline") == ["containers[0].securityContext.windowsOptions.hostProcess: true"]
    not_host = {"containers": [{"name": "w", "securityContext": {"windowsOptions": {"hostProcess": False}}}]}
    assert violations(not_host, "baseline") == []
