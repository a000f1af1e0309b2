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
    """Inputs as the plan reports them: camelCase keys, numbers as floats, unknowns as the sentinel, secrets
    masked."""
    return {k: _value(v) for k, v in struct.fields.items()}


def struct_views(struct: struct_pb2.Struct) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(masked view, plaintext view or None when the inputs hold no secret).

    The engine hands analyzers a secret as `{sig: secret, value: v}` and pulumi_policy's deserializer unwraps
    it, so a policy reads the plaintext; only the reports mask it. The plaintext view is built only when needed.
    """
    seen: list[bool] = []
    masked = {k: _value(v, seen) for k, v in struct.fields.items()}
    if not seen:
        return masked, None
    return masked, {k: _value(v, None, reveal=True) for k, v in struct.fields.items()}


def _value(v: struct_pb2.Value, seen: list[bool] | None = None, reveal: bool = False) -> Any:
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
        return [_value(x, seen, reveal) for x in v.list_value.values]
    fields = v.struct_value.fields
    sig = fields.get(_SIG_KEY)
    if sig is None:
        return {k: _value(x, seen, reveal) for k, x in fields.items()}
    tag = sig.string_value
    if tag == _SECRET_SIG:
        if reveal:
            return _value(fields["value"], None, True) if "value" in fields else UNKNOWN
        if seen is not None:
            seen.append(True)
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
        if fields.get("secret") is not None and fields["secret"].bool_value and not reveal:
            if seen is not None:
                seen.append(True)
            return SECRET
        return _value(fields["value"], seen, reveal) if "value" in fields else UNKNOWN
    return {k: _value(x, seen, reveal) for k, x in fields.items()}
