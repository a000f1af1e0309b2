"""A StatefulSet (inference server) binding a host port on every node it lands on."""

import pulumi_kubernetes as k8s

k8s.apps.v1.StatefulSet(
    "triton",
    metadata={"name": "triton", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "triton"}},
        "service_name": "triton",
        "template": {
            "metadata": {"labels": {"app": "triton"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                        "ports": [{"container_port": 8000, "host_port": 8000}],
                    }
                ]
            },
        },
    },
)
