"""Field types shared by several spec sections."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

_DNS_LABEL = re.compile(r"^[a-z]([a-z0-9-]*[a-z0-9])?$")


def _dns_label(value: str) -> str:
    # Names flow into Kubernetes labels, IAM role names and AWS resource names, so the strictest
    # common form applies: lowercase RFC 1123 label.
    if not _DNS_LABEL.match(value):
        raise ValueError(
            f"'{value}' is not a lowercase DNS label: use a-z, 0-9 and '-', starting with a letter "
            "and not ending with '-'"
        )
    return value


Name = Annotated[
    str,
    Field(min_length=1, max_length=40, description="Lowercase DNS label (a-z, 0-9, '-'), at most 40 characters."),
    AfterValidator(_dns_label),
]

TagMap = Annotated[
    dict[
        Annotated[str, Field(min_length=1, max_length=128)],
        Annotated[str, Field(max_length=256)],
    ],
    Field(description="AWS tags (key up to 128 characters, value up to 256)."),
]
