"""Resource transforms (`transforms` option, `register_resource_transform`) run as the engine runs them.

The SDK registers each transform with its callback server and sends the engine a token; the engine calls the
callback with a TransformRequest (type, name, custom, parent, properties, options) before it does anything
else with a registration, and uses the returned properties and options. The mock monitor stores the tokens and
never calls them, so the offline plan recorded untransformed inputs. Here the monitor calls the SDK's own
callback, on the program's event loop, with the same request the engine builds, and applies the response.

(The older `transformations` option and `register_stack_transformation` run inside the SDK before the
registration is sent, so they need nothing here.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from typing import Any


class TransformError(Exception):
    """A transform raised, or named a callback that no longer exists."""


def _callback(token: str, target: str) -> tuple[Any, asyncio.AbstractEventLoop] | None:
    from pulumi.runtime._callbacks import _CallbackServicer

    for servicer in _CallbackServicer._servicers:
        fn = servicer._callbacks.get(token)
        if fn is not None and (not target or servicer._target == target):
            return fn, servicer._loop
    return None


def _options(request: Any) -> Any:
    from pulumi.runtime.proto import resource_pb2

    opts = resource_pb2.TransformResourceOptions(
        depends_on=list(request.dependencies),
        protect=request.protect,
        ignore_changes=list(request.ignoreChanges),
        replace_on_changes=list(request.replaceOnChanges),
        version=request.version,
        provider=request.provider,
        plugin_download_url=request.pluginDownloadURL,
        retain_on_delete=request.retainOnDelete,
        deleted_with=request.deletedWith,
        additional_secret_outputs=list(request.additionalSecretOutputs),
    )
    if request.deleteBeforeReplaceDefined:
        opts.delete_before_replace = request.deleteBeforeReplace
    for key, ref in request.providers.items():
        opts.providers[key] = ref
    return opts


def apply(request: Any, chain: Sequence[Any], timeout: float | None = None) -> Any:
    """A copy of a RegisterResourceRequest with every transform in `chain` (Callback messages) applied in order.

    `timeout` bounds the wait for each callback (the plan's deadline): a transform that never returns fails the
    registration instead of hanging the executor thread the SDK called the monitor from."""
    from pulumi.runtime.proto import resource_pb2

    transform_request = resource_pb2.TransformRequest(
        type=request.type,
        name=request.name,
        custom=request.custom,
        parent=request.parent,
        properties=request.object,
        options=_options(request),
    )
    for callback in chain:
        found = _callback(callback.token, callback.target)
        if found is None:
            raise TransformError(f"{request.type} {request.name}: transform callback {callback.token} is gone")
        fn, loop = found
        try:
            future = asyncio.run_coroutine_threadsafe(fn(transform_request.SerializeToString()), loop)
            response = future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TransformError(
                f"transform on {request.type} '{request.name}' did not return within the plan's time limit"
            ) from None
        except Exception as exc:  # a user transform can raise anything; the plan names it
            raise TransformError(
                f"transform on {request.type} '{request.name}' raised {type(exc).__name__}: {exc}"
            ) from None
        transform_request.properties.CopyFrom(response.properties)
        if response.HasField("options"):
            transform_request.options.CopyFrom(response.options)
    out = type(request)()
    out.CopyFrom(request)
    out.object.CopyFrom(transform_request.properties)
    opts = transform_request.options
    out.protect = opts.protect
    del out.dependencies[:]
    out.dependencies.extend(opts.depends_on)
    del out.ignoreChanges[:]
    out.ignoreChanges.extend(opts.ignore_changes)
    del out.replaceOnChanges[:]
    out.replaceOnChanges.extend(opts.replace_on_changes)
    out.retainOnDelete = opts.retain_on_delete
    out.deletedWith = opts.deleted_with
    out.provider = opts.provider
    del out.additionalSecretOutputs[:]
    out.additionalSecretOutputs.extend(opts.additional_secret_outputs)
    if opts.HasField("delete_before_replace"):
        out.deleteBeforeReplaceDefined = True
        out.deleteBeforeReplace = opts.delete_before_replace
    return out
