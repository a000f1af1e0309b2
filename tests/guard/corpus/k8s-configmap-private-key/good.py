"""Only the public known_hosts entry; the key lives in a Secret."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "git-sync",
    metadata={"name": "git-sync", "namespace": "ml"},
    data={
        "known_hosts": "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    },
)
