"""GPU advisor (`gpucloud recommend`) and capacity-mix planner (`gpucloud mix`), on the catalog's figures."""

from gpucloud.advisor.mix import MixInputError, MixRequest, plan_mix, young_daly
from gpucloud.advisor.recommend import AdvisorInputError, WorkloadSpec, memory_requirement, recommend

__all__ = [
    "AdvisorInputError",
    "MixInputError",
    "MixRequest",
    "WorkloadSpec",
    "memory_requirement",
    "plan_mix",
    "recommend",
    "young_daly",
]
