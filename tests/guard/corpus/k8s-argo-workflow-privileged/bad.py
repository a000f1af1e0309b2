"""An Argo Workflow step (templates[].container) running privileged."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "nightly-etl",
    api_version="argoproj.io/v1alpha1",
    kind="Workflow",
    metadata={"name": "nightly-etl", "namespace": "ml"},
    spec={
        "entrypoint": "etl",
        "templates": [
            {
                "name": "etl",
                "container": {
                    "image": "registry.example.com/ml/etl:2.1",
                    "command": ["etl"],
                    "securityContext": {"privileged": True},
                },
            }
        ],
    },
)
