"""Triage helper for the surface inventory: print the scope-table lines for (type, surface) pairs that no guardrail
reads and the scope table does not list, as "not yet read: <surface>", to review and paste into
policies/gpucloud_policies/scope.json (or answer with a reader). Not run by the tests.

    PYTHONPATH=. .venv/bin/python scripts/surface_triage.py [--write]

``--write`` adds them to scope.json itself (after a provider upgrade: then review each new line) and refreshes the
coverage table in docs/guardrails.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpucloud.policies.gpucloud_policies import coverage
from gpucloud.surface.generate import write_atomic


def render(data: dict[str, object], types: dict[str, dict[str, str]]) -> str:
    def block(entries: dict[str, object]) -> str:
        return ",\n".join(f"  {json.dumps(t)}: {json.dumps(entries[t])}" for t in sorted(entries))

    reviewed: dict[str, object] = data.get("reviewed", {})  # type: ignore[assignment]
    return (
        f'{{\n "about": {json.dumps(data["about"])},\n "reviewed": {{\n{block(reviewed)}\n }},\n'
        f' "types": {{\n{block(types)}\n }}\n}}\n'
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = json.loads(coverage.SCOPE_FILE.read_text(encoding="utf-8"))
    types: dict[str, dict[str, str]] = data["types"]
    missing = [p for p in coverage.pairs() if p.status == "untriaged"]
    for p in missing:
        types.setdefault(p.token, {})[p.surface] = f"{coverage.NOT_YET_READ}: {p.surface}"
        print(json.dumps({p.token: {p.surface: types[p.token][p.surface]}}))
    # Entries no longer needed (a reader was added, or the type left the SDK) are dropped.
    read = {(p.token, p.surface) for p in coverage.pairs() if p.status == "read"}
    known = coverage.surface.types()
    for token in list(types):
        kept = {s: r for s, r in types[token].items() if s in known.get(token, {}) and (token, s) not in read}
        if kept:
            types[token] = kept
        else:
            del types[token]
    if args.write:
        write_atomic(coverage.SCOPE_FILE, render(data, types))
        coverage.scope.cache_clear()
        doc = Path(__file__).resolve().parents[1] / "docs" / "guardrails.md"
        write_atomic(doc, coverage.with_table(doc.read_text(encoding="utf-8")))
    print(f"{len(missing)} untriaged pair(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
