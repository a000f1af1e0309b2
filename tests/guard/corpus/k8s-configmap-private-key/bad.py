"""The deploy key in a ConfigMap."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "git-sync",
    metadata={"name": "git-sync", "namespace": "ml"},
    data={
        "id_ed25519": (
            "-----BEGIN OPENSSH PRIVATE KEY-----\n"
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
            "QyNTUxOQAAACDm9c1Xb0s1oPQ7W0k8h1jZl3Jx6fJ2Yc7X8vP0kq1rVAAAAJi2m4W1tpuF\n"
            "-----END OPENSSH PRIVATE KEY-----\n"
        )
    },
)
