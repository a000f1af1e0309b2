"""The reviewed exceptions to Checkov 3.3.30's Kubernetes checks on the shipped plans: (check id, object, reason).

The object is Checkov's resource name, "Kind.namespace.name", as an fnmatch glob. Every entry must still match a
finding (test_checkov_k8s.py fails on a stale one), so the table shrinks as the findings are fixed. Checks listed
object by object fail the test for any new object; checks with "*" are hygiene beyond the enforced Pod Security
baseline, or debt tracked where the reason says.
"""

from __future__ import annotations

REASONS: dict[str, str] = {
    "CKV_K8S_8": (
        "no liveness probe: device plugins, health gates and one-shot test pods expose no health endpoint"
        " in their upstream templates"
    ),
    "CKV_K8S_9": ("no readiness probe: DaemonSets and Jobs that serve no traffic, and charts without one upstream"),
    "CKV_K8S_10": (
        "no CPU request: the chart's default resources are empty and gpucloud does not size this third-"
        "party pod yet (the pods issue 28 named are sized)"
    ),
    "CKV_K8S_11": (
        "no CPU limit: CPU limits throttle controllers and data loaders; most upstream charts ship none by design"
    ),
    "CKV_K8S_12": (
        "no memory request: the chart's default resources are empty and gpucloud does not size this "
        "third-party pod yet (the pods issue 28 named are sized)"
    ),
    "CKV_K8S_13": (
        "no memory limit: upstream chart defaults; the pod.resources conformance check covers accelerator pods"
    ),
    "CKV_K8S_15": (
        "imagePullPolicy not Always: IfNotPresent is intended (large GPU images, node-local cache); "
        "k8s-image-digest pins content"
    ),
    "CKV_K8S_16": (
        "privileged: device and health daemons that drive the GPUs and EFA devices (the PSS exemptions of"
        " policies/configs/*.json)"
    ),
    "CKV_K8S_17": (
        "hostPID: node exporter reads host processes; the MPS control daemon serves GPU clients across host PIDs"
    ),
    "CKV_K8S_19": (
        "hostNetwork: the EFA device plugin registers host devices; node exporter reports host network metrics"
    ),
    "CKV_K8S_20": (
        "allowPrivilegeEscalation not false: the enforced level is the Pod Security baseline (k8s-pod-"
        "security), not restricted"
    ),
    "CKV_K8S_22": ("no read-only root filesystem: restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_23": ("runAsNonRoot not set: restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_25": (
        "added capabilities: DCGM (dcgm-exporter, dcgm-diag) needs SYS_ADMIN for profiling and diag "
        "tests; the device plugin chart adds it for MIG/MPS"
    ),
    "CKV_K8S_28": ("NET_RAW not dropped: restricted-level hardening (drop ALL), beyond the enforced baseline"),
    "CKV_K8S_29": ("no pod securityContext: restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_30": ("no container securityContext: restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_31": ("seccomp profile not RuntimeDefault: restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_35": (
        "secret as environment variable: Grafana's chart passes the admin credentials from its Secret as "
        "env (upstream template)"
    ),
    "CKV_K8S_37": ("capabilities not dropped (drop ALL): restricted-level hardening, beyond the enforced baseline"),
    "CKV_K8S_38": (
        "service account token mounted: controllers and Pod Identity clients need it; the rest are "
        "upstream chart defaults"
    ),
    "CKV_K8S_39": (
        "SYS_ADMIN: DCGM profiling metrics and dcgmi diag stress tests read device registers; the device "
        "plugin chart adds it for MIG/MPS"
    ),
    "CKV_K8S_40": ("UID below 10000 or unset: upstream images choose their user"),
    "CKV_K8S_43": (
        "image by tag, not digest: images the image lock (gpucloud/charts/images.json) has no sourced digest "
        "for, each with its reason; the k8s-image-digest guardrail exempts the same images in prod.json"
    ),
    "CKV_K8S_49": (
        "wildcard ClusterRole: the Prometheus operator's upstream RBAC manages every monitoring.coreos.com resource"
    ),
    "CKV_K8S_155": (
        "ClusterRole with admission webhook rights: controllers that manage their own webhook "
        "configurations (KEDA, kube-prometheus-stack admission, Kueue), upstream chart RBAC"
    ),
    "CKV2_K8S_5": (
        "binding Checkov cannot resolve: the bound role or service account comes from another template of"
        " the same chart or from the controller at run time"
    ),
    "CKV2_K8S_6": (
        "no NetworkPolicy selects the pod: gpucloud installs no default-deny policy yet (VPC CNI network "
        "policies are off)"
    ),
}

EXCEPTIONS: list[tuple[str, str, str]] = [
    (check, obj, REASONS[check])
    for check, obj in [
        ("CKV_K8S_8", "DaemonSet.gpu-health.gpu-node-health"),
        ("CKV_K8S_8", "DaemonSet.gpu-health.gpu-node-health-efa"),
        ("CKV_K8S_8", "DaemonSet.kube-system.aws-efa-k8s-device-plugin"),
        ("CKV_K8S_8", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin"),
        ("CKV_K8S_8", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-gpu-feature-discovery"),
        ("CKV_K8S_8", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-mps-control-daemon"),
        ("CKV_K8S_8", "Deployment.monitoring.kube-prometheus-stack-grafana"),
        ("CKV_K8S_8", "Deployment.nvidia-device-plugin.nvidia-device-plugin-node-feature-discovery-gc"),
        ("CKV_K8S_8", "Pod.monitoring.kube-prometheus-stack-grafana-test"),
        ("CKV_K8S_9", "*"),
        ("CKV_K8S_10", "DaemonSet.monitoring.kube-prometheus-stack-prometheus-node-exporter"),
        ("CKV_K8S_10", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin"),
        ("CKV_K8S_10", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-gpu-feature-discovery"),
        ("CKV_K8S_10", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-mps-control-daemon"),
        ("CKV_K8S_10", "Deployment.monitoring.kube-prometheus-stack-grafana"),
        ("CKV_K8S_10", "Job.gpu-operator.gpu-operator-node-feature-discovery-prune"),
        ("CKV_K8S_10", "Job.gpu-operator.gpu-operator-upgrade-crd"),
        ("CKV_K8S_10", "Job.nvidia-device-plugin.nvidia-device-plugin-node-feature-discovery-prune"),
        ("CKV_K8S_10", "Pod.monitoring.kube-prometheus-stack-grafana-test"),
        ("CKV_K8S_11", "*"),
        ("CKV_K8S_12", "DaemonSet.monitoring.kube-prometheus-stack-prometheus-node-exporter"),
        ("CKV_K8S_12", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin"),
        ("CKV_K8S_12", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-gpu-feature-discovery"),
        ("CKV_K8S_12", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-mps-control-daemon"),
        ("CKV_K8S_12", "Deployment.monitoring.kube-prometheus-stack-grafana"),
        ("CKV_K8S_12", "Job.gpu-operator.gpu-operator-node-feature-discovery-prune"),
        ("CKV_K8S_12", "Job.gpu-operator.gpu-operator-upgrade-crd"),
        ("CKV_K8S_12", "Job.nvidia-device-plugin.nvidia-device-plugin-node-feature-discovery-prune"),
        ("CKV_K8S_12", "Pod.monitoring.kube-prometheus-stack-grafana-test"),
        ("CKV_K8S_13", "*"),
        ("CKV_K8S_15", "*"),
        ("CKV_K8S_16", "DaemonSet.gpu-health.gpu-node-health"),
        ("CKV_K8S_16", "DaemonSet.gpu-health.gpu-node-health-efa"),
        ("CKV_K8S_16", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-gpu-feature-discovery"),
        ("CKV_K8S_16", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-mps-control-daemon"),
        ("CKV_K8S_17", "DaemonSet.monitoring.kube-prometheus-stack-prometheus-node-exporter"),
        ("CKV_K8S_17", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin-mps-control-daemon"),
        ("CKV_K8S_19", "DaemonSet.kube-system.aws-efa-k8s-device-plugin"),
        ("CKV_K8S_19", "DaemonSet.monitoring.kube-prometheus-stack-prometheus-node-exporter"),
        ("CKV_K8S_20", "*"),
        ("CKV_K8S_22", "*"),
        ("CKV_K8S_23", "*"),
        ("CKV_K8S_25", "DaemonSet.monitoring.dcgm-exporter"),
        ("CKV_K8S_25", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin"),
        ("CKV_K8S_25", "Job.gpu-acceptance.dcgm-diag-infer-l40s"),
        ("CKV_K8S_25", "Job.gpu-acceptance.dcgm-diag-train-h100"),
        ("CKV_K8S_25", "Job.gpu-acceptance.dcgm-diag-train-h200"),
        ("CKV_K8S_25", "Job.gpu-acceptance.dcgm-diag-train-l40s"),
        ("CKV_K8S_28", "*"),
        ("CKV_K8S_29", "*"),
        ("CKV_K8S_30", "*"),
        ("CKV_K8S_31", "*"),
        ("CKV_K8S_35", "Deployment.monitoring.kube-prometheus-stack-grafana"),
        ("CKV_K8S_37", "*"),
        ("CKV_K8S_38", "*"),
        ("CKV_K8S_39", "DaemonSet.monitoring.dcgm-exporter"),
        ("CKV_K8S_39", "DaemonSet.nvidia-device-plugin.nvidia-device-plugin"),
        ("CKV_K8S_39", "Job.gpu-acceptance.dcgm-diag-infer-l40s"),
        ("CKV_K8S_39", "Job.gpu-acceptance.dcgm-diag-train-h100"),
        ("CKV_K8S_39", "Job.gpu-acceptance.dcgm-diag-train-h200"),
        ("CKV_K8S_39", "Job.gpu-acceptance.dcgm-diag-train-l40s"),
        ("CKV_K8S_40", "*"),
        ("CKV_K8S_43", "*"),
        ("CKV_K8S_49", "ClusterRole.default.kube-prometheus-stack-operator"),
        ("CKV_K8S_155", "ClusterRole.default.keda-operator-minimal-cluster-role"),
        ("CKV_K8S_155", "ClusterRole.default.kube-prometheus-stack-admission"),
        ("CKV_K8S_155", "ClusterRole.default.kueue-manager-role"),
        ("CKV2_K8S_5", "ClusterRoleBinding.default.kube-prometheus-stack-grafana-clusterrolebinding"),
        ("CKV2_K8S_5", "RoleBinding.kueue-system.kueue-manager-secrets-rolebinding"),
        ("CKV2_K8S_5", "RoleBinding.monitoring.kube-prometheus-stack-admission"),
        ("CKV2_K8S_6", "*"),
    ]
]
