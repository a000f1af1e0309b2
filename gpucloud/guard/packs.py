"""Where the library finds its policy pack. A pack plugs in; gpucloud never imports one by name.

A pack is any object with ``PACK_NAME``, ``GUARDRAILS``, ``by_name()``, ``initial_config()`` and
``policies(cost=None)``: the CrossGuard policy objects, with what a policy needs from the plan (the priced plan,
the report's ``cost`` section) passed in as ``cost``. Without it a pack must work on the resources alone, as it does
inside the Pulumi CLI. An optional ``RETIRED`` maps names of policies the pack folded away to where a config's entry
goes now (gpucloud.guard.config refuses such an entry with that text).

Lookup, first hit wins: a pack ``register()``-ed in this process; the ``gpucloud.policy_packs`` entry points of
the installed distributions; the pack directory (the one holding PulumiPolicy.yaml: gpucloud's own
``gpucloud.policies`` package, which is the repository's ``policies/``, unless ``GPUCLOUD_POLICY_PACK`` names
another), whose package exposes ``gpucloud_pack()``, as ``pulumi preview --policy-pack`` names the same directory.
gpucloud's own pack is imported as ``gpucloud.policies``; another directory is loaded under a private module name
(``_gpucloud_pack_<dir>``), so a pack never takes a top-level name such as ``policies`` from the user's program.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from gpucloud import package_data

ENTRY_POINT_GROUP = "gpucloud.policy_packs"
HOOK = "gpucloud_pack"
# gpucloud/policies: the repository's policies/ (gpucloud/policies links to it) or, installed, the wheel's copy.
DEFAULT_PACK_DIR = package_data.PACK_DIR.resolve()
OWN_PACK_MODULE = "gpucloud.policies"

_registered: list[Any] = []


class PackNotFoundError(LookupError):
    """No policy pack is registered, installed or present in the pack directory."""


def register(pack: Any) -> None:
    """Plug a pack in for this process (it wins over installed ones)."""
    _registered.insert(0, pack)


def unregister(pack: Any) -> None:
    if pack in _registered:
        _registered.remove(pack)


def pack_dir() -> Path:
    return Path(os.environ.get("GPUCLOUD_POLICY_PACK") or DEFAULT_PACK_DIR).resolve()


@functools.cache
def _installed_entry_points(scan: Any) -> tuple[Any, ...]:
    # Scanning every installed distribution's metadata costs ~70 ms and every evaluation looks the pack up; the
    # installed set does not change while a process runs, so each scanner (importlib's, or a test's stand-in)
    # scans once.
    return tuple(sorted(scan(group=ENTRY_POINT_GROUP), key=lambda e: e.name))


def _from_entry_points() -> Any | None:
    for ep in _installed_entry_points(metadata.entry_points):
        target = ep.load()
        return target() if callable(target) else target
    return None


def _from_directory(directory: Path) -> Any:
    init = directory / "__init__.py"
    if not (directory / "PulumiPolicy.yaml").is_file() or not init.is_file():
        raise PackNotFoundError(
            f"no policy pack at {directory}: it needs PulumiPolicy.yaml and an __init__.py exposing {HOOK}() "
            f"(or install one under the {ENTRY_POINT_GROUP!r} entry point group)"
        )
    if directory.resolve() == DEFAULT_PACK_DIR:
        module = importlib.import_module(OWN_PACK_MODULE)
    else:
        module = _load_foreign(directory, init)
    hook = getattr(module, HOOK, None)
    if hook is None:
        raise PackNotFoundError(f"{init} has no {HOOK}(): the pack does not plug into gpucloud")
    return hook()


def _load_foreign(directory: Path, init: Path) -> Any:
    name = "_gpucloud_pack_" + "".join(c if c.isalnum() else "_" for c in directory.name)
    module = sys.modules.get(name)
    if module is None or Path(getattr(module, "__file__", "") or "").resolve() != init.resolve():
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(directory)])
        if spec is None or spec.loader is None:
            raise PackNotFoundError(f"cannot load the policy pack package at {directory}")
        module = importlib.util.module_from_spec(spec)
        # Registered before it runs, so the pack's relative imports resolve to this package (and a later plain
        # import of the same package finds the same modules, not a second copy).
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def load() -> Any:
    if _registered:
        return _registered[0]
    found = _from_entry_points()
    return found if found is not None else _from_directory(pack_dir())


__all__ = ["ENTRY_POINT_GROUP", "PackNotFoundError", "load", "pack_dir", "register", "unregister"]
