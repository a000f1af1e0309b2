"""The good twin: no host access, no privilege."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "profile-run",
    api_version="argoproj.io/v1alpha1",
    kind="Workflow",
    metadata={"name": "profile-run", "namespace": "ml"},
    spec={
        "entrypoint": "prof",
        "templates": [
            {"name": "prof", "script": {"image": "registry.example.com/ml/etl:2.1", "source": "python profile.py"}}
        ],
    },
)
