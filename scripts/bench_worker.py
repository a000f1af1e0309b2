"""The gpucloud side of scripts/bench_checkov.py, in a process of its own: plan and judge every twin of the given
corpus cases as `gpucloud plan` does, and print {case/side: [policy, ...]} as one JSON line.

    python scripts/bench_worker.py CASE_DIR [CASE_DIR ...]

It runs as the `gpucloud` command does (`gpucloud.cli.one_shot`: no cyclic collector, no interpreter teardown) and
imports nothing of the comparison itself (Checkov's check map, the recorder), so what the bench times is gpucloud's
start-up and work, not the compilation of the 500-line comparison script.
"""

from __future__ import annotations

import functools
import json
import runpy
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def expectation(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "expect.json").read_text())
    return data


def _merge(base: Any, override: Any) -> Any:
    """As the corpus runner: an override merges into the config's entry; a bare level stays as enforcementLevel."""
    if isinstance(override, dict):
        start = dict(base) if isinstance(base, dict) else ({"enforcementLevel": base} if isinstance(base, str) else {})
        start.update(override)
        return start
    return override


def policy_config(exp: dict[str, Any]) -> dict[str, Any]:
    given = exp.get("config", "prod")
    config: dict[str, Any] = (
        json.loads((ROOT / "policies" / "configs" / f"{given}.json").read_text())
        if isinstance(given, str)
        else dict(given)
    )
    for key, value in (exp.get("config_overrides") or {}).items():
        config[key] = _merge(config.get(key), value)
    return config


def gpucloud_worker(dirs: list[str]) -> None:
    """Runs in the subprocess: plan and judge each twin as `gpucloud plan` does, print {case/side: [policy, ...]}."""
    from gpucloud.plan import run_callable
    from gpucloud.report.pipeline import build_report

    out: dict[str, list[str]] = {}
    for name in dirs:
        d = Path(name)
        exp = expectation(d)
        for side in ("bad", "good"):
            program = d / f"{side}.py"
            if not program.is_file():
                continue
            plan = run_callable(
                functools.partial(runpy.run_path, str(program), run_name="__main__"),
                project="corpus",
                stack="prod",
                region=exp.get("region", "us-east-1"),
            )
            section = build_report(plan, policy_config=policy_config(exp), conformance=False)["policies"]
            # Every violation at any enforcement level counts, undecided-and-blocking ones included.
            out[f"{d.name}/{side}"] = sorted({str(v["policy"]) for v in section["violations"]})
    print(json.dumps(out))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from gpucloud.cli import one_shot

    one_shot(lambda: gpucloud_worker(sys.argv[1:]) or 0)
