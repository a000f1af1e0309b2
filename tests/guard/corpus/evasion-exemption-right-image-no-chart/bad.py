"""A privileged DaemonSet named like the exempted log shipper, with its image, registered directly instead of from the
eks-charts chart.
"""

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
                        "image": "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.2.20240516",
                        "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}},
                    }
                ],
            },
        },
    },
)
