"""The good twin of k8s-deployment-host-path."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "dataset-sync",
    metadata={"name": "dataset-sync", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "dataset-sync"}},
        "template": {
            "metadata": {"labels": {"app": "dataset-sync"}},
            "spec": {
                "containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}],
                "volumes": [{"name": "host", "empty_dir": {}}],
            },
        },
    },
)
