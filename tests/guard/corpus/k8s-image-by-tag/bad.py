"""A training Deployment whose images run by tag: one with no tag at all (pulls latest), one by version tag."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "trainer",
    metadata={"name": "trainer", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "trainer"}},
        "template": {
            "metadata": {"labels": {"app": "trainer"}},
            "spec": {
                "init_containers": [{"name": "fetch", "image": "public.ecr.aws/docker/library/busybox"}],
                "containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}],
            },
        },
    },
)
