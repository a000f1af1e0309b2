"""Pod network conformance: collective-communication settings that name network interfaces a pod has.

NCCL (and Gloo, which torch.distributed uses for its own bootstrap) pick their socket interface from an environment
variable holding a list of interface-name prefixes (NCCL docs, "Environment Variables": NCCL_SOCKET_IFNAME; a
leading `^` excludes the listed prefixes, a leading `=` asks for exact names). A pod on the Amazon VPC CNI has
exactly two interfaces, `lo` and `eth0` (EFA devices are RDMA devices, not netdevs), so a prefix such as `en`
(the host's predictable names, ens5 ...) matches nothing a pod has and NCCL fails to bootstrap before the first
collective. Host-network pods see the node's interfaces and pods with Multus networks get extra ones; neither is
judged here.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.inventory import containers, objects, pod_sets
from gpucloud.conformance.nodes import EKS_CLUSTER
from gpucloud.plan.model import is_unknown

CHECK = "pod.network"
IFNAME_VARIABLES = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
VPC_CNI_POD_INTERFACES = ("lo", "eth0")
MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
# Replacement CNIs a plan can install as a chart; with one of them the pod interface names are theirs, not eth0.
_OTHER_CNI_CHARTS = ("cilium", "calico", "tigera-operator", "antrea", "multus")
SOURCE = "NCCL environment variables (NCCL_SOCKET_IFNAME) and Amazon VPC CNI (a pod's interfaces are lo and eth0)"


def selected_interfaces(value: str, interfaces: tuple[str, ...]) -> list[str]:
    """The interfaces a NCCL-style interface list selects, as NCCL's own matcher reads it."""
    spec = value.strip()
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    # Entries may carry a port (`eth0:1234`), which never takes part in the name match.
    prefixes = [name for name in (entry.partition(":")[0] for entry in spec.split(",")) if name]

    def matches(name: str) -> bool:
        return any(name == p if exact else name.startswith(p) for p in prefixes)

    return [name for name in interfaces if matches(name) != exclude]


def _cni_is_vpc_cni(ctx: ConformanceContext) -> bool | None:
    """True when the plan's cluster runs the VPC CNI, None when the plan creates no cluster (it is elsewhere)."""
    for r in ctx.plan.of_type("kubernetes:helm.sh/v3:Release"):
        chart = str(r.inputs.get("chart") or "").rsplit("/", 1)[-1]
        if chart in _OTHER_CNI_CHARTS:
            return False
    return True if ctx.plan.of_type(EKS_CLUSTER) else None


@register_check(CHECK)
def check_pod_network(ctx: ConformanceContext) -> Iterator[Finding]:
    vpc_cni = _cni_is_vpc_cni(ctx)
    if vpc_cni is False:
        return
    for obj in objects(ctx):
        for ps in pod_sets(obj):
            spec = ps.pod_spec
            annotations = (ps.template.get("metadata") or {}).get("annotations") or {}
            if spec.get("hostNetwork") is True or MULTUS_ANNOTATION in annotations:
                continue
            for i, container in enumerate(containers(spec)):
                for j, env in enumerate(container.get("env") or []):
                    if not isinstance(env, dict) or env.get("name") not in IFNAME_VARIABLES:
                        continue
                    value = env.get("value")
                    if not isinstance(value, str) or is_unknown(value):
                        continue
                    usable = [n for n in selected_interfaces(value, VPC_CNI_POD_INTERFACES) if n != "lo"]
                    if usable:
                        continue
                    assumed = "" if vpc_cni else " (the cluster is created elsewhere; assuming EKS's VPC CNI)"
                    yield Finding(
                        check=CHECK,
                        severity="error" if vpc_cni else "warning",
                        urn=obj.urn,
                        object=obj.ref,
                        field=f"{ps.path}.containers[{container.get('name', i)}].env[{j}].value",
                        message=f"{ps.name}: {env['name']}={value!r} selects no interface a pod has besides "
                        f"loopback (pod interfaces: {', '.join(VPC_CNI_POD_INTERFACES)}){assumed}: the collective "
                        "library cannot bootstrap across nodes",
                        expected="eth0 (or an exclusion list such as ^lo,docker)",
                        source=SOURCE,
                    )
