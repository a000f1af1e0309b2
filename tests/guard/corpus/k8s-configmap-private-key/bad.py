"""The deploy key in a ConfigMap."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "git-sync",
    metadata={"name": "git-sync", "namespace": "ml"},
    data={
        "id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\n"  # noqa: E501
    },
)
