"""Node agents of the plan (device plugins, NFD, GFD, GPU Operator, exporters, log agents) and what each adds to
the nodes it can run on: labels and extended resources.

A label or resource exists on a node only when the component that sets it is in the plan *and* can run on that
node, which in turn may need labels another component sets (the NVIDIA device plugin selects NFD's PCI label,
dcgm-exporter selects the GPU Operator's nvidia.com/gpu.present). `resolve` runs that to a fixpoint per node
variant. What each component sets, from its upstream:

- nfd-worker + nfd-master (node-feature-discovery 0.17/0.18): `feature.node.kubernetes.io/pci-<fields>.present`
  for PCI devices whose class is in the worker config's `sources.pci.deviceClassWhitelist` (default 03, 0b40,
  12; fields default class,vendor), labels of `sources.custom` rules and NodeFeatureRule objects; nfd-master
  publishes them except in *.kubernetes.io / denyLabelNs namespaces that extraLabelNs does not re-allow.
- gpu-feature-discovery (k8s-device-plugin 0.18): nvidia.com/gpu.{product,count,memory,family,machine,replicas,...}
  written to NFD's features.d (local source), so only where an nfd-worker also runs (unless
  GFD_USE_NODE_FEATURE_API=true).
- GPU Operator (ClusterPolicy): nvidia.com/gpu.present=true and nvidia.com/gpu.deploy.<operand>=true on nodes
  carrying NFD's NVIDIA PCI label; its operands (device plugin, GFD, dcgm-exporter) select those labels and
  tolerate ClusterPolicy `daemonsets.tolerations`.
- NVIDIA device plugin -> nvidia.com/gpu; EFA device plugin -> vpc.amazonaws.com/efa; Neuron device plugin ->
  aws.amazon.com/neuron / neuroncore; Bottlerocket NVIDIA AMIs run the NVIDIA plugin in the host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpucloud.conformance import ConformanceContext
from gpucloud.conformance.inventory import KObject, PodSet, command_words, containers, image_of, objects, pod_sets
from gpucloud.conformance.kube import NodeLabels, Tri, selector_fits, tri_or, untolerated
from gpucloud.conformance.nodes import EFA, EKS_CLUSTER, GPU, NEURON, NEURONCORE, NodeVariant, Pool, build_pools
from gpucloud.conformance.stack_options import EXTERNAL_DEVICE_PLUGINS, external_device_plugins

# Roles of node agents / controllers, from the container image and command (name-agnostic: charts rename).
DEVICE_PLUGIN = "nvidia-device-plugin"
GFD = "gpu-feature-discovery"
NFD_WORKER = "nfd-worker"
NFD_MASTER = "nfd-master"
DCGM_EXPORTER = "dcgm-exporter"
EFA_PLUGIN = "efa-device-plugin"
NEURON_PLUGIN = "neuron-device-plugin"
# NFD's cpu-model.vendor_id values (it maps CPUID's GenuineIntel / AuthenticAMD, and ARM for Graviton).
_NFD_CPU_VENDOR = {"intel": "Intel", "amd": "AMD", "aws": "ARM"}
GPU_OPERATOR = "gpu-operator"
LOG_AGENT = "log-agent"
METRICS_AGENT = "node-exporter"
NTH = "aws-node-termination-handler"
KARPENTER = "karpenter"
CLUSTER_AUTOSCALER = "cluster-autoscaler"

NFD_DEFAULT_CLASSES = ("03", "0b40", "12")
NFD_DEFAULT_FIELDS = ("class", "vendor")
NFD_ALWAYS_ALLOWED = ("feature.node.kubernetes.io", "profile.node.kubernetes.io")


def classify(obj: KObject, pod: PodSet) -> str | None:
    """The role of a workload's pods from their images and commands."""
    for c in containers(pod.pod_spec):
        img = image_of(c).lower()
        words = " ".join(command_words(c)).lower()
        if words.startswith("config-manager"):
            continue  # the NVIDIA config-manager sidecar shares the plugin's image in every NVIDIA DaemonSet
        repo = img.split("@", 1)[0].rsplit(":", 1)[0] if ":" in img.rsplit("/", 1)[-1] else img.split("@", 1)[0]
        if "gpu-feature-discovery" in words or repo.endswith("/gpu-feature-discovery"):
            return GFD
        if "mps-control-daemon" in words:
            return None
        if "aws-efa-k8s-device-plugin" in repo:
            return EFA_PLUGIN
        if repo.endswith("/k8s-device-plugin") and c in (pod.pod_spec.get("containers") or []):
            return DEVICE_PLUGIN
        if "node-feature-discovery" in repo:
            if "nfd-worker" in words:
                return NFD_WORKER
            if "nfd-master" in words:
                return NFD_MASTER
        if repo.endswith("dcgm-exporter"):
            return DCGM_EXPORTER
        if "neuron-device-plugin" in repo:
            return NEURON_PLUGIN
        if repo.endswith("/gpu-operator") and obj.kind == "Deployment":
            return GPU_OPERATOR
        if "aws-node-termination-handler" in repo:
            return NTH
        if re.search(r"karpenter/controller$", repo):
            return KARPENTER
        if repo.endswith("/cluster-autoscaler"):
            return CLUSTER_AUTOSCALER
        if obj.kind == "DaemonSet" and re.search(r"(fluent-bit|fluentd|cloudwatch-agent|vector|promtail)$", repo):
            return LOG_AGENT
        if obj.kind == "DaemonSet" and repo.endswith("node-exporter"):
            return METRICS_AGENT
    return None


