"""Where one rate came from, as the reports print it: a published price (its source and date), a price refreshed
from AWS's APIs (its date), or an estimate (with the rule that made it).

The kind is read from the rate's source id as the price book and the rate table write them: ``<source>+family-
discount`` and ``<source>+family-spot-discount`` are the book's planning estimates (catalog family discounts, see
gpucloud/catalog/instances.json ``families``), the refresh's API ids are refreshed prices, and everything else is a
dated published figure (the snapshot's and the rate table's sources).
"""

from __future__ import annotations

from typing import Any, Final

# The source ids `gpucloud prices refresh` records (gpucloud/prices/refresh.py, book.py _CACHE_SOURCE).
REFRESHED_SOURCES: Final = frozenset(
    {"aws-price-list-api", "ec2-spot-price-history", "ec2-capacity-block-offerings", "ec2-offerings", "price-cache"}
)
ESTIMATE_RULES: Final[dict[str, str]] = {
    "+family-spot-discount": "spot estimate: On-Demand x (1 - the family's planning spot discount), not a price",
    "+family-discount": "commitment estimate: On-Demand x (1 - the family's planning Reserved Instance discount)",
}
KINDS: Final = ("published", "refreshed", "estimate")


def rate_basis(source: str | None, as_of: str | None) -> dict[str, Any]:
    """{"kind", "source", "as_of", "rule"}: ``rule`` says how an estimate was made (None otherwise)."""
    text = source or ""
    for suffix, rule in ESTIMATE_RULES.items():
        if suffix in text:
            return {"kind": "estimate", "source": text, "as_of": as_of, "rule": rule}
    parts = set(text.split("+")) if text else set()
    if parts and parts <= REFRESHED_SOURCES:
        return {"kind": "refreshed", "source": text, "as_of": as_of, "rule": None}
    return {"kind": "published", "source": text or None, "as_of": as_of, "rule": None}


def label(basis: dict[str, Any]) -> str:
    """One short line: 'published vantage 2026-01-21', 'refreshed 2026-11-30', 'estimate: <rule>'."""
    if basis.get("kind") == "estimate":
        return f"estimate ({basis.get('source')}, {basis.get('as_of') or 'undated'}): {basis.get('rule')}"
    when = basis.get("as_of") or "undated"
    if basis.get("kind") == "refreshed":
        return f"refreshed {basis.get('source')} {when}"
    return f"published {basis.get('source') or 'unknown source'} {when}"
