"""GC-SEC-155 secrets-high-entropy: a high-entropy value assigned to a secret-looking name (a warning).

``PASSWORD=...``, ``API_KEY: ...`` with a value of at least 16 characters and 3.5 bits of entropy per character,
in any value the secret guardrails read (user data per pool, container env, ConfigMaps, SSM parameters, Lambda
and ECS environments), decoded first (readers/secrets.py). Not a known token format, so the pack cannot be sure
it is a credential (a hash, a random id, a test fixture look the same): advisory, never blocking by default.
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport
from ..readers import secrets
from ..secret_sources import all_values


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    bits = float(cfg["minEntropyBits"])
    for v in all_values(args.resources):
        if not v.known:
            continue
        found = [f for f in secrets.scan(v.scanned, entropy_bits=bits) if not f.token]
        if found and not secrets.tokens(v.scanned):
            report(
                v.urn,
                f"{v.field} holds {secrets.describe(found)}: it may be a credential. Fix: if it is one, move it "
                "to a secret store and rotate it; if not, rename the variable.",
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-155",
    name="secrets-high-entropy",
    description="Values assigned to secret-looking names with high entropy are reported as possible credentials "
    "(a warning: no known token format).",
    category="security",
    severity=Severity.LOW,
    enforcement=EnforcementLevel.ADVISORY,
    remediation_steps="Move credentials to a secret store; rename variables that do not hold one.",
    references=("gitleaks generic-api-key",),
    kind="stack",
    surfaces=frozenset({"secrets"}),
    reads=frozenset(),
    validate=validate,
    config={
        "minEntropyBits": {
            "type": "number",
            "minimum": 0,
            "default": secrets.ENTROPY_BITS,
            "description": "Shannon entropy (bits per character) from which a value assigned to a secret-looking "
            "name is reported.",
        },
    },
)
