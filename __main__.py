"""Root platform program: load this stack's spec, build the platform, export what team stacks need."""

import pulumi

from gpucloud.components.platform import build
from gpucloud.spec import load_platform

platform = build(load_platform())
for key, value in platform.exports.items():
    pulumi.export(key, value)
