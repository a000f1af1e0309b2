"""GPU advisor (`gpucloud recommend`) and capacity-mix optimiser (`gpucloud mix`), on the catalog's figures.

Prices reach both only through gpucloud.advisor.rates.node_rates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpucloud import lazy_exports

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
    __getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


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
