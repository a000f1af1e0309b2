"""GC-SEC-154 no-plaintext-secrets: no credential in a value stored or shown in plain text.

Container environment variables (``env[].value`` of every pod spec the finder finds, registered or rendered),
ConfigMap ``data`` / ``binaryData`` (a ConfigMap is not a Secret: anyone who may read ConfigMaps reads it), SSM
parameters that are not ``SecureString``, Lambda function environments and ECS task definitions' container
environments are readable by whoever may describe the resource; so is every plain-text store the surface
inventory lists on any other type's secrets surface (environment maps and name/value lists, variables, parameters,
user data, connection strings: ``secret_sources.inventory_values``, at the inventory's own paths). The secret
reader (readers/secrets.py) decodes each value (base64, gzip, MIME, cloud-init) and reports the vendors' token
formats here (an error); a high-entropy value without a known format is only a warning (``secrets-high-entropy``).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport
from ..readers import secrets
from ..secret_sources import (
    CONFIG_MAP,
    ECS_TASK,
    LAMBDA_FUNCTION,
    SSM_PARAMETER,
    inventory_types,
    inventory_values,
    kubernetes,
    services,
)


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    resources = list(args.resources)
    for v in [*kubernetes(resources), *services(resources), *inventory_values(resources)]:
        if not v.known:
            continue  # a computed value is usually a reference to a secret store; nothing to read at preview
        found = secrets.tokens(v.scanned)
        if found:
            report(
                v.urn,
                f"{v.field} holds {secrets.describe(found)} in plain text. Fix: rotate it and keep it in a "
                "Secret (valueFrom.secretKeyRef), a SecureString parameter, or Secrets Manager referenced by ARN.",
            )


GUARDRAIL = Guardrail(
    id="GC-SEC-154",
    name="no-plaintext-secrets",
    description="Container env, ConfigMaps, non-SecureString SSM parameters, Lambda environments, ECS task "
    "definitions and every plain-text store of the surface inventory (environments, variables, parameters, user "
    "data, connection strings) must not hold credentials (known token formats, decoded through base64/gzip/MIME).",
    category="security",
    severity=Severity.CRITICAL,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Move the credential to a Kubernetes Secret, an SSM SecureString or Secrets Manager, "
    "reference it, and rotate it.",
    references=("CKV_AWS_45", "CKV_AWS_337", "CKV_K8S_35", "gitleaks v8.30.1 rules"),
    kind="stack",
    surfaces=frozenset({"secrets"}),
    reads=frozenset({CONFIG_MAP, SSM_PARAMETER, LAMBDA_FUNCTION, ECS_TASK, *inventory_types()}),
    validate=validate,
)
