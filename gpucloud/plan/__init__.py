"""Offline plan engine: run any Pulumi Python program under recording mocks and report what it would create."""

from gpucloud.plan.engine import PlanInputError, Project, run_callable, run_program
from gpucloud.plan.model import SECRET, UNKNOWN, Plan, ResourceRecord, is_unknown

__all__ = [
    "SECRET",
    "UNKNOWN",
    "Plan",
    "PlanInputError",
    "Project",
    "ResourceRecord",
    "is_unknown",
    "run_callable",
    "run_program",
]
