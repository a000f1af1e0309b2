"""Schema conformance of every Kubernetes object the plan creates: what the API server would reject or prune.

Owns two checks, one module each (schema.py, crd.py), on the objects (objects.py), the OpenAPI schema
(openapi.py), CRD structural schemas (structural.py) and the findings validation errors become (findings.py):

- ``k8s.schema``: each built-in kind (Deployment, ConfigMap, CustomResourceDefinition, ...), registered by the
  program or rendered by a chart (``ctx.derived``), against the Kubernetes OpenAPI schema of the cluster's minor
  version as the pinned ``kubernetes-validate`` package ships it, in its strict flavour (unknown fields are
  errors, as with ``kubectl --validate=strict`` and server-side field validation). An apiVersion/kind the
  version no longer serves (``policy/v1beta1``) is an error too.
- ``k8s.crd``: each custom resource against the ``openAPIV3Schema`` of the version its CRD serves, where the CRD
  is one the plan itself installs (a CustomResourceDefinition resource, or a CRD a rendered chart carries). A
  custom resource whose CRD nothing installs, whose version the CRD does not serve, and two CRDs of one name that
  serve different versions are errors: the API server would refuse the object, or the second install.

Values that are unknown at preview (the engine's UNKNOWN sentinel) and masked secrets are strings standing in
for a value of any type: an error whose offending value is such a placeholder is dropped, since the real value
is not known until ``pulumi up``.
"""

from __future__ import annotations

# schema before crd: checks run in the order they register.
from gpucloud.conformance.k8s_schema.schema import check_schema

# isort: split
from gpucloud.conformance.k8s_schema.crd import Crd, check_crd, crd_from_manifest, crd_index, vendored_crds
from gpucloud.conformance.k8s_schema.findings import json_path, validate_object
from gpucloud.conformance.k8s_schema.objects import (
    CHECK_CRD,
    CHECK_SCHEMA,
    KV_VERSION,
    K8sObject,
    collect_objects,
    plan_object,
)
from gpucloud.conformance.k8s_schema.openapi import OpenAPISchemas, openapi_schemas
from gpucloud.conformance.k8s_schema.structural import structural_to_jsonschema

__all__ = [
    "CHECK_CRD",
    "CHECK_SCHEMA",
    "KV_VERSION",
    "Crd",
    "K8sObject",
    "OpenAPISchemas",
    "check_crd",
    "check_schema",
    "collect_objects",
    "crd_from_manifest",
    "crd_index",
    "json_path",
    "openapi_schemas",
    "plan_object",
    "structural_to_jsonschema",
    "validate_object",
    "vendored_crds",
]
