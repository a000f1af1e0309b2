"""What the online path's modules share: the engine's constants, the one error they raise, enforcement levels."""

from __future__ import annotations

from typing import Any

from gpucloud.guard.packs import DEFAULT_PACK_DIR

# ---------------------------------------------------------------------------------------------------------------
# Launch


PACK_DIR = DEFAULT_PACK_DIR
LEVELS = ("advisory", "mandatory", "remediate", "disabled")
# The Python policy runner parses the engine address but never dials it (pulumi/policy/__main__.py), so no engine
# server is needed; the argument is still passed where the CLI passes it.
ENGINE_ADDRESS = "127.0.0.1:0"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"
CANT_RUN = "can't run "
# As the CLI's gRPC client (rpcutil.GrpcChannelOptions) and pulumi_policy: 400 MB messages, for large stacks.
_MAX_MESSAGE = 400 * 1024 * 1024
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", _MAX_MESSAGE), ("grpc.max_send_message_length", _MAX_MESSAGE)]


class OnlineError(Exception):
    """The pack did not start, did not answer in time, or answered an RPC with an error."""


def _level_enum(level: str) -> Any:
    from pulumi.runtime.proto import analyzer_pb2

    return analyzer_pb2.EnforcementLevel.Value(level.upper())


def _level_name(value: int) -> str:
    from pulumi.runtime.proto import analyzer_pb2

    return str(analyzer_pb2.EnforcementLevel.Name(value)).lower()
