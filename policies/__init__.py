"""gpucloud's CrossGuard policy pack (the importable code lives in gpucloud_policies).

``gpucloud_pack()`` is how the pack plugs into gpucloud (gpucloud.guard.packs finds it here, or through the
``gpucloud.policy_packs`` entry point); gpucloud itself never imports this package.
"""

from typing import Any


def gpucloud_pack() -> Any:
    from .gpucloud_policies import PACK

    return PACK
