"""The good twin: no host access, no privilege."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "shuffle-heavy",
    api_version="sparkoperator.k8s.io/v1beta2",
    kind="SparkApplication",
    metadata={"name": "shuffle-heavy", "namespace": "ml"},
    spec={
        "type": "Scala",
        "mode": "cluster",
        "image": "registry.example.com/ml/spark:3.5",
        "mainClass": "Main",
        "mainApplicationFile": "local:///app/job.jar",
        "driver": {"cores": 1},
        "executor": {"cores": 4, "instances": 8},
    },
)