@dataclass
class Agent:
    role: str
    obj: KObject
    pod: PodSet
    source: str  # where its behaviour comes from ("chart nvidia-device-plugin@0.18.2", "plan")
    synthetic: bool = False  # created by an operator at run time (GPU Operator operands)
    origin: KObject | None = None  # the object that makes the operator create it (the ClusterPolicy)


def _config_map(objs: list[KObject], namespace: str, name: str) -> KObject | None:
    for o in objs:
        if o.kind == "ConfigMap" and o.name == name and o.namespace == namespace:
            return o
    return None


def _mounted_config(objs: list[KObject], agent: Agent, key: str) -> dict[str, Any] | None:
    for v in agent.pod.pod_spec.get("volumes") or []:
        cm = (v or {}).get("configMap") or {}
        name = cm.get("name")
        if not name:
            continue
        found = _config_map(objs, agent.obj.namespace, str(name))
        if found is None:
            continue
        text = (found.manifest.get("data") or {}).get(key)
        if isinstance(text, str):
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError:
                return None
            return data if isinstance(data, dict) else {}
    return None


@dataclass
class AgentSet:
    agents: list[Agent]
    objs: list[KObject]
    nfd_worker_conf: dict[str, Any] = field(default_factory=dict)
    nfd_custom_rules: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (rule, source)
    nfd_extra_ns: set[str] = field(default_factory=set)
    nfd_deny_ns: set[str] = field(default_factory=set)
    nfd_version: str = ""
    opaque_charts: list[str] = field(default_factory=list)  # charts of Releases not rendered: they may add agents

    def of(self, *roles: str) -> list[Agent]:
        return [a for a in self.agents if a.role in roles]


def _source(o: KObject) -> str:
    return o.source or "plan"


