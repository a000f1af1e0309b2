"""The good twin of k8s-daemonset-host-network."""

import pulumi_kubernetes as k8s

k8s.apps.v1.DaemonSet(
    "gpu-probe",
    metadata={"name": "gpu-probe", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "gpu-probe"}},
        "template": {
            "metadata": {"labels": {"app": "gpu-probe"}},
            "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}]},
        },
    },
)
