"""Where gpucloud's package data lives: the one place every reader asks, in a checkout and in an installed wheel.

Everything the components, the policy pack and conformance read at run time ships inside the `gpucloud` package:
the vendored charts, CRDs and manifests (`gpucloud/vendor`, a link to the repository's top-level `vendor/` that
setuptools copies through into the wheel, as it does `gpucloud/components` and `gpucloud/policies`), the policy
pack with its `PulumiPolicy.yaml` and per-environment configs, the team-project template, the JSON schemas and the
charts lock. Nothing here computes a repository root: an installed gpucloud has none, and a path derived from
this file is right in both layouts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

PACKAGE_ROOT: Final = Path(__file__).resolve().parent
# vendor/ as the repository lays it out; the charts lock's `path:` entries (vendor/upstream/...) are relative to
# the package root, so the same lock file resolves in a checkout and in site-packages.
VENDOR: Final = PACKAGE_ROOT / "vendor"
UPSTREAM: Final = VENDOR / "upstream"
CHARTS: Final = UPSTREAM / "charts"
# The CrossGuard pack (gpucloud.policies): the directory `pulumi preview --policy-pack` names.
PACK_DIR: Final = PACKAGE_ROOT / "policies"
POLICY_CONFIGS: Final = PACK_DIR / "configs"
TEMPLATES: Final = PACKAGE_ROOT / "templates"


def data_path(relative: str | Path) -> Path:
    """A package-data path given relative to the package root (as the charts lock writes them)."""
    return PACKAGE_ROOT / relative


__all__ = ["CHARTS", "PACKAGE_ROOT", "PACK_DIR", "POLICY_CONFIGS", "TEMPLATES", "UPSTREAM", "VENDOR"]
