"""AppArmor off for the main container."""

import pulumi_kubernetes as k8s

k8s.apps.v1.Deployment(
    "tokenizer",
    metadata={"name": "tokenizer", "namespace": "ml"},
    spec={
        "selector": {"matchLabels": {"app": "tokenizer"}},
        "template": {
            "metadata": {
                "labels": {"app": "tokenizer"},
                "annotations": {"container.apparmor.security.beta.kubernetes.io/main": "unconfined"},
            },
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/ml/tokenizer:1.0"}]},
        },
    },
)
