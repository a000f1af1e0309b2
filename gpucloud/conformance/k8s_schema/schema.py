"""k8s.schema: built-in kinds against the Kubernetes OpenAPI schema of the cluster's version, strict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.conformance.k8s_schema.findings import validate_object
from gpucloud.conformance.k8s_schema.objects import _CRD_API, CHECK_SCHEMA, KV_VERSION, K8sObject, _context_objects
from gpucloud.conformance.k8s_schema.openapi import OpenAPISchemas, openapi_schemas
from gpucloud.conformance.verdicts import VerdictStore


def _prune_crd_schemas(manifest: dict[str, Any]) -> dict[str, Any]:
    """A CRD with each version's openAPIV3Schema cut to its top level.

    The nested schema tree is JSONSchemaProps all the way down, recursive and strict: validating a chart's CRDs
    whole costs about 10 ms each (kube-prometheus-stack ships ten of up to 1 MB). Those trees are exercised
    where it matters, by validating the custom resources against them (k8s.crd); the CRD's own shape (names,
    scope, versions, served/storage) is still checked here.
    """
    out = dict(manifest)
    spec = out.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("versions"), list):
        return out
    versions = []
    for v in spec["versions"]:
        if isinstance(v, dict) and isinstance(v.get("schema"), dict):
            v = dict(v)
            schema = dict(v["schema"])
            tree = schema.get("openAPIV3Schema")
            if isinstance(tree, dict):
                schema["openAPIV3Schema"] = {
                    k: x
                    for k, x in tree.items()
                    if not isinstance(x, dict | list) or (isinstance(x, list) and all(isinstance(i, str) for i in x))
                }
            v["schema"] = schema
        versions.append(v)
    out["spec"] = {**spec, "versions": versions}
    return out


def _shape_finding(obj: K8sObject, check: str, field_: str, message: str, expected: str, source: str) -> Finding:
    return Finding(check, "error", obj.urn, field_, message, expected, source, obj.ref)


def _verdicts(schemas: OpenAPISchemas) -> VerdictStore:
    """The objects k8s.schema found valid on earlier runs (gpucloud/conformance/verdicts.py).

    Validation is a pure function of the manifest, the patch flag, the schema set and this module's code, so an
    object seen valid before is valid now; a cached plan repeats the same 215 rendered objects every time.
    """
    # Every module of the package: any of them can change what validation answers.
    code = sorted(Path(__file__).parent.glob("*.py"))
    return VerdictStore.load(
        CHECK_SCHEMA,
        [f"kubernetes-validate={KV_VERSION}", schemas.version],
        [*code, Path(__file__).parents[1] / "verdicts.py"],
    )


@register_check(CHECK_SCHEMA)
def check_schema(ctx: ConformanceContext) -> Iterator[Finding]:
    """Every built-in Kubernetes object against the cluster version's OpenAPI schema (strict)."""
    objects = _context_objects(ctx)
    if not objects:
        return
    try:
        schemas = openapi_schemas(ctx.kubernetes_version)
    except LookupError as exc:
        yield Finding(CHECK_SCHEMA, "warning", objects[0].urn, "(cluster version)", str(exc), "", "kubernetes-validate")
        return
    verdicts = _verdicts(schemas)
    for obj in objects:
        api_version, kind = obj.api_version, obj.kind
        if not api_version or not kind:
            yield _shape_finding(
                obj, CHECK_SCHEMA, "apiVersion" if not api_version else "kind",
                "object has no apiVersion/kind: the API server cannot route it",
                "apiVersion and kind set", schemas.source,
            )  # fmt: skip
            continue
        if not schemas.is_builtin_group(api_version):
            continue  # a custom resource: k8s.crd
        if (api_version, kind) not in schemas.gvks:
            served = sorted(av for av, k in schemas.gvks if k == kind)
            yield _shape_finding(
                obj,
                CHECK_SCHEMA,
                "apiVersion",
                f"Kubernetes {schemas.version} serves no {kind} in {api_version}",
                f"apiVersion one of: {', '.join(served)}" if served else f"a kind that {api_version} serves",
                schemas.source,
            )
            continue
        manifest = obj.manifest
        if api_version == _CRD_API and kind == "CustomResourceDefinition":
            manifest = _prune_crd_schemas(manifest)
        digest = verdicts.digest(obj.patch, manifest)
        if verdicts.known_valid(digest):
            continue
        validator = schemas.validator(api_version, kind)
        assert validator is not None  # its (apiVersion, kind) is served
        found = validate_object(validator, obj, manifest, CHECK_SCHEMA, schemas.source)
        verdicts.record(digest, found)
        yield from found
    verdicts.save()
