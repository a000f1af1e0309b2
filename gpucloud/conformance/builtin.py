"""The built-in conformance checks, imported in the order they run.

Derivation comes first (Helm rendering adds the chart's objects to the context), then the checks that read the
plan and the derived objects. Each module registers its checks with `register_check` at import.
"""

from __future__ import annotations

from gpucloud.conformance import helm  # noqa: F401  (renders the charts: must run before the readers)
from gpucloud.conformance import k8s_schema  # noqa: F401
from gpucloud.conformance import aws_inputs  # noqa: F401  (provider input types, botocore API constraints)
from gpucloud.conformance import scheduling  # noqa: F401  (also registers "invariants")
