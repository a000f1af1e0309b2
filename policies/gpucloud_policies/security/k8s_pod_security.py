"""GC-SEC-146 k8s-pod-security: every pod the plan would run meets the Pod Security Standards level.

The controls are the upstream Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards,
Kubernetes 1.34): *baseline* (host namespaces, privileged, capabilities beyond the default set, hostPath, host
ports, HostProcess, AppArmor, SELinux, /proc mount, seccomp Unconfined, unsafe sysctls) and *restricted* (baseline
plus volume types, allowPrivilegeEscalation false, runAsNonRoot, runAsUser != 0, seccomp RuntimeDefault/Localhost,
drop ALL and add at most NET_BIND_SERVICE). Every pod-bearing kind is checked, registered or rendered from a chart
(see ``k8s.py``: the pod-spec finder also finds pods in custom resources, List items and YAML strings). The
AppArmor control reads the field (``appArmorProfile.type``) and the annotation
(``container.apparmor.security.beta.kubernetes.io/<container>``: only ``runtime/default`` and ``localhost/*``).

Named system daemons that need the host (device plugins, node exporters, log shippers) are exempted in the
config, each with a reason, and each exemption is bound to what it exempts, not to a name anyone can reuse:
namespace, name (a glob) and kind, *and* the image repositories its containers run (``images``; an entry with
``@sha256:...`` also requires that digest) and, where the daemon comes from a chart, the chart's name and
repository (``chart``: the owning Release's ``chart`` and ``repositoryOpts.repo``). A privileged DaemonSet named
like the log shipper that runs another image, or comes from another chart, is judged like any other pod. Entries
that match nothing the plan renders are reported by ``k8s-pod-security-exemptions`` (a warning).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Severity,
    StackReport,
    UnknownValueError,
    get,
    integer,
    keys,
    maps,
    strings,
    text,
    truthy,
    unknown,
)
from ..k8s import APPARMOR_PREFIX, KObject, image_digest, image_repository, images, objects, pods, unseen_releases

SOURCE = "Pod Security Standards (Kubernetes 1.34)"

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _cap_name(c: str) -> str:
    # The kubelet accepts "CAP_SYS_ADMIN" and "sys_admin" alike; PSS compares the canonical name.
    c = c.strip().upper()
    return c[4:] if c.startswith("CAP_") else c


def _containers(spec: Any) -> list[tuple[str, Mapping[str, Any]]]:
    return [(f"{lst}[{i}]", c) for lst in CONTAINER_LISTS for i, c in enumerate(maps(get(spec, lst)))]


def _baseline(spec: Any) -> list[str]:
    out: list[str] = []
    for f in ("hostNetwork", "hostPID", "hostIPC"):
        if truthy(get(spec, f)):
            out.append(f"{f}: true shares the node's namespaces")
    psc = get(spec, "securityContext")
    if truthy(get(psc, "windowsOptions", "hostProcess")):
        out.append("securityContext.windowsOptions.hostProcess: true")
    for i, v in enumerate(maps(get(spec, "volumes"))):
        if get(v, "hostPath") is not None:
            out.append(f"volumes[{i}] ({text(get(v, 'name'))}) mounts hostPath {text(get(v, 'hostPath', 'path'))}")
    out += _seccomp_unconfined("securityContext", psc) + _selinux("securityContext", psc)
    for i, s in enumerate(maps(get(psc, "sysctls"))):
        if text(get(s, "name")) not in SAFE_SYSCTLS:
            out.append(f"securityContext.sysctls[{i}] {text(get(s, 'name'))} is not in the safe set")
    if text(get(psc, "appArmorProfile", "type")) == "Unconfined":
        out.append("securityContext.appArmorProfile.type: Unconfined")
    for where, c in _containers(spec):
        sc = get(c, "securityContext")
        if truthy(get(sc, "privileged")):
            out.append(f"{where}.securityContext.privileged: true")
        if truthy(get(sc, "windowsOptions", "hostProcess")):
            out.append(f"{where}.securityContext.windowsOptions.hostProcess: true")
        extra = sorted({_cap_name(a) for a in strings(get(sc, "capabilities", "add"))} - BASELINE_CAPABILITIES)
        if extra:
            out.append(f"{where}.securityContext.capabilities.add {extra} beyond the baseline set")
        for j, p in enumerate(maps(get(c, "ports"))):
            if integer(get(p, "hostPort"), 0):
                out.append(f"{where}.ports[{j}].hostPort {integer(get(p, 'hostPort'))}")
        if text(get(sc, "procMount"), "Default") != "Default":
            out.append(f"{where}.securityContext.procMount: {text(get(sc, 'procMount'))}")
        if text(get(sc, "appArmorProfile", "type")) == "Unconfined":
            out.append(f"{where}.securityContext.appArmorProfile.type: Unconfined")
        out += _seccomp_unconfined(f"{where}.securityContext", sc) + _selinux(f"{where}.securityContext", sc)
    return out


def _seccomp_unconfined(where: str, sc: Any) -> list[str]:
    return (
        [f"{where}.seccompProfile.type: Unconfined"] if text(get(sc, "seccompProfile", "type")) == "Unconfined" else []
    )


def _selinux(where: str, sc: Any) -> list[str]:
    opts = get(sc, "seLinuxOptions")
    if not isinstance(opts, Mapping):
        return []
    out = []
    if text(get(opts, "type")) not in SELINUX_TYPES:
        out.append(f"{where}.seLinuxOptions.type {text(get(opts, 'type'))!r} is not a container type")
    for f in ("user", "role"):
        if text(get(opts, f)):
            out.append(f"{where}.seLinuxOptions.{f} is set")
    return out


def _restricted(spec: Any) -> list[str]:
    out: list[str] = []
    for i, v in enumerate(maps(get(spec, "volumes"))):
        kinds = [k for k in keys(v) if k != "name"]
        bad = [k for k in kinds if k not in RESTRICTED_VOLUMES and k != "hostPath"]
        if bad:
            out.append(f"volumes[{i}] ({text(get(v, 'name'))}) is of type {bad[0]}, not allowed by restricted")
    psc = get(spec, "securityContext")
    pod_nonroot = truthy(get(psc, "runAsNonRoot"))
    pod_seccomp = text(get(psc, "seccompProfile", "type")) in ("RuntimeDefault", "Localhost")
    if integer(get(psc, "runAsUser"), None) == 0:
        out.append("securityContext.runAsUser: 0")
    for where, c in _containers(spec):
        sc = get(c, "securityContext")
        if get(sc, "allowPrivilegeEscalation") is None or truthy(get(sc, "allowPrivilegeEscalation")):
            out.append(f"{where}.securityContext.allowPrivilegeEscalation is not false")
        nonroot = get(sc, "runAsNonRoot")
        if not (truthy(nonroot) or (pod_nonroot and nonroot is None)):
            out.append(f"{where}: runAsNonRoot is not true (pod or container)")
        if integer(get(sc, "runAsUser"), None) == 0:
            out.append(f"{where}.securityContext.runAsUser: 0")
        ctype = text(get(sc, "seccompProfile", "type"))
        if not (ctype in ("RuntimeDefault", "Localhost") or (pod_seccomp and not ctype)):
            out.append(f"{where}: seccompProfile is not RuntimeDefault or Localhost (pod or container)")
        caps = get(sc, "capabilities")
        if "ALL" not in {_cap_name(d) for d in strings(get(caps, "drop"))}:
            out.append(f"{where}.securityContext.capabilities.drop does not include ALL")
        extra = sorted({_cap_name(a) for a in strings(get(caps, "add"))} - {"NET_BIND_SERVICE"})
        if extra:
            out.append(f"{where}.securityContext.capabilities.add {extra}: restricted allows only NET_BIND_SERVICE")
    return out


def apparmor_annotations(annotations: Mapping[str, Any]) -> list[str]:
    """The AppArmor annotations PSS baseline refuses: anything but unset, ``runtime/default`` or ``localhost/*``."""
    out = []
    for k in keys(annotations):
        if k.startswith(APPARMOR_PREFIX):
            v = text(annotations[k]).strip()
            if v and v != "runtime/default" and not v.startswith("localhost/"):
                out.append(f"metadata.annotations[{k}]: {v}")
    return out


def violations(spec: Any, level: str, annotations: Mapping[str, Any] | None = None) -> list[str]:
    """The PSS controls a pod spec breaks at ``level`` ("baseline" or "restricted")."""
    out = apparmor_annotations(annotations or {}) + _baseline(spec)
    if level == "restricted":
        out += _restricted(spec)
    return out


def _chart_of(obj: KObject, resources: list[Any]) -> tuple[str, str] | None:
    """(chart name, repository) of the Release that renders the object; None for a registered object."""
    if not obj.source or not obj.source.startswith("chart "):
        return None
    name = obj.source[len("chart ") :].rsplit("@", 1)[0]
    repo = ""
    for r in resources:
        if r.urn == obj.urn:
            repo = text(get(r.props, "repositoryOpts", "repo"))
            chart = text(get(r.props, "chart"))
            if chart.startswith("oci://"):
                repo, _, name = chart.rpartition("/")
            break
    return name, repo.rstrip("/")


def _images_match(found: list[str], allowed: list[str]) -> bool:
    """Every image the object runs is one of the entry's repositories (and its digest, where the entry pins one)."""
    if not found:
        return False
    for image in found:
        ok = False
        for a in allowed:
            if image_repository(image) != image_repository(a):
                continue
            pinned = image_digest(a)
            if pinned is None or image_digest(image) == pinned:
                ok = True
                break
        if not ok:
            return False
    return True


def binding(obj: KObject, e: Mapping[str, Any], resources: list[Any]) -> str | None:
    """None when the entry exempts the object; else why not (names it matches, what it runs does not)."""
    # A name may be a glob ("dcgm-diag-*") for one workload stamped out per pool; the namespace is exact.
    if e.get("namespace") != obj.namespace or not fnmatchcase(obj.name, str(e.get("name"))):
        return "name"
    kind = e.get("kind")
    if kind and kind != obj.kind:
        return "name"
    allowed = [str(i) for i in e.get("images") or [] if isinstance(i, str)]
    found = images(obj)
    if not _images_match(found, allowed):
        return f"runs {sorted(set(found))}, not the exempted images {allowed}"
    chart = e.get("chart")
    if isinstance(chart, Mapping):
        got = _chart_of(obj, resources)
        want = (str(chart.get("name", "")), str(chart.get("repository", "")).rstrip("/"))
        if got != want:
            shown = "is not rendered from a chart" if got is None else f"comes from chart {got[0]} of {got[1] or '?'}"
            return f"{shown}, not the exempted chart {want[0]} of {want[1]}"
    return None


# What the last k8s-pod-security run matched, for k8s-pod-security-exemptions (the next guardrail in the
# registry, which has no access to this policy's config): the plan it judged (its URNs) and each entry whose
# namespace the plan uses, with how many objects it exempted. Keyed by the plan, so a later evaluation without
# this policy reads nothing stale.
_MATCHED: dict[str, Any] = {}


def plan_key(resources: list[Any]) -> int:
    return hash(tuple(str(getattr(r, "urn", "")) for r in resources))


def last_matches(resources: list[Any]) -> list[tuple[Mapping[str, Any], int, list[str]]] | None:
    """The entries of the k8s-pod-security run on this same plan, each with its count of exempted objects and
    the URNs of the objects it names but does not exempt (another image or chart)."""
    if _MATCHED.get("plan") != plan_key(resources):
        return None
    found: list[tuple[Mapping[str, Any], int, list[str]]] = _MATCHED.get("entries", [])
    return found


def _exempt(
    obj: KObject, exemptions: Any, resources: list[Any], used: dict[int, int], named: dict[int, list[str]]
) -> str | None:
    """An empty string when an entry exempts the object; why a name-matching entry does not (the violation's
    note); None when no entry names it. ``used`` counts the objects each entry exempts, ``named`` the URNs of
    those it names only."""
    near: str | None = None
    for i, e in enumerate(exemptions if isinstance(exemptions, list) else []):
        if not isinstance(e, Mapping):
            continue
        why = binding(obj, e, resources)
        if why is None:
            used[i] = used.get(i, 0) + 1
            return ""
        if why != "name":
            near = why
            named.setdefault(i, []).append(obj.urn)
    return near


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    level = str(cfg["level"])
    undecided: list[str] = []
    resources = list(args.resources)
    exemptions = cfg["exemptions"] if isinstance(cfg["exemptions"], list) else []
    used: dict[int, int] = {}
    named: dict[int, list[str]] = {}
    namespaces: set[str] = set()
    for obj in objects(resources):
        namespaces.add(obj.namespace)
        try:
            near = _exempt(obj, exemptions, resources, used, named)
            if near == "":
                continue
            found = [(p.path, v) for p in pods(obj) for v in violations(p.spec, level, p.annotations)]
        except UnknownValueError:
            undecided.append(obj.ref)
            continue
        if found:
            shown = "; ".join(f"{path}: {v}" for path, v in found[:6]) + (" ..." if len(found) > 6 else "")
            report(
                obj.urn,
                f"{obj.ref} breaks the {level} Pod Security Standard ({SOURCE}): {shown}."
                + (f" An exemption names it but does not apply: it {near}." if near else "")
                + " Fix: drop the host access and privileges, or, for a system daemon that needs them, add "
                f'{{"namespace": "{obj.namespace}", "name": "{obj.name}", "images": [...], "reason": "..."}} '
                "to exemptions.",
            )
    _MATCHED.clear()
    _MATCHED.update(
        plan=plan_key(resources),
        entries=[
            (e, used.get(i, 0), named.get(i, []))
            for i, e in enumerate(exemptions)
            # Only entries about this plan: a config shared by many programs names namespaces most never use.
            if isinstance(e, Mapping) and e.get("namespace") in namespaces
        ],
    )
    undecided += [
        f"{r.resource_type.rsplit(':', 1)[-1]} {r.name} (rendered objects not visible)"
        for r in unseen_releases(args.resources)
    ]
    if undecided:
        raise unknown(
            "spec",
            "pod specs with values unknown at preview, or charts whose objects the pack cannot see: "
            f"{sorted(undecided)}",
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-146",
    name="k8s-pod-security",
    description="Pods of every workload kind, including those rendered from Helm charts, must meet the Pod "
    "Security Standards level (baseline by default); named system daemons are exempted in the config.",
    category="security",
    severity=Severity.HIGH,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Remove hostNetwork/hostPID/hostIPC, privileged, hostPath volumes, host ports and added "
    "capabilities; for restricted also set runAsNonRoot, allowPrivilegeEscalation false, seccompProfile "
    "RuntimeDefault and drop ALL. Exempt a system daemon by namespace, name, images (and chart) with a reason.",
    references=(
        "CKV_K8S_16",
        "CKV_K8S_17",
        "CKV_K8S_18",
        "CKV_K8S_19",
        "CKV_K8S_20",
        "CKV_K8S_23",
        "CKV_K8S_28",
        "PSS",
    ),
    kind="stack",
    surfaces=frozenset({"pods"}),
    reads=frozenset({"kubernetes:*"}),
    validate=validate,
    config={
        "level": {
            "type": "string",
            "enum": ["baseline", "restricted"],
            "default": "baseline",
            "description": "The Pod Security Standards level every non-exempt pod must meet.",
        },
        "exemptions": {
            "type": "array",
            "default": [],
            "description": "System daemons allowed beyond the level: namespace and name (a glob) of the workload "
            "(kind optional), the image repositories it runs (repo, or repo@sha256:... to pin the digest), the "
            "chart it comes from where it is rendered from one (name and repository), and the reason it needs "
            "the host.",
            "items": {
                "type": "object",
                "properties": {
                    "namespace": {"type": "string"},
                    "name": {"type": "string"},
                    "kind": {"type": "string"},
                    "images": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                    "chart": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "repository": {"type": "string"}},
                        "required": ["name", "repository"],
                        "additionalProperties": False,
                    },
                    "reason": {"type": "string", "minLength": 1},
                },
                "required": ["namespace", "name", "images", "reason"],
                "additionalProperties": False,
            },
        },
    },
)
