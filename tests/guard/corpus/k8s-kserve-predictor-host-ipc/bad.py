"""A KServe InferenceService predictor sharing the node's IPC namespace."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "llm-serve",
    api_version="serving.kserve.io/v1beta1",
    kind="InferenceService",
    metadata={"name": "llm-serve", "namespace": "ml"},
    spec={
        "predictor": {
            "hostIPC": True,
            "containers": [{"name": "kserve-container", "image": "registry.example.com/ml/vllm:0.8"}],
        }
    },
)
