"""Resource references in inputs, turned into what the engine hands a provider or an analyzer.

A program may pass a Resource object where a provider expects a string (`aws.ec2.Subnet(vpc_id=vpc)`, a
component's `cluster=cluster`). The SDK sends it as a reference, `{sig, urn, id}`. The SDK's mock monitor turns
that reference back into a Resource object on its executor thread's own event loop and then waits there for the
object's URN and ID, which only the program's loop can resolve: before this module the offline plan hung.

The engine does not hand references to providers that do not keep resources (pulumi-terraform-bridge providers)
nor to analyzers: with `KeepResources: false` it marshals a reference as the resource's ID when the reference
carries one (unknown during a preview while the ID is) and as its URN otherwise (a component). Source:
pulumi/pulumi sdk/go/common/resource/plugin/rpc.go, MarshalPropertyValue. The monitor applies the same rule to
every request before the mocks see it, so no Resource object is ever rebuilt off the program's loop.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.wire import _RESOURCE_SIG, _SIG_KEY

_SIG_BYTES = _RESOURCE_SIG.encode()


def has_references(struct: struct_pb2.Struct) -> bool:
    """Whether `struct` holds a resource reference anywhere (one C-level scan of its wire bytes)."""
    return _SIG_BYTES in struct.SerializeToString()


def reference_value(fields: Any) -> str:
    """What the engine marshals a reference as: its ID when it has one (unknown when that is empty or unknown,
    as the SDK treats an empty ID), else its URN."""
    if "id" in fields:
        ref_id = fields["id"].string_value
        return ref_id if ref_id and ref_id != UNKNOWN else UNKNOWN
    return fields["urn"].string_value if "urn" in fields else UNKNOWN


def downgraded(struct: struct_pb2.Struct) -> struct_pb2.Struct:
    """`struct` itself when it holds no reference, else a copy with every reference replaced by its value."""
    if not has_references(struct):
        return struct
    out = struct_pb2.Struct()
    out.CopyFrom(struct)
    for value in out.fields.values():
        _replace(value)
    return out


def _replace(value: struct_pb2.Value) -> None:
    kind = value.WhichOneof("kind")
    if kind == "list_value":
        for item in value.list_value.values:
            _replace(item)
    elif kind == "struct_value":
        fields = value.struct_value.fields
        sig = fields.get(_SIG_KEY)
        if sig is not None and sig.string_value == _RESOURCE_SIG:
            value.string_value = reference_value(fields)
            return
        for item in fields.values():
            _replace(item)


def downgrade_request(request: Any, field: str) -> Any:
    """`request` itself, or a copy whose Struct `field` has its references replaced."""
    struct = getattr(request, field)
    plain = downgraded(struct)
    if plain is struct:
        return request
    out = type(request)()
    out.CopyFrom(request)
    getattr(out, field).CopyFrom(plain)
    return out
