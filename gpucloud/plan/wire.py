"""Converts the wire form of resource inputs (protobuf Struct) into the engine's view for policies."""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2

from gpucloud.plan.model import SECRET, UNKNOWN

# The SDK writes unknowns on the wire as the same string the analyzer uses as its sentinel
# (pulumi.runtime.rpc.UNKNOWN == pulumi_policy.proxy.UNKNOWN_STRING_VALUE), so they pass through as-is.

# Signatures the Pulumi SDK uses to tag special values inside a Struct (pulumi.runtime.rpc).
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17"
_ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7"
_OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"


def struct_to_engine_view(struct: struct_pb2.Struct) -> dict[str, Any]:
    """Inputs as a policy pack sees them: camelCase keys, numbers as floats, unknowns as the sentinel."""
    return {k: _value(v) for k, v in struct.fields.items()}


def _value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "null_value" or kind is None:
        return None
    if kind == "number_value":
        return float(v.number_value)
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    fields = v.struct_value.fields
    sig = fields.get(_SIG_KEY)
    if sig is None:
        return {k: _value(x) for k, x in fields.items()}
    tag = sig.string_value
    if tag == _SECRET_SIG:
        # Secrets stay secret in the plan output and in what offline policies see.
        return SECRET
    if tag == _RESOURCE_SIG:
        # A reference to another resource: its URN identifies it for stack policies and the text tree.
        urn = fields.get("urn")
        return urn.string_value if urn is not None else UNKNOWN
    if tag == _ASSET_SIG:
        return {"asset": {k: _value(x) for k, x in fields.items() if k != _SIG_KEY}}
    if tag == _ARCHIVE_SIG:
        return {"archive": {k: _value(x) for k, x in fields.items() if k != _SIG_KEY}}
    if tag == _OUTPUT_SIG:
        if fields.get("secret") is not None and fields["secret"].bool_value:
            return SECRET
        return _value(fields["value"]) if "value" in fields else UNKNOWN
    return {k: _value(x) for k, x in fields.items()}
