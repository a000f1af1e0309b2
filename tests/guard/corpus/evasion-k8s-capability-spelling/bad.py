"""A Deployment that adds SYS_ADMIN spelled 'cap_sys_admin' so that a case-sensitive allowlist misses it."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "tokenizer",
    metadata={"name": "tokenizer", "namespace": "ml"},
    spec={
        "selector": {"match_labels": {"app": "tokenizer"}},
        "template": {
            "metadata": {"labels": {"app": "tokenizer"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                        "security_context": {"capabilities": {"add": ["cap_sys_admin"]}},
                    }
                ]
            },
        },
    },
)
