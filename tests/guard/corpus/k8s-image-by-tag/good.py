"""The good twin of k8s-image-by-tag: both images pinned by digest (the tag stays for people; the digest decides).

The digest is a fixture (sha256 of a fixed string), not the digest of a real image: the program is only planned."""

import pulumi_kubernetes as k8s

DIGEST = "sha256:caf6a21ff6fa1df23795612f6d8129044c6f65a2c9678ed15016513b832549f8"

k8s.apps.v1.Deployment(
    "trainer",
    metadata={"name": "trainer", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "trainer"}},
        "template": {
            "metadata": {"labels": {"app": "trainer"}},
            "spec": {
                "init_containers": [{"name": "fetch", "image": f"public.ecr.aws/docker/library/busybox@{DIGEST}"}],
                "containers": [{"name": "main", "image": f"nvcr.io/nvidia/pytorch:25.01-py3@{DIGEST}"}],
            },
        },
    },
)
