"""An npm token, base64-encoded, in a ConfigMap."""

import pulumi_kubernetes as k8s

k8s.core.v1.ConfigMap(
    "npmrc",
    metadata={"name": "npmrc", "namespace": "ml"},
    data={
        "npmrc": "Ly9yZWdpc3RyeS5ucG1qcy5vcmcvOl9hdXRoVG9rZW49bnBtX3g3S3EyTm1QOXJUNHZXMXlaM2JDNWRGNmhKOWtMMGNBMmVHNAo="
    },
)
