"""SARIF 2.1.0 for code-scanning UIs: one rule per guardrail (metadata from the registry), one result per
violation, the resource URN as the logical location.

Code scanning needs a file to pin each alert to; a plan knows resources, not source lines, so every result
points at the Pulumi project file (``artifact_uri``) and carries the URN as its logical location.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from gpucloud.report.impact_render import impact_sarif_run

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SCHEMA_FILE = "sarif-2.1.0-subset.schema.json"
INFORMATION_URI = "https://github.com/gpucloud/gpucloud/blob/main/docs/guardrails.md"

# GitHub code scanning ranks alerts by security-severity (0-10): critical >= 9, high >= 7, medium >= 4.
_SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}


def load_schema() -> dict[str, Any]:
    """The SARIF schema shipped with gpucloud (a faithful subset of OASIS sarif-schema-2.1.0.json)."""
    schema: dict[str, Any] = json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text("utf-8"))
    return schema


def _level(enforcement: str) -> str:
    return "error" if enforcement == "mandatory" else "warning"


def _rule(g: Any) -> dict[str, Any]:
    level = g.enforcement.value if g.enforcement is not None else "advisory"
    return {
        "id": g.id,
        "name": g.name,
        "shortDescription": {"text": g.description},
        "fullDescription": {"text": g.description},
        "help": {"text": g.remediation_steps, "markdown": f"**Fix:** {g.remediation_steps}"},
        "helpUri": f"{INFORMATION_URI}#{g.id.lower()}",
        "defaultConfiguration": {"level": _level(level), "enabled": level != "disabled"},
        "properties": {
            "tags": sorted({g.category, *g.references}),
            "security-severity": _SECURITY_SEVERITY[g.severity.value],
            "problem.severity": "error" if g.severity.value in ("critical", "high") else "warning",
            "enforcement": level,
            "references": list(g.references),
        },
    }


def to_sarif(report: Mapping[str, Any], artifact_uri: str = "Pulumi.yaml") -> dict[str, Any]:
    from gpucloud.guard import load_pack

    pack = load_pack()
    guardrails = list(pack.GUARDRAILS)
    index = {g.name: i for i, g in enumerate(guardrails)}
    policies = report.get("policies") or {}
    stack = f"{report.get('project', '')}/{report.get('stack', '')}"
    results = []
    for v in policies.get("violations") or []:
        name = str(v.get("policy", ""))
        urn = str(v.get("urn", ""))
        g = guardrails[index[name]] if name in index else None
        fingerprint = hashlib.sha256(f"{name}\0{urn}\0{v.get('message', '')}".encode()).hexdigest()[:32]
        result: dict[str, Any] = {
            "ruleId": g.id if g is not None else name,
            "level": _level(str(v.get("enforcement", ""))),
            "message": {"text": str(v.get("message", "")) or name},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": artifact_uri}, "region": {"startLine": 1}},
                    "logicalLocations": [
                        {"name": urn.rsplit("::", 1)[-1], "fullyQualifiedName": urn, "kind": "resource"}
                    ],
                }
            ],
            "partialFingerprints": {"gpucloudViolation/v1": fingerprint},
            "properties": {
                "policy": name,
                "enforcement": str(v.get("enforcement", "")),
                "severity": str(v.get("severity", "")),
                "urn": urn,
                "stack": stack,
            },
        }
        if isinstance(v.get("undecided"), Mapping):
            result["properties"]["undecided"] = dict(v["undecided"])
        if g is not None:
            result["ruleIndex"] = index[name]
        results.append(result)
    # Undecided resources under unknowns 'warn' and what remediation would change: notes, so a code-scanning
    # view shows them next to the violations (a blocked undecided resource is already a result above).
    notes = [
        (u, "undecided", f"could not be decided at preview: {u.get('field') or 'stack'} is unknown ({u.get('reason')})")
        for u in policies.get("undecided") or []
        if u.get("action") != "block"
    ] + [
        (r, "remediation", f"remediate sets {json.dumps(r.get('changes') or {}, sort_keys=True)}")
        for r in policies.get("remediations") or []
    ]
    for entry, kind, text in notes:
        name, urn = str(entry.get("policy", "")), str(entry.get("urn", ""))
        g = guardrails[index[name]] if name in index else None
        fingerprint = hashlib.sha256(f"{name}\0{urn}\0{text}".encode()).hexdigest()[:32]
        note: dict[str, Any] = {
            "ruleId": g.id if g is not None else name,
            "level": "note",
            "message": {"text": text},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": artifact_uri}, "region": {"startLine": 1}},
                    "logicalLocations": [
                        {"name": urn.rsplit("::", 1)[-1], "fullyQualifiedName": urn, "kind": "resource"}
                    ],
                }
            ],
            "partialFingerprints": {"gpucloudViolation/v1": fingerprint},
            "properties": {"policy": name, "urn": urn, "stack": stack, kind: {k: v for k, v in entry.items()}},
        }
        if g is not None:
            note["ruleIndex"] = index[name]
        results.append(note)
    runs: list[dict[str, Any]] = [
        {
            "tool": {
                "driver": {
                    "name": "gpucloud-guardrails",
                    "informationUri": INFORMATION_URI,
                    "rules": [_rule(g) for g in guardrails],
                }
            },
            "automationDetails": {"id": f"gpucloud-plan/{stack}/"},
            "results": results,
            "properties": {
                "not_evaluated": len(policies.get("not_evaluated") or []),
                "undecided": len(policies.get("undecided") or []),
                # Remote components without an expansion model: what they create is in no result above.
                "opaque_components": [dict(o) for o in report.get("opaque_components") or []],
                "mandatory_violations": int(policies.get("mandatory_violations", 0)),
            },
        }
    ]
    conformance = report.get("conformance")
    if isinstance(conformance, Mapping):
        runs.append(_conformance_run(conformance, stack, artifact_uri))
    impact = report.get("change_impact")
    if isinstance(impact, Mapping):
        # Change impact (plan --compare): data replaced or deleted, GPU pools disrupted (docs/change-impact.md).
        runs.append(impact_sarif_run(impact, stack, artifact_uri))
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": runs}


CONFORMANCE_URI = "https://github.com/gpucloud/gpucloud/blob/main/docs/conformance.md"


def _conformance_run(conformance: Mapping[str, Any], stack: str, artifact_uri: str) -> dict[str, Any]:
    """A second run: one rule per conformance check, one result per finding (error or warning)."""
    findings = list(conformance.get("findings") or [])
    checks = sorted({str(f.get("check", "")) for f in findings} | set(conformance.get("checks") or []))
    index = {c: i for i, c in enumerate(checks)}
    results = []
    for f in findings:
        check = str(f.get("check", ""))
        urn = str(f.get("urn", ""))
        where = urn.rsplit("::", 1)[-1] + (f" {f['object']}" if f.get("object") else "")
        text = f"{where}: {f.get('field')}: {f.get('message')}" if f.get("field") else f"{where}: {f.get('message')}"
        fingerprint = hashlib.sha256(
            "\0".join(str(f.get(k, "")) for k in ("check", "urn", "object", "field", "message")).encode()
        ).hexdigest()[:32]
        results.append(
            {
                "ruleId": check,
                "ruleIndex": index[check],
                "level": "error" if f.get("severity") == "error" else "warning",
                "message": {"text": f"{text} (expected: {f.get('expected')}; source: {f.get('source')})"},
                "locations": [
                    {
                        "physicalLocation": {"artifactLocation": {"uri": artifact_uri}, "region": {"startLine": 1}},
                        "logicalLocations": [
                            {"name": urn.rsplit("::", 1)[-1], "fullyQualifiedName": urn, "kind": "resource"}
                        ],
                    }
                ],
                "partialFingerprints": {"gpucloudConformance/v1": fingerprint},
                "properties": {
                    k: f.get(k) for k in ("check", "severity", "urn", "object", "field", "expected", "source")
                }
                | {"stack": stack},
            }
        )
    return {
        "tool": {
            "driver": {
                "name": "gpucloud-conformance",
                "informationUri": CONFORMANCE_URI,
                "rules": [
                    {
                        "id": c,
                        "name": c,
                        "shortDescription": {"text": f"conformance check {c}"},
                        "helpUri": f"{CONFORMANCE_URI}#{c.replace('.', '-')}",
                        "defaultConfiguration": {"level": "error"},
                    }
                    for c in checks
                ],
            }
        },
        "automationDetails": {"id": f"gpucloud-conformance/{stack}/"},
        "results": results,
        "properties": {
            "kubernetes_version": conformance.get("kubernetes_version"),
            "errors": int(conformance.get("errors", 0)),
            "warnings": int(conformance.get("warnings", 0)),
        },
    }
