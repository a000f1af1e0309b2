"""Pricing options: reserved commitments (RIs / Savings Plans) and the date that picks EKS support tiers.

Commitments live outside any plan (they are bought for the account), so a stack states them in its config:

    gpucloud:pricing:
      commitments:
        - match: p5            # instance family, or one instance type (p5.48xlarge)
          kind: savings-plan   # ri | savings-plan | compute-savings-plan
          term: 1y             # 1y | 3y
          discount: 0.40       # optional fraction off On-Demand; default: the catalog family's figure
          count: 2             # optional: instances covered; default: every On-Demand instance that matches
      asOf: "2026-11-15"       # optional: the date that picks EKS support tiers (default: today; CLI --as-of)

The region is not set here: it is the plan's (`aws:region`), see `price_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final, Literal

CONFIG_KEY: Final = "gpucloud:pricing"
CommitmentKind = Literal["ri", "savings-plan", "compute-savings-plan"]
Term = Literal["1y", "3y"]
_KINDS: Final = ("ri", "savings-plan", "compute-savings-plan")
_TERMS: Final = ("1y", "3y")
# "Compute Savings Plans sit a few points below EC2 Instance Savings Plans" (reference §2.2): a planning
# assumption of 5 points below the family's RI / Instance Savings Plan figure.
COMPUTE_SAVINGS_PLAN_GAP: Final = 0.05


class PricingConfigError(ValueError):
    """A bad `gpucloud:pricing` object; the message names every bad field path, one problem per line."""

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(
            "\n".join([f"invalid {CONFIG_KEY}: {len(self.problems)} {noun}", *(f"  - {p}" for p in self.problems)])
        )


@dataclass(frozen=True, slots=True)
class Commitment:
    match: str
    kind: CommitmentKind = "ri"
    term: Term = "1y"
    discount: float | None = None
    count: int | None = None

    def matches(self, instance_type: str) -> bool:
        return instance_type == self.match or instance_type.partition(".")[0] == self.match


@dataclass(frozen=True, slots=True)
class PricingOptions:
    commitments: tuple[Commitment, ...] = ()
    as_of: date | None = None
    root_volumes: bool = True
    # None: the region of the plan's default AWS provider, else us-east-1 with a warning.
    region: str | None = None

    @classmethod
    def from_config(cls, data: Any, where: str = CONFIG_KEY) -> PricingOptions:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise PricingConfigError(f"{where}: must be an object with a 'commitments' list")
        problems: list[str] = []
        unknown = sorted(set(data) - {"commitments", "rootVolumes", "asOf"})
        if unknown:
            problems.append(f"{where}: unknown keys {unknown}; allowed: commitments, rootVolumes, asOf")
        as_of: date | None = None
        raw_as_of = data.get("asOf")
        if raw_as_of is not None:
            try:
                # YAML reads an unquoted 2026-11-15 as a date, whose text is its ISO form, but 2026-11-15T10:00:00
                # as a datetime, a date subclass that cannot be compared with the support calendar's dates: its
                # text is no ISO date, so it is reported like any other bad value instead of failing in the engine.
                as_of = date.fromisoformat(str(raw_as_of))
            except ValueError:
                problems.append(f"{where}.asOf: {raw_as_of!r} is not an ISO date (YYYY-MM-DD)")
        raw = data.get("commitments") or []
        commitments: list[Commitment] = []
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            problems.append(f"{where}.commitments: must be a list")
            raw = []
        for i, entry in enumerate(raw):
            path = f"{where}.commitments[{i}]"
            if not isinstance(entry, Mapping):
                problems.append(f"{path}: must be an object with match, kind, term")
                continue
            bad = sorted(set(entry) - {"match", "kind", "term", "discount", "count"})
            if bad:
                problems.append(f"{path}: unknown keys {bad}; allowed: match, kind, term, discount, count")
            match = entry.get("match")
            if not isinstance(match, str) or not match:
                problems.append(f"{path}.match: give an instance family (p5) or type (p5.48xlarge)")
            kind = entry.get("kind", "ri")
            if kind not in _KINDS:
                problems.append(f"{path}.kind: {kind!r} is not one of {list(_KINDS)}")
            term = str(entry.get("term", "1y"))
            if term not in _TERMS:
                problems.append(f"{path}.term: {term!r} is not one of {list(_TERMS)}")
            discount = entry.get("discount")
            if discount is not None and (
                isinstance(discount, bool) or not isinstance(discount, int | float) or not 0 < discount < 1
            ):
                problems.append(f"{path}.discount: {discount!r} must be a fraction between 0 and 1 (0.4 = 40% off)")
            count = entry.get("count")
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
                problems.append(f"{path}.count: {count!r} must be a whole number of instances, at least 1")
            if not problems:
                commitments.append(
                    Commitment(
                        match=str(match),
                        kind=kind,
                        term=term,  # type: ignore[arg-type]
                        discount=float(discount) if discount is not None else None,
                        count=count,
                    )
                )
        root_volumes = data.get("rootVolumes", True)
        if not isinstance(root_volumes, bool):
            problems.append(f"{where}.rootVolumes: must be true or false")
        if problems:
            raise PricingConfigError(problems)
        return cls(commitments=tuple(commitments), root_volumes=bool(root_volumes), as_of=as_of)
