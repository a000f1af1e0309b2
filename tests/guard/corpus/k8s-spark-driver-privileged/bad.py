"""A SparkApplication whose driver runs privileged with SYS_ADMIN."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "feature-backfill",
    api_version="sparkoperator.k8s.io/v1beta2",
    kind="SparkApplication",
    metadata={"name": "feature-backfill", "namespace": "ml"},
    spec={
        "type": "Python",
        "mode": "cluster",
        "image": "registry.example.com/ml/spark:3.5",
        "mainApplicationFile": "local:///app/job.py",
        "driver": {"cores": 1, "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}},
        "executor": {"cores": 4, "instances": 8},
    },
)
