"""A nightly CronJob whose container adds CAP_SYS_ADMIN."""

import pulumi_kubernetes as k8s

k8s.batch.v1.CronJob(
    "nightly-eval",
    metadata={"name": "nightly-eval", "namespace": "ml"},
    spec={
        "schedule": "0 3 * * *",
        "job_template": {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                                "security_context": {"capabilities": {"add": ["SYS_ADMIN"]}},
                            }
                        ],
                        "restart_policy": "Never",
                    }
                }
            }
        },
    },
)
