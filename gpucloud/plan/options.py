"""What a stack states about itself that decides how sure a conformance finding can be.

- `gpucloud:enforceChartLock` (true/false): charts must be the ones gpucloud's charts lock pins and vendors. On, a
  chart outside the lock (or at another version, from another repository) is an error; off, it is a warning: the
  plan cannot verify the chart, which says nothing about whether it exists upstream. A `helm.v3.Chart` or
  `helm.v4.Chart` whose chart nothing vendors is bad input (exit 2) when on; off, its objects are left out of
  the plan with a warning (a preview would fetch the chart). Default: on for a stack with
  a gpucloud spec (`gpucloud:platform` or `gpucloud:team`: its charts come from gpucloud's components, which
  install pinned charts only), off for any other program.
- `gpucloud:externalDevicePlugins` (true/false): the NVIDIA / EFA / Neuron device plugins of the stack's clusters
  are installed outside this program (GitOps, another stack, the AMI). Its GPU pools then advertise their devices
  without a plugin in the plan. Default: off.

Both are plain stack config keys (`pulumi config set gpucloud:enforceChartLock true`), read by `gpucloud plan`
and ignored by the providers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENFORCE_CHART_LOCK = "gpucloud:enforceChartLock"
EXTERNAL_DEVICE_PLUGINS = "gpucloud:externalDevicePlugins"
SPEC_KEYS = ("gpucloud:platform", "gpucloud:team")


class StackOptionError(ValueError):
    """A stack option that is not true or false."""


def _flag(config: Mapping[str, Any], key: str, default: bool, meaning: str, stack_file: str) -> bool:
    value: Any = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    where = f" in {stack_file}" if stack_file else ""
    raise StackOptionError(f"{key}{where}: {value!r} is not true or false; set it to true ({meaning}) or false")


def lock_enforced(config: Mapping[str, Any], stack_file: str = "") -> bool:
    """Whether charts outside gpucloud's charts lock are errors for this stack (see the module docstring)."""
    own = any(key in config for key in SPEC_KEYS)
    return _flag(config, ENFORCE_CHART_LOCK, own, "every chart must be pinned in gpucloud's charts lock", stack_file)


def external_device_plugins(config: Mapping[str, Any], stack_file: str = "") -> bool:
    """Whether the stack states that its clusters' device plugins come from outside this program."""
    return _flag(
        config, EXTERNAL_DEVICE_PLUGINS, False, "the device plugins are installed outside this program", stack_file
    )
