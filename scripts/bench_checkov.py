"""Checkov comparison on the red-team corpus: recall, precision and wall time of Checkov and of gpucloud's pack.

    python scripts/bench_checkov.py [--corpus tests/guard/corpus] [--venv DIR] [--only PREFIX ...] [--json FILE]

Checkov 3.3.30 runs in its own virtualenv (created on first use with `pip install checkov==3.3.30`; default
~/.cache/gpucloud/checkov-3.3.30, or --venv / $GPUCLOUD_CHECKOV_VENV) over every case's bad.tf and good.tf, in one
`checkov -d` run; gpucloud plans every case's bad.py and good.py and evaluates the pack with the case's config, in
one subprocess of this interpreter. Both wall times include each tool's start-up.

Scoring, the same for both tools:
- a *bad* twin is a hit when the tool reports at least one finding of the case's violation class: for gpucloud a
  violation of a policy listed in expect.json "bad"; for Checkov a failed check whose ID maps to one of those
  policies in CHECKOV_IDS below (taken from the sources listed in /work/shared/reference/guardrails.md);
- any finding on a *good* twin is a false positive (strict), as the issue defines it; the "mapped" column counts
  only Checkov findings whose IDs map to a corpus policy, to separate real disagreements from best-practice noise;
- recall = hit bad twins / bad twins; precision = hit bad twins / (hit bad twins + flagged good twins).
This is a script, not a test: it needs PyPI once and takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHECKOV_VERSION = "3.3.30"

# gpucloud policy -> the Checkov checks that detect the same violation class (Checkov check IDs from the sources
# column of the guardrails reference and Checkov's own check titles). A policy absent here has no Checkov check.
CHECKOV_IDS: dict[str, frozenset[str]] = {
    "efs-encrypted-cmk": frozenset({"CKV_AWS_42", "CKV_AWS_184"}),
    "rds-encrypted-cmk": frozenset({"CKV_AWS_16", "CKV_AWS_96", "CKV_AWS_327"}),
    "kms-key-rotation": frozenset({"CKV_AWS_7"}),
    "lt-ebs-encrypted": frozenset({"CKV_AWS_3", "CKV_AWS_189", "CKV_AWS_8"}),
    "ebs-encryption-by-default": frozenset({"CKV_AWS_106"}),
    "fsx-persistent-cmk": frozenset({"CKV_AWS_178", "CKV_AWS_179", "CKV_AWS_190", "CKV_AWS_203"}),
    "s3-sse-kms": frozenset({"CKV_AWS_19", "CKV_AWS_145"}),
    "s3-public-access-blocked": frozenset({"CKV_AWS_53", "CKV_AWS_54", "CKV_AWS_55", "CKV_AWS_56", "CKV2_AWS_6"}),
    "s3-tls-only": frozenset({"CKV_AWS_379"}),
    "cloudtrail-hardened": frozenset({"CKV_AWS_35", "CKV_AWS_36", "CKV_AWS_67"}),
    "vpc-flow-logs": frozenset({"CKV2_AWS_11"}),
    # Pod Security Standards baseline controls as Checkov names them (privileged, host PID/IPC/network, added
    # capabilities, host ports, docker socket hostPath, SYS_ADMIN).
    "k8s-pod-security": frozenset(
        {"CKV_K8S_16", "CKV_K8S_17", "CKV_K8S_18", "CKV_K8S_19", "CKV_K8S_25", "CKV_K8S_26", "CKV_K8S_27", "CKV_K8S_39"}
    ),
    "k8s-no-public-load-balancer": frozenset(),
    # Policies of the other corpus areas (capacity, world, IAM, ...) are mapped by their engineers; an unmapped
    # policy simply counts as a Checkov miss.
    "sg-no-world-ingress": frozenset({"CKV_AWS_24", "CKV_AWS_25", "CKV_AWS_260", "CKV_AWS_277"}),
    "iam-no-admin-star": frozenset(
        {"CKV_AWS_1", "CKV_AWS_49", "CKV_AWS_62", "CKV_AWS_63", "CKV_AWS_355", "CKV_AWS_356", "CKV2_AWS_40"}
    ),
    "lt-imdsv2": frozenset({"CKV_AWS_79"}),
    "lt-no-public-ip": frozenset({"CKV_AWS_88"}),
    "lt-no-secrets-in-userdata": frozenset({"CKV_AWS_46"}),
    "eks-endpoint-private": frozenset({"CKV_AWS_38", "CKV_AWS_39"}),
    "eks-secrets-cmk": frozenset({"CKV_AWS_58"}),
    "eks-control-plane-logging": frozenset({"CKV_AWS_37"}),
    "checkpoint-bucket-versioning": frozenset({"CKV_AWS_21"}),
    "cost-tags": frozenset({"CKV_AWS_153"}),
}


def cases(corpus: Path, only: list[str]) -> list[Path]:
    out = []
    for d in sorted(corpus.iterdir()):
        if d.is_dir() and (d / "expect.json").is_file() and (not only or any(d.name.startswith(p) for p in only)):
            out.append(d)
    return out


# ------------------------------------------------------------------------------------------------- Checkov


def checkov_bin(venv: Path) -> Path:
    exe = venv / "bin" / "checkov"
    if exe.is_file():
        return exe
    print(f"creating {venv} with checkov=={CHECKOV_VERSION} (once) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"checkov=={CHECKOV_VERSION}"], check=True)
    return exe


def run_checkov(exe: Path, dirs: list[Path]) -> tuple[dict[tuple[str, str], set[str]], float]:
    """{(case, "bad"|"good"): failed check IDs} and the wall time of one Checkov run over all twins."""
    with tempfile.TemporaryDirectory(prefix="bench-checkov-") as tmp:
        base = Path(tmp)
        for d in dirs:
            for side in ("bad", "good"):
                tf = d / f"{side}.tf"
                if tf.is_file():
                    (base / d.name / side).mkdir(parents=True)
                    shutil.copy(tf, base / d.name / side / "main.tf")
        cmd = [str(exe), "-d", str(base), "--framework", "terraform", "-o", "json", "--compact", "--quiet"]
        env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"checkov failed ({proc.returncode}): {proc.stderr[-2000:]}")
    data: Any = json.loads(proc.stdout or "[]")
    reports = data if isinstance(data, list) else [data]
    found: dict[tuple[str, str], set[str]] = {}
    for rep in reports:
        for check in (rep.get("results") or {}).get("failed_checks") or []:
            parts = Path(str(check.get("file_path", "")).lstrip("/")).parts
            if len(parts) >= 3:
                found.setdefault((parts[-3], parts[-2]), set()).add(str(check["check_id"]))
    return found, wall


# ------------------------------------------------------------------------------------------------- gpucloud


def _config(exp: dict[str, Any]) -> dict[str, Any]:
    cfg = exp.get("config", "prod")
    out = json.loads((ROOT / "policies" / "configs" / f"{cfg}.json").read_text()) if isinstance(cfg, str) else cfg
    return {**out, **(exp.get("config_overrides") or {})}


def gpucloud_worker(dirs: list[str]) -> None:
    """Runs in the subprocess: plan and evaluate each twin, print {case/side: [[policy, name], ...]}."""
    from gpucloud.guard import evaluate
    from gpucloud.plan import run_callable

    out: dict[str, list[list[str]]] = {}
    for name in dirs:
        d = Path(name)
        exp = json.loads((d / "expect.json").read_text())
        for side in ("bad", "good"):
            program = d / f"{side}.py"
            if not program.is_file():
                continue
            plan = run_callable(
                lambda p=program: runpy.run_path(str(p), run_name="__main__"),
                project="corpus",
                stack="prod",
                region=exp.get("region", "us-east-1"),
            )
            ev = evaluate(plan, _config(exp))
            out[f"{d.name}/{side}"] = sorted({(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in ev.violations})
    print(json.dumps(out))


def run_gpucloud(dirs: list[Path]) -> tuple[dict[tuple[str, str], set[str]], float]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *map(str, dirs)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"gpucloud worker failed: {proc.stderr[-3000:]}")
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    found = {tuple(k.split("/", 1)): {p for p, _ in v} for k, v in raw.items()}
    return {(k[0], k[1]): v for k, v in found.items()}, wall


# ------------------------------------------------------------------------------------------------- scoring


def score(dirs: list[Path], found: dict[tuple[str, str], set[str]], classes: dict[str, set[str]]) -> dict[str, Any]:
    bad = good = hits = fp = 0
    missed: list[str] = []
    flagged: list[str] = []
    for d in dirs:
        exp = json.loads((d / "expect.json").read_text())
        if (d / "bad.tf").is_file() or (d / "bad.py").is_file():
            bad += 1
            if found.get((d.name, "bad"), set()) & classes[d.name]:
                hits += 1
            else:
                missed.append(d.name)
        if not exp.get("evasion") and ((d / "good.tf").is_file() or (d / "good.py").is_file()):
            good += 1
            if found.get((d.name, "good")):
                fp += 1
                flagged.append(f"{d.name} {sorted(found[(d.name, 'good')])}")
    return {
        "bad": bad,
        "good": good,
        "hits": hits,
        "false_positives": fp,
        "recall": hits / bad if bad else 0.0,
        "precision": hits / (hits + fp) if hits + fp else 0.0,
        "missed": missed,
        "flagged_good": flagged,
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        gpucloud_worker(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "guard" / "corpus")
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path(os.environ.get("GPUCLOUD_CHECKOV_VENV", Path.home() / ".cache" / "gpucloud" / "checkov-3.3.30")),
    )
    parser.add_argument("--only", nargs="*", default=[], help="case id prefixes, e.g. data- k8s-")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    dirs = cases(args.corpus, args.only)
    if not dirs:
        parser.error(f"--corpus {args.corpus}: no case directories with expect.json")
    expected = {d.name: {p for p, _ in json.loads((d / "expect.json").read_text())["bad"]} for d in dirs}
    unmapped = sorted({p for ps in expected.values() for p in ps} - set(CHECKOV_IDS))
    checkov_classes = {
        name: set().union(*(CHECKOV_IDS.get(p, frozenset()) for p in ps)) for name, ps in expected.items()
    }

    ck_found, ck_wall = run_checkov(checkov_bin(args.venv), dirs)
    gc_found, gc_wall = run_gpucloud(dirs)
    ck = score(dirs, ck_found, checkov_classes)
    ck_mapped_found = {k: v & set().union(*CHECKOV_IDS.values()) for k, v in ck_found.items()}
    ck_mapped = score(dirs, ck_mapped_found, checkov_classes)
    gc = score(dirs, gc_found, expected)

    rows = [
        ("cases (bad / good twins)", f"{ck['bad']} / {ck['good']}", f"{gc['bad']} / {gc['good']}"),
        ("bad twins found", f"{ck['hits']}/{ck['bad']}", f"{gc['hits']}/{gc['bad']}"),
        ("recall", f"{ck['recall']:.1%}", f"{gc['recall']:.1%}"),
        (
            "good twins flagged (any finding)",
            f"{ck['false_positives']}/{ck['good']}",
            f"{gc['false_positives']}/{gc['good']}",
        ),
        ("precision (strict)", f"{ck['precision']:.1%}", f"{gc['precision']:.1%}"),
        ("good twins flagged (mapped checks only)", f"{ck_mapped['false_positives']}/{ck['good']}", "-"),
        ("precision (mapped checks only)", f"{ck_mapped['precision']:.1%}", "-"),
        ("wall time, all twins (s)", f"{ck_wall:.1f}", f"{gc_wall:.1f}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'':{width}}  {'Checkov ' + CHECKOV_VERSION:>16}  {'gpucloud':>10}")
    for label, a, b in rows:
        print(f"{label:{width}}  {a:>16}  {b:>10}")
    print(f"\nCheckov missed: {', '.join(ck['missed']) or '-'}")
    print(f"gpucloud missed: {', '.join(gc['missed']) or '-'}")
    print(f"Checkov flagged good twins: {'; '.join(ck['flagged_good']) or '-'}")
    print(f"gpucloud flagged good twins: {'; '.join(gc['flagged_good']) or '-'}")
    if unmapped:
        print(f"policies with no Checkov mapping (Checkov counts as a miss): {', '.join(unmapped)}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "checkov": ck,
                    "checkov_mapped": ck_mapped,
                    "gpucloud": gc,
                    "wall_s": {"checkov": ck_wall, "gpucloud": gc_wall},
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
