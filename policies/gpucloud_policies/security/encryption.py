"""The one reader of "encrypted at rest with a customer-managed KMS key" for resources whose pulumi-aws input
type has an encrypted flag and a ``kms_key_id`` (EFS, RDS) or only the key (FSx, always encrypted).

Each policy keeps its own field names and wording; the order of the questions (the flag before the key, the key
only when the config requires one) and the message shape are decided here once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..base import get, present, truthy
from ..readers import keys


@dataclass(frozen=True)
class Gap:
    """What keeps a resource from a customer-managed key: its flag unset or false, or its key missing."""

    field: str
    value: Any
    is_flag: bool

    @property
    def shown(self) -> str:
        return "unset" if self.value is None else repr(self.value)


@dataclass(frozen=True)
class AtRest:
    """One resource type's encryption inputs (engine property names) and what each gap means for it."""

    flag: str | None
    unencrypted: str
    flag_fix: str
    aws_managed: str
    key_fix: str
    key: str = "kmsKeyId"

    def gap(self, props: Any, require_key: bool = True, flag_inherited: bool = False) -> Gap | None:
        """The first gap: the flag (unless the type has none or inherits it, as a read replica does), then the
        key when required. Reading stops at the first gap, so an unknown key never hides a false flag."""
        if self.flag is not None and not flag_inherited:
            raw = get(props, self.flag)
            if not truthy(raw):
                return Gap(self.flag, raw, is_flag=True)
        if require_key and not present(props, self.key):
            return Gap(self.key, None, is_flag=False)
        alias = keys.aws_managed_in(props, self.key) if require_key else None
        if alias is not None:
            return Gap(self.key, alias, is_flag=False)
        return None

    def message(self, gap: Gap) -> str:
        if gap.is_flag:
            return f"{gap.field} is {gap.shown}: {self.unencrypted}. Fix: {self.flag_fix}."
        if gap.value is not None:
            return (
                f"{gap.field} is {gap.value!r}, an AWS-managed key alias (alias/aws/...), not a customer-managed "
                f"key: {self.aws_managed}. Fix: {self.key_fix}."
            )
        return f"{gap.field} is not set: {self.aws_managed}. Fix: {self.key_fix}."

    def check(
        self, props: Any, report: Callable[[str], None], require_key: bool = True, flag_inherited: bool = False
    ) -> None:
        found = self.gap(props, require_key, flag_inherited)
        if found is not None:
            report(self.message(found))
