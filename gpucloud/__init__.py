"""gpucloud: Pulumi toolkit for GPU fleets on AWS."""

__version__ = "0.2.0"
