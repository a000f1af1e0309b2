"""Runs inside parliament's own virtualenv (scripts/tool_venv.py), never imported by gpucloud's tests.

Reads a JSON list of ``{"id": ..., "text": ...}`` documents on stdin and writes one JSON list of findings on
stdout: ``{"id", "issue", "severity", "detail"}`` for every finding parliament's default auditors report (the
same set its command line reports without --include-community-auditors).
"""

import json
import sys

import parliament
from parliament import analyze_policy_string


def main() -> None:
    found = []
    for document in json.load(sys.stdin):
        policy = analyze_policy_string(document["text"])
        for finding in policy.findings:
            severity = parliament.config.get(finding.issue, {}).get("severity", "")
            found.append({"id": document["id"], "issue": finding.issue, "severity": severity, "detail": finding.detail})
    json.dump({"version": parliament.__version__, "findings": found}, sys.stdout)


if __name__ == "__main__":
    main()