def collect_agents(ctx: ConformanceContext) -> AgentSet:
    cached = ctx.facts.get("_scheduling_agents")
    if cached is not None and cached[0] == len(ctx.derived):
        return cached[1]
    objs = objects(ctx)
    agents: list[Agent] = []
    for o in objs:
        if o.kind not in ("DaemonSet", "Deployment", "StatefulSet"):
            continue
        for ps in pod_sets(o):
            role = classify(o, ps)
            if role:
                agents.append(Agent(role, o, ps, _source(o)))
    aset = AgentSet(agents, objs)
    for a in aset.of(NFD_WORKER):
        conf = _mounted_config(objs, a, "nfd-worker.conf")
        if conf:
            aset.nfd_worker_conf = conf
        for c in containers(a.pod.pod_spec):
            tag = image_of(c).rsplit(":", 1)[-1]
            if tag.startswith("v"):
                aset.nfd_version = tag
    sources = (aset.nfd_worker_conf.get("sources") or {}) if isinstance(aset.nfd_worker_conf, dict) else {}
    for rule in sources.get("custom") or []:
        if isinstance(rule, dict):
            aset.nfd_custom_rules.append((rule, "nfd-worker custom source"))
    for o in objs:
        if o.kind == "NodeFeatureRule":
            for rule in o.spec.get("rules") or []:
                if isinstance(rule, dict):
                    aset.nfd_custom_rules.append((rule, f"NodeFeatureRule {o.name}"))
    for a in aset.of(NFD_MASTER):
        conf = _mounted_config(objs, a, "nfd-master.conf") or {}
        aset.nfd_extra_ns |= {str(n) for n in conf.get("extraLabelNs") or []}
        aset.nfd_deny_ns |= {str(n) for n in conf.get("denyLabelNs") or []}
        for c in containers(a.pod.pod_spec):
            for w in command_words(c):
                for flag, into in (("-extra-label-ns=", aset.nfd_extra_ns), ("-deny-label-ns=", aset.nfd_deny_ns)):
                    if w.lstrip("-").startswith(flag.lstrip("-")):
                        into |= set(filter(None, w.split("=", 1)[1].split(",")))
    # GPU Operator: its operands are DaemonSets the operator creates from the ClusterPolicy at run time.
    operators = aset.of(GPU_OPERATOR)
    for o in objs:
        if o.kind == "ClusterPolicy" and o.api_version.startswith("nvidia.com/") and operators:
            agents.extend(_operator_operands(o))
    rendered_owners = {o.urn for o in objs if o.derived}
    aset.opaque_charts = [
        str(r.inputs.get("chart") or "")
        for r in ctx.plan.of_type(
            "kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart"
        )
        if r.urn not in rendered_owners
    ]
    ctx.facts["_scheduling_agents"] = (len(ctx.derived), aset)
    return aset


def _operator_operands(cp: KObject) -> list[Agent]:
    spec = cp.spec
    tolerations = list((spec.get("daemonsets") or {}).get("tolerations") or [])
    out = []
    for role, key, deploy in (
        (DEVICE_PLUGIN, "devicePlugin", "device-plugin"),
        (GFD, "gfd", "gpu-feature-discovery"),
        (DCGM_EXPORTER, "dcgmExporter", "dcgm-exporter"),
    ):
        if (spec.get(key) or {}).get("enabled", True) is False:
            continue
        manifest = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": f"nvidia-{deploy}-daemonset", "namespace": cp.namespace},
            "spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {f"nvidia.com/gpu.deploy.{deploy}": "true"},
                        "tolerations": tolerations,
                        "containers": [{"name": deploy, "image": f"gpu-operator-operand/{deploy}"}],
                    }
                }
            },
        }
        obj = KObject(cp.urn, manifest, cp.source, derived=cp.derived)
        ps = pod_sets(obj)[0]
        out.append(Agent(role, obj, ps, f"{cp.source or 'plan'} ClusterPolicy.spec.{key}", synthetic=True, origin=cp))
    return out


# -- PCI inventory and NFD rules -------------------------------------------------------------------------------


def pci_devices(v: NodeVariant) -> list[dict[str, str]]:
    """PCI functions of an instance as NFD sees them (class, vendor, device) - Nitro devices and accelerators."""
    devs = [
        {"class": "0200", "vendor": "1d0f", "device": "ec20"},  # ENA
        {"class": "0108", "vendor": "1d0f", "device": "8061"},  # EBS NVMe
    ]
    s = v.spec
    if s is None:
        return devs
    if s.has_instance_store:
        devs.append({"class": "0108", "vendor": "1d0f", "device": "cd01"})
    if s.is_gpu and s.manufacturer == "nvidia":
        devs.append({"class": "0302", "vendor": "10de", "device": ""})
    if s.manufacturer == "aws":
        devs.append({"class": "0880", "vendor": "1d0f", "device": ""})
    if v.efa_devices:
        devs.append({"class": "0200", "vendor": "1d0f", "device": f"efa{max(0, (s.efa_generation or 1) - 1)}"})
    return devs


