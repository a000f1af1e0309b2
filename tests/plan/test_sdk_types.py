"""The lazy property-type tables (gpucloud.plan.sdk_types) hold what the SDK's eager ones hold, key by key and in
the same order, and resolve only the keys looked up."""

from __future__ import annotations

import importlib
import typing
from typing import Any

import pulumi
import pytest
from pulumi import _types as sdk

from gpucloud.plan import sdk_types

sdk_types.install()


# What the SDK's eager _raw_return_hints and _types_from_py_properties computed (pulumi/_types.py), restated.
def _eager_raw_return_hints(cls: type) -> dict[str, Any]:
    globalns = sdk._globals_for_cls(cls)
    localns = {"Output": pulumi.Output, "T": type(None)}
    hints: dict[str, Any] = {}
    for _, pulumi_name, prop in sdk._py_properties(cls):
        hint = typing.get_type_hints(prop.fget, globalns=globalns, localns=localns).get("return")
        if hint is not None:
            hints[pulumi_name] = hint
    return hints


def _eager_types(cls: type) -> dict[str, Any]:
    out = {}
    for name, hint in _eager_raw_return_hints(cls).items():
        typ = sdk.unwrap_type(hint)
        if typ is not pulumi.Output:
            out[name] = typ
    return out


def _classes(module: str) -> list[type]:
    mod = importlib.import_module(module)
    found = []
    for value in vars(mod).values():
        if (
            isinstance(value, type)
            and value.__module__ == module
            and (issubclass(value, pulumi.Resource) or sdk.is_input_type(value) or sdk.is_output_type(value))
        ):
            found.append(value)
    return found


MODULES = [
    "pulumi_aws.s3._inputs",
    "pulumi_aws.s3.outputs",
    "pulumi_aws.eks._inputs",
    "pulumi_aws.eks.outputs",
    "pulumi_kubernetes.apps.v1._inputs",
    "pulumi_kubernetes.apps.v1.outputs",
]
RESOURCES = [
    "pulumi_aws.s3.bucket_v2",
    "pulumi_aws.eks.cluster",
    "pulumi_aws.eks.node_group",
    "pulumi_aws.ec2.launch_template",
    "pulumi_kubernetes.apps.v1.Deployment",
    "pulumi_kubernetes.core.v1.Service",
]


@pytest.mark.parametrize("module", MODULES + RESOURCES)
def test_lazy_tables_equal_the_sdk_rules_key_by_key(module: str) -> None:
    classes = _classes(module)
    assert len(classes) >= (20 if module in MODULES else 1)
    for cls in classes:
        eager = _eager_types(cls)
        lazy = sdk._types_from_py_properties(cls)
        # Lookup by lookup first (what the SDK does), then the whole table, in the SDK's order.
        for key in eager:
            assert lazy.get(key) == eager[key], (cls, key)
        assert lazy.get("noSuchProperty") is None
        assert list(lazy.items()) == list(eager.items()), cls
        assert dict(sdk._raw_return_hints(cls)) == _eager_raw_return_hints(cls), cls
        if issubclass(cls, pulumi.Resource):
            merged = {**sdk._types_from_annotations(cls), **eager}
            assert list(sdk.resource_types(cls).items()) == list(merged.items()), cls


def test_only_the_keys_looked_up_are_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi_aws as aws

    cls = aws.s3.BucketV2
    sdk._raw_return_hints.cache_clear()
    sdk._types_from_py_properties.cache_clear()
    asked: list[str] = []
    real = typing.get_type_hints

    def counting(obj: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(obj.__name__)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(sdk, "get_type_hints", counting)
    types = sdk.resource_types(cls)
    assert types.get("bucket") is str
    assert types.get("tags") == _eager_types(cls)["tags"]
    assert sorted(asked) == ["bucket", "tags"]
    assert len(sdk._py_properties(cls)) > 20
