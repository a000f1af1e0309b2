"""Compatibility import path: the node pool component lives in the components.nodepools package."""

from components.nodepools import GpuNodePool, GpuNodePoolConfig

__all__ = ["GpuNodePool", "GpuNodePoolConfig"]
