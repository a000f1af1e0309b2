"""gpucloud's CrossGuard guardrails: one guardrail per module, registered in ``registry``.

The same policy objects run in the Pulumi CLI (``pulumi preview --policy-pack policies``) and offline in
``gpucloud plan`` (gpucloud.guard). This package imports only leaf modules of gpucloud (catalog, spec).
"""

from .base import PACK_NAME, UNDECIDED_MARK, Guardrail
from .pack import PACK
from .registry import GUARDRAILS, by_name, initial_config, policies

__all__ = [
    "GUARDRAILS",
    "PACK",
    "PACK_NAME",
    "UNDECIDED_MARK",
    "Guardrail",
    "by_name",
    "initial_config",
    "policies",
]