def _nfd_pci_labels(conf: Mapping[str, Any], v: NodeVariant) -> dict[str, str]:
    pci = ((conf.get("sources") or {}).get("pci") or {}) if isinstance(conf, Mapping) else {}
    classes = [str(c) for c in pci.get("deviceClassWhitelist") or NFD_DEFAULT_CLASSES]
    fields = [str(f) for f in pci.get("deviceLabelFields") or NFD_DEFAULT_FIELDS]
    out = {}
    for d in pci_devices(v):
        if not any(d["class"].startswith(c) for c in classes):
            continue
        if any(not d.get(f) for f in fields):
            continue
        out["feature.node.kubernetes.io/pci-" + "_".join(d[f] for f in fields) + ".present"] = "true"
    return out


def _expr_match(value: str, expr: Mapping[str, Any]) -> Tri:
    op = expr.get("op")
    vals = [str(x) for x in expr.get("value") or []]
    if not value:
        return None
    if op == "In":
        return value in vals
    if op == "NotIn":
        return value not in vals
    if op == "InRegexp":
        return any(re.search(p, value) for p in vals)
    if op == "Exists":
        return True
    if op == "DoesNotExist":
        return False
    return None


def _rule_matches(rule: Mapping[str, Any], v: NodeVariant) -> Tri:
    def one(feature: Mapping[str, Any]) -> Tri:
        if feature.get("feature") != "pci.device":
            return None  # kernel, cpu, usb, ... features are only known on the node
        exprs = feature.get("matchExpressions") or {}
        results = []
        for d in pci_devices(v):
            r: Tri = True
            for attr, e in exprs.items():
                m = _expr_match(d.get(str(attr), ""), e or {})
                r = False if m is False else (None if m is None and r is not False else r)
            results.append(r)
        return tri_or(results)

    feats = [f for f in rule.get("matchFeatures") or [] if isinstance(f, Mapping)]
    verdict: Tri = True if feats else None
    for f in feats:
        m = one(f)
        verdict = False if m is False or verdict is False else (None if m is None or verdict is None else True)
    any_of = rule.get("matchAny") or []
    if any_of:
        any_v = tri_or(
            [
                (
                    lambda fs: (lambda rs: False if False in rs else (None if None in rs else True))(
                        [one(f) for f in fs]
                    )
                )([f for f in (a.get("matchFeatures") or []) if isinstance(f, Mapping)])
                for a in any_of
                if isinstance(a, Mapping)
            ]
        )
        verdict = False if verdict is False or any_v is False else (None if None in (verdict, any_v) else True)
    return verdict


def nfd_allows(aset: AgentSet, key: str) -> bool:
    ns = key.split("/", 1)[0] if "/" in key else "feature.node.kubernetes.io"
    if any(ns == a or ns.endswith("." + a) for a in NFD_ALWAYS_ALLOWED):
        return True
    if ns in aset.nfd_extra_ns:
        return True
    if ns == "kubernetes.io" or ns.endswith(".kubernetes.io"):
        return False
    return ns not in aset.nfd_deny_ns


# -- the fixpoint ---------------------------------------------------------------------------------------------


@dataclass
class NodeState:
    """A pool variant after the agents that can run there have added their labels and resources."""

    pool: Pool
    variant: NodeVariant
    labels: NodeLabels
    resources: dict[str, float | None]
    runs: dict[int, tuple[Tri, list[str]]]  # id(agent) -> can it run here, why not
    providers: dict[str, str]


