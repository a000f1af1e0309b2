"""The surface inventory: every resource type of the installed provider SDKs (pulumi-aws, pulumi-kubernetes) with
the guarded surfaces its inputs carry (starts compute, network exposure, principal-bearing documents, IAM grants,
data at rest, secrets, pod specs), generated from the SDKs' own input types (generate.py) and checked in as
inventory.json. A leaf: it reads its own data and nothing else of gpucloud, so the policy pack can read it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

INVENTORY = Path(__file__).resolve().parent / "inventory.json"


@functools.cache
def inventory() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(INVENTORY.read_text(encoding="utf-8"))
    return data


def types() -> dict[str, dict[str, list[str]]]:
    """Type token -> {surface: [property paths]} ({} for a type without a guarded surface)."""
    found: dict[str, dict[str, list[str]]] = inventory()["types"]
    return found


def surfaces() -> dict[str, str]:
    """Surface id -> what it covers, in the docs' order."""
    found: dict[str, str] = inventory()["surfaces"]
    return found
