"""Per-family pricing handlers; importing this package registers each (gpucloud.cost.pricer.prices)."""

from gpucloud.cost.handlers import compute, karpenter, services

__all__ = ["compute", "karpenter", "services"]
