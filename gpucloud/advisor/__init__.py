"""GPU advisor (`gpucloud recommend`) and capacity-mix optimiser (`gpucloud mix`), on the catalog's figures.

Prices reach both only through gpucloud.advisor.rates.node_rates.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpucloud.advisor.mix import (
        MixInputError,
        MixRequest,
        optimal_interval,
        plan_mix,
        pool_advice,
        young_interval,
    )
    from gpucloud.advisor.recommend import AdvisorInputError, Job, recommend

# Imported on first use (PEP 562): every `gpucloud` command builds the full parser, and `recommend`'s options
# name the advisor's models; that must not load the mix optimiser (about 30 ms) for `gpucloud plan`.
_LAZY = {
    "MixInputError": "mix",
    "MixRequest": "mix",
    "optimal_interval": "mix",
    "plan_mix": "mix",
    "pool_advice": "mix",
    "young_interval": "mix",
    "AdvisorInputError": "recommend",
    "Job": "recommend",
    "recommend": "recommend",
}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AdvisorInputError",
    "Job",
    "MixInputError",
    "MixRequest",
    "optimal_interval",
    "plan_mix",
    "pool_advice",
    "recommend",
    "young_interval",
]
