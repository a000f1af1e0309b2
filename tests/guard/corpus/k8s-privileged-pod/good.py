"""The good twin of k8s-privileged-pod."""

import pulumi_kubernetes as k8s

k8s.core.v1.Pod(
    "gpu-debug",
    metadata={"name": "gpu-debug", "namespace": "ml"},
    spec={"containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}]},
)
