"""gpucloud: Pulumi toolkit for GPU fleets on AWS."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__version__ = "0.2.0"


def lazy_exports(
    package: str, namespace: dict[str, Any], owners: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's PEP 562 ``__getattr__`` and ``__dir__`` for names its submodules define: ``owners`` maps each
    name to its submodule, imported on the first read of one of its names, and the name is bound in the package
    (``namespace``, its globals) from then on. For packages whose submodules are dear to import (pydantic models,
    the mix optimiser) and are not needed by every command."""

    def getattr_(name: str) -> Any:
        module = owners.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(owners))

    return getattr_, dir_