def can_run(pod_spec: Mapping[str, Any], labels: NodeLabels, pool: Pool) -> tuple[Tri, list[str]]:
    """Can a pod with this spec be placed on a node of the pool (labels and taints only)?"""
    fits, reasons = selector_fits(labels, pod_spec)
    bad = untolerated(pod_spec.get("tolerations") or [], pool.taints)
    if bad:
        reasons = reasons + [f"untolerated taint {t}" for t in bad]
        return False, reasons
    if fits is False:
        return False, reasons
    if pool.taints_open:
        return None, reasons
    return fits, reasons


def _set(labels: NodeLabels, providers: dict[str, str], key: str, value: str | None, who: str, sure: Tri) -> None:
    if sure is False:
        return
    if key not in labels.values:
        labels.add(key, value)
        if sure is None:
            labels.maybe.add(key)
        providers[key] = who
    elif sure is True and key in labels.maybe:
        labels.maybe.discard(key)
        providers[key] = who


def resolve(ctx: ConformanceContext) -> list[NodeState]:
    cached = ctx.facts.get("_scheduling_nodes")
    if cached is not None and cached[0] == len(ctx.derived):
        return list(cached[1])
    aset = collect_agents(ctx)
    states: list[NodeState] = []
    masters = bool(aset.of(NFD_MASTER))
    operators = bool(aset.of(GPU_OPERATOR))
    cluster_in_plan = bool(ctx.plan.of_type(EKS_CLUSTER))
    external = external_device_plugins(ctx.plan)
    for pool in build_pools(ctx):
        for v in pool.variants:
            labels = v.labels.copy()
            st = NodeState(pool, v, labels, dict(v.allocatable), {}, dict(v.providers))
            for _ in range(6):
                before = (dict(labels.values), set(labels.maybe))
                runs = {id(a): can_run(a.pod.pod_spec, labels, pool) for a in aset.agents}
                st.runs = runs

                def on(role: str, runs: dict[int, tuple[Tri, list[str]]] = runs) -> Tri:
                    return tri_or(runs[id(a)][0] for a in aset.of(role))

                nfd = on(NFD_WORKER) if masters else False
                if nfd is not False:
                    who = f"NFD worker ({', '.join(sorted({a.source for a in aset.of(NFD_WORKER)}))})"
                    for k, val in _nfd_pci_labels(aset.nfd_worker_conf, v).items():
                        _set(labels, st.providers, k, val, who, nfd)
                    # The CPU maker is catalog data (EC2's ProcessorInfo), in NFD's vendor_id spelling.
                    vendor = _NFD_CPU_VENDOR.get(v.spec.cpu_manufacturer or "") if v.spec is not None else None
                    _set(
                        labels,
                        st.providers,
                        "feature.node.kubernetes.io/cpu-model.vendor_id",
                        None if v.spec is None else vendor,
                        who,
                        nfd,
                    )
                    labels.open_prefixes = labels.open_prefixes | {"feature.node.kubernetes.io/"}
                    labels.closed_prefixes = labels.closed_prefixes | {
                        "feature.node.kubernetes.io/pci-",
                        "feature.node.kubernetes.io/cpu-model.vendor_id",
                    }
                    for rule, where in aset.nfd_custom_rules:
                        m = _rule_matches(rule, v)
                        sure = None if None in (m, nfd) else (m and nfd)
                        for k, val in (rule.get("labels") or {}).items():
                            key = str(k) if "/" in str(k) else f"feature.node.kubernetes.io/{k}"
                            if nfd_allows(aset, key):
                                _set(labels, st.providers, key, str(val), f"NFD {where}", sure)
                gfd = on(GFD)
                if gfd is not False and v.nvidia_gpus and masters:
                    gfd_via_worker = all(
                        not any(
                            e.get("name") == "GFD_USE_NODE_FEATURE_API" and str(e.get("value")).lower() == "true"
                            for c in containers(a.pod.pod_spec)
                            for e in c.get("env") or []
                        )
                        for a in aset.of(GFD)
                    )
                    sure = gfd if not gfd_via_worker else (None if None in (gfd, nfd) else bool(gfd and nfd))
                    if nfd_allows(aset, "nvidia.com/gpu.product"):
                        spec = v.spec
                        assert spec is not None
                        gl: dict[str, str | None] = {
                            "nvidia.com/gpu.product": None,
                            "nvidia.com/gpu.count": str(spec.accelerator_count),
                            "nvidia.com/gpu.memory": None,
                            "nvidia.com/gpu.family": None,
                            "nvidia.com/gpu.machine": spec.instance_type,
                            "nvidia.com/gpu.replicas": None,
                            "nvidia.com/gpu.sharing-strategy": None,
                            "nvidia.com/mig.capable": None,
                            "nvidia.com/cuda.driver.major": None,
                            "nvidia.com/gpu.compute.major": None,
                        }
                        for k, gv in gl.items():
                            _set(labels, st.providers, k, gv, "gpu-feature-discovery", sure)
                if operators and v.nvidia_gpus:
                    pci = tri_or(
                        [
                            _present(labels, k)
                            for k in (
                                "feature.node.kubernetes.io/pci-10de.present",
                                "feature.node.kubernetes.io/pci-0302_10de.present",
                                "feature.node.kubernetes.io/pci-0300_10de.present",
                            )
                        ]
                    )
                    for k in (
                        "nvidia.com/gpu.present",
                        "nvidia.com/gpu.deploy.device-plugin",
                        "nvidia.com/gpu.deploy.gpu-feature-discovery",
                        "nvidia.com/gpu.deploy.dcgm-exporter",
                    ):
                        _set(labels, st.providers, k, "true", "GPU Operator", pci)
                if (dict(labels.values), set(labels.maybe)) == before:
                    break
            runs = st.runs

            def on_final(role: str, runs: dict[int, tuple[Tri, list[str]]] = runs) -> Tri:
                return tri_or(runs[id(a)][0] for a in aset.of(role))

            if v.nvidia_gpus:
                if pool.bottlerocket_nvidia:
                    st.resources[GPU] = float(v.nvidia_gpus)
                    st.providers[GPU] = "Bottlerocket NVIDIA variant (host device plugin)"
                else:
                    dp = on_final(DEVICE_PLUGIN)
                    if dp is not False:
                        st.resources[GPU] = float(v.nvidia_gpus) if dp else None
                        st.providers[GPU] = "NVIDIA device plugin"
            if v.efa_devices:
                efa = on_final(EFA_PLUGIN)
                if efa is not False:
                    st.resources[EFA] = float(v.efa_devices) if efa else None
                    st.providers[EFA] = "EFA device plugin"
            if v.neuron_devices:
                nrn = on_final(NEURON_PLUGIN)
                if nrn is not False:
                    st.resources[NEURON] = float(v.neuron_devices) if nrn else None
                    st.resources[NEURONCORE] = None
                    st.providers[NEURON] = "Neuron device plugin"
            # A chart nobody rendered that installs such a plugin: cannot say the resource is missing.
            for res, has, pattern in (
                (GPU, v.nvidia_gpus, r"nvidia-device-plugin|gpu-operator"),
                (EFA, v.efa_devices, r"efa"),
                (NEURON, v.neuron_devices, r"neuron"),
            ):
                if has and res not in st.resources and external:
                    # The stack states that its plugins come from elsewhere (GitOps, another stack).
                    st.resources[res] = float(has)
                    st.providers[res] = f"a device plugin installed outside this program ({EXTERNAL_DEVICE_PLUGINS})"
                    continue
                opaque = any(re.search(pattern, c) for c in aset.opaque_charts)
                # A plan that joins nodes to a cluster it does not create leaves its add-ons to another stack.
                elsewhere = not cluster_in_plan
                if has and res not in st.resources and (opaque or elsewhere):
                    st.resources[res] = None
            states.append(st)
    ctx.facts["_scheduling_nodes"] = (len(ctx.derived), states)
    return list(states)


def _present(labels: NodeLabels, key: str) -> Tri:
    if key not in labels.values:
        return labels.has(key) and None
    return None if key in labels.maybe else True
