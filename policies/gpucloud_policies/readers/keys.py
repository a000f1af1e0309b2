"""KMS key references: is the key a customer-managed key?

An alias under ``alias/aws/`` names an AWS-managed key (the KMS developer guide, "Aliases in AWS KMS": "alias
names that begin with aws/ are reserved for AWS managed keys"): it is set, and it is not customer-managed, so
"a customer-managed key" is not satisfied by ``alias/aws/s3`` or ``arn:aws:kms:...:alias/aws/ebs``. A computed
key ARN (unknown at preview) is read as set: the key it names is created by the program.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import UnknownValueError, get, present

_AWS_ALIAS = re.compile(r"^(?:arn:aws[a-z-]*:kms:[^:]*:[^:]*:)?alias/aws/", re.IGNORECASE)


def aws_managed(value: Any) -> bool:
    """A key reference that names an AWS-managed key (``alias/aws/...``, as a name or in an alias ARN)."""
    return isinstance(value, str) and bool(_AWS_ALIAS.match(value.strip()))


def aws_managed_in(props: Any, key: str) -> str | None:
    """The AWS-managed alias ``props[key]`` names, or None (absent, unknown, or another key)."""
    if not present(props, key):
        return None
    try:
        value = get(props, key)
    except UnknownValueError:
        return None
    return value.strip() if aws_managed(value) else None


def customer_managed(props: Any, key: str) -> bool:
    """``props[key]`` names a key the account manages: set (an unknown ARN counts as set), not ``alias/aws/``."""
    return present(props, key) and aws_managed_in(props, key) is None
