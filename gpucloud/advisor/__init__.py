"""GPU advisor (`gpucloud recommend`) and capacity-mix optimiser (`gpucloud mix`), on the catalog's figures.

Prices reach both only through gpucloud.advisor.rates.node_rates.
"""

from gpucloud.advisor.mix import MixInputError, MixRequest, optimal_interval, plan_mix, pool_advice, young_interval
from gpucloud.advisor.recommend import AdvisorInputError, Job, recommend

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
