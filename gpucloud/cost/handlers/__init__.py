"""Per-family pricing handlers; importing this package registers each (gpucloud.cost.pricer.prices)."""

from gpucloud.cost.handlers import compute, karpenter, kube_lb, kube_volumes, services

__all__ = ["compute", "karpenter", "kube_lb", "kube_volumes", "services"]
