"""A privileged pod template hidden in a JobSet, a CRD that no list of workload kinds names."""

import pulumi_kubernetes as k8s

k8s.apiextensions.CustomResource(
    "eval-sweep",
    api_version="jobset.x-k8s.io/v1alpha2",
    kind="JobSet",
    metadata={"name": "eval-sweep", "namespace": "ml"},
    spec={
        "replicatedJobs": [
            {
                "name": "workers",
                "replicas": 2,
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {"name": "eval", "image": "eval:1.4", "securityContext": {"privileged": True}}
                                ],
                            }
                        }
                    }
                },
            }
        ]
    },
)
