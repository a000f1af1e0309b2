"""An MPIJob whose workers share the node's IPC namespace for /dev/shm."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "llama-pretrain",
    api_version="kubeflow.org/v2beta1",
    kind="MPIJob",
    metadata={"name": "llama-pretrain", "namespace": "ml"},
    spec={
        "slotsPerWorker": 8,
        "mpiReplicaSpecs": {
            "Launcher": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "launcher", "image": "nccl-tests:2.23"}]}},
            },
            "Worker": {
                "replicas": 4,
                "template": {
                    "spec": {
                        "hostIPC": True,
                        "containers": [{"name": "worker", "image": "nccl-tests:2.23"}],
                    }
                },
            },
        },
    },
)
