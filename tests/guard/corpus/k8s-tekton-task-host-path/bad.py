"""A Tekton Task whose step mounts the node's root through a hostPath volume."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "image-build",
    api_version="tekton.dev/v1",
    kind="Task",
    metadata={"name": "image-build", "namespace": "ml"},
    spec={
        "steps": [
            {
                "name": "build",
                "image": "registry.example.com/ci/kaniko:1.23",
                "volumeMounts": [{"name": "root", "mountPath": "/host"}],
            }
        ],
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
    },
)
