"""Checkov comparison on the red-team corpus: recall, precision, wall and CPU time of Checkov and of gpucloud's pack.

    python scripts/bench_checkov.py [--corpus tests/guard/corpus] [--venv DIR] [--only PREFIX ...] [--runs 3]
                                    [--json FILE] [--record]

Checkov 3.3.30 runs in its own virtualenv (created on first use with `pip install checkov==3.3.30`; default
~/.cache/gpucloud/checkov-3.3.30, or --venv / $GPUCLOUD_CHECKOV_VENV) over every case's bad.tf and good.tf, in one
`checkov -d` run; gpucloud plans every case's bad.py and good.py and evaluates the pack with the case's config
through the same path as `gpucloud plan` and the corpus test (`build_report`, cost section included, conformance
off), in one subprocess of this interpreter (scripts/bench_worker.py) that runs as the `gpucloud` command does
(`gpucloud.cli.one_shot`: no cyclic collector, no interpreter teardown), with gpucloud's modules byte-compiled first
as an install has them. Both
times include each tool's start-up; CPU seconds are the children's user + system time (getrusage), which a loaded
machine does not inflate the way it does wall time.

Scoring, the same for both tools:
- a *bad* twin is a hit when the tool reports at least one finding of the case's violation class: for gpucloud a
  violation (decided, or undecided and blocking) of a policy listed in expect.json "bad" or "undecided_bad"; for
  Checkov a failed check whose ID maps to one of those policies in CHECKOV_IDS below;
- any finding on a *good* twin is a false positive (strict): for gpucloud any violation at any enforcement level,
  for Checkov any failed check; the "mapped" figures count only Checkov checks that map to some pack policy, to
  separate real disagreements from best-practice noise;
- recall = hit bad twins / bad twins; precision = hit bad twins / (hit bad twins + flagged good twins).
A Terraform file Checkov cannot parse is listed under parse errors (and its twin scores as found nothing).
This is a script, not a test: it needs PyPI once and takes minutes. --record writes docs/bench/checkov.json and the
`<!-- bench:checkov -->` blocks in docs/ (scripts/bench_record.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_record import Machine, record  # noqa: E402
from bench_worker import expectation  # noqa: E402
from checkov_venv import CHECKOV_VERSION, DEFAULT_VENV, checkov_bin  # noqa: E402

from gpucloud.fileio import write_atomic  # noqa: E402

# gpucloud policy -> the Checkov 3.3.30 checks that test the same violation class, read from each check's source
# (checkov/terraform/checks/resource|data|graph_checks in the bench venv; class name and title quoted). A check
# maps when what it really tests is the policy's violation or a case of it; where a check is broader (flags more
# than the policy would) it still maps, which can only raise Checkov's recall, and its extra findings show up in
# the "mapped" false-positive figure. A pack policy absent here has no Checkov counterpart: the GPU shape, capacity,
# cost and reliability rules (gpu-family-allowlist, gpu-min-memory, deprecated-accelerators, market-eligibility,
# gpu-count-cap, efa-shape, capacity-block-no-placement-group, monthly-spend-cap, nonprod-spot-share,
# budget-and-anomaly, scale-to-zero, reserved-capacity-discipline, spot-interruption-handling,
# non-interruptible-not-spot, fsx-same-az) and the Kubernetes public LoadBalancer/Ingress rule (Checkov's Terraform
# Kubernetes checks have no Service/Ingress exposure check). lb-internal-only is folded into
# k8s-no-public-load-balancer and has no entry of its own.
CHECKOV_IDS: dict[str, frozenset[str]] = {
    "eks-endpoint-private": frozenset(
        {
            "CKV_AWS_38",  # EKSPublicAccessCIDR: "Ensure Amazon EKS public endpoint not accessible to 0.0.0.0/0"
            "CKV_AWS_39",  # EKSPublicAccess: "Ensure Amazon EKS public endpoint disabled"
        }
    ),
    "eks-secrets-cmk": frozenset({"CKV_AWS_58"}),  # EKSSecretsEncryption: "... Secrets Encryption Enabled"
    "eks-control-plane-logging": frozenset({"CKV_AWS_37"}),  # EKSControlPlaneLogging: "... for all log types"
    # IMDSv1Disabled: "Ensure Instance Metadata Service Version 1 is not enabled" (instance, launch template,
    # launch configuration).
    "lt-imdsv2": frozenset({"CKV_AWS_79"}),
    # LaunchTemplateMetadataHop: "... should not have a metadata response hop limit greater than 1".
    "lt-imds-hop-limit": frozenset({"CKV_AWS_341"}),
    "lt-ebs-encrypted": frozenset(
        {
            "CKV_AWS_3",  # EBSEncryption: "Ensure all data stored in the EBS is securely encrypted"
            "CKV_AWS_189",  # EBSVolumeEncryptedWithCMK: "Ensure EBS Volume is encrypted by KMS using a ... CMK"
            "CKV_AWS_8",  # LaunchConfigurationEBSEncryption: launch configuration or instance EBS encrypted
        }
    ),
    "lt-no-public-ip": frozenset(
        {
            "CKV_AWS_88",  # EC2PublicIP: "EC2 instance should not have public IP." (instance, launch template)
            "CKV_AWS_389",  # AutoScalingGroupWithPublicAccess: launch configuration public IP assignment
        }
    ),
    "lt-no-secrets-in-userdata": frozenset({"CKV_AWS_46"}),  # EC2Credentials: "no hard-coded secrets ... user data"
    "sg-no-world-ingress": frozenset(
        {
            "CKV_AWS_24",  # SecurityGroupUnrestrictedIngress22: port 22 from 0.0.0.0/0 or ::/0
            "CKV_AWS_25",  # SecurityGroupUnrestrictedIngress3389
            "CKV_AWS_260",  # SecurityGroupUnrestrictedIngress80
            "CKV_AWS_277",  # SecurityGroupUnrestrictedIngressAny: all ports (-1) from 0.0.0.0/0
        }
    ),
    "fsx-persistent-cmk": frozenset(
        {
            "CKV_AWS_178",  # FSXOntapFSEncryptedWithCMK
            "CKV_AWS_179",  # FSXWindowsFSEncryptedWithCMK
            "CKV_AWS_190",  # LustreFSEncryptedWithCMK
            "CKV_AWS_203",  # FSXOpenZFSFileSystemEncryptedWithCMK
        }
    ),
    "s3-public-access-blocked": frozenset(
        {
            "CKV_AWS_53",  # S3BlockPublicACLs
            "CKV_AWS_54",  # S3BlockPublicPolicy
            "CKV_AWS_55",  # S3IgnorePublicACLs
            "CKV_AWS_56",  # S3RestrictPublicBuckets
            "CKV2_AWS_6",  # S3BucketHasPublicAccessBlock: "Ensure that S3 bucket has a Public Access block"
        }
    ),
    "s3-sse-kms": frozenset(
        {
            "CKV_AWS_19",  # S3BucketEncryption: any server-side encryption (broader: SSE-S3 passes it)
            "CKV_AWS_145",  # S3KMSEncryptedByDefault: "Ensure that S3 buckets are encrypted with KMS by default"
        }
    ),
    # S3SecureDataTransport: "Ensure AWS S3 bucket is configured with secure data transport policy" (it reads the
    # policy only through aws_s3_bucket_acl resources).
    "s3-tls-only": frozenset({"CKV_AWS_379"}),
    "iam-no-admin-star": frozenset(
        {
            "CKV_AWS_1",  # AdminPolicyDocument: full "*-*" in aws_iam_policy_document
            "CKV_AWS_49",  # StarActionPolicyDocument: "*" as a statement's actions (policy document)
            "CKV_AWS_62",  # IAMAdminPolicyDocument: full "*-*" in inline and managed policies
            "CKV_AWS_63",  # IAMStarActionPolicyDocument: "*" as a statement's actions
            "CKV_AWS_274",  # IAMManagedAdminPolicy: AdministratorAccess attached (roles, users, groups)
            "CKV_AWS_275",  # IAMManagedAdminPolicy (data source variant)
            "CKV_AWS_355",  # IAMStarResourcePolicyDocument: "*" resource for restrictable actions (broader)
            "CKV_AWS_356",  # ResourcePolicyDocument: the same for aws_iam_policy_document
            "CKV_AWS_286",  # IAMPrivilegeEscalation: privilege-escalation actions without constraints (broader)
            "CKV_AWS_289",  # IAMPermissionsManagement: permissions management without constraints (broader)
            "CKV2_AWS_40",  # IAMPolicyNotAllowFullIAMAccess: "iam:*" on "*"
            "CKV2_AWS_56",  # IAMManagedIAMFullAccessPolicy: IAMFullAccess attached
        }
    ),
    # IAMRoleAllowsPublicAssume: "Ensure IAM role allows only specific services or principals to assume it".
    # CKV_AWS_61 (IAMRoleAllowAssumeFromAccount) flags a trusted account root, a different class.
    "iam-no-public-trust": frozenset({"CKV_AWS_60"}),
    "ebs-encryption-by-default": frozenset({"CKV_AWS_106"}),  # EBSDefaultEncryption
    "efs-encrypted-cmk": frozenset(
        {
            "CKV_AWS_42",  # EFSEncryptionEnabled: "Ensure EFS is securely encrypted"
            "CKV_AWS_184",  # EFSFileSystemEncryptedWithCMK
        }
    ),
    "rds-encrypted-cmk": frozenset(
        {
            "CKV_AWS_16",  # RDSEncryption: aws_db_instance storage_encrypted
            "CKV_AWS_96",  # AuroraEncryption: aws_rds_cluster storage_encrypted
            "CKV_AWS_140",  # RDSClusterEncrypted: aws_rds_global_cluster
            "CKV_AWS_327",  # RDSClusterEncryptedWithCMK: "Ensure RDS Clusters are encrypted using KMS CMKs"
        }
    ),
    "kms-key-rotation": frozenset({"CKV_AWS_7"}),  # KMSRotation: "rotation for customer created CMKs is enabled"
    "cloudtrail-hardened": frozenset(
        {
            "CKV_AWS_35",  # CloudtrailEncryptionWithCMK
            "CKV_AWS_36",  # CloudtrailLogValidation
            "CKV_AWS_67",  # CloudtrailMultiRegion: "Ensure CloudTrail is enabled in all Regions"
        }
    ),
    "vpc-flow-logs": frozenset({"CKV2_AWS_11"}),  # VPCHasFlowLog: "Ensure VPC flow logging is enabled in all VPCs"
    # ImageDigest: "Image should use digest"; ImageTagFixed: "Image Tag should be fixed - not latest or blank"
    # (checkov/terraform/checks/resource/kubernetes; pods, deployments, daemon sets, jobs ...).
    "k8s-image-digest": frozenset({"CKV_K8S_43", "CKV_K8S_14"}),
    # Pod Security Standards baseline controls as Checkov's Terraform Kubernetes checks name them (they cover
    # kubernetes_pod and kubernetes_deployment, CKV_K8S_27 daemon sets too); restricted-only controls (NET_RAW
    # drop, read-only root, run as non-root) are not part of the default baseline level.
    "k8s-pod-security": frozenset(
        {
            "CKV_K8S_16",  # PrivilegedContainer
            "CKV_K8S_17",  # ShareHostPID
            "CKV_K8S_18",  # ShareHostIPC
            "CKV_K8S_19",  # SharedHostNetworkNamespace
            "CKV_K8S_25",  # AllowedCapabilities: "Minimize the admission of containers with added capability"
            "CKV_K8S_26",  # HostPort
            "CKV_K8S_27",  # DockerSocketVolume: the docker socket as a hostPath
            "CKV_K8S_39",  # AllowedCapabilitiesSysAdmin
        }
    ),
    "k8s-no-public-load-balancer": frozenset(),
    # AutoScalingTagging: "Autoscaling groups should supply tags to launch configurations" (an ASG without
    # propagated tags; it knows no required keys, so it is a partial counterpart).
    "cost-tags": frozenset({"CKV_AWS_153"}),
    "checkpoint-bucket-versioning": frozenset({"CKV_AWS_21"}),  # S3BucketVersioning (every bucket: broader)
    "data-retain-on-delete": frozenset(
        {
            "CKV_AWS_139",  # RDSDeletionProtection: aws_rds_cluster deletion_protection
            "CKV_AWS_293",  # RDSInstanceDeletionProtection: aws_db_instance deletion_protection
        }
    ),
}


def cases(corpus: Path, only: list[str]) -> list[Path]:
    out = []
    for d in sorted(corpus.iterdir()):
        if d.is_dir() and (d / "expect.json").is_file() and (not only or any(d.name.startswith(p) for p in only)):
            out.append(d)
    return out


def violation_class(exp: dict[str, Any]) -> set[str]:
    """The policies a bad twin must trip: decided violations and resources blocked as undecidable alike."""
    return {str(p) for p, _ in [*exp["bad"], *(exp.get("undecided_bad") or [])]}


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], **kwargs: Any) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run one tool; its wall seconds and the CPU seconds it and its children used."""
    cpu = _cpu_children()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    return proc, time.perf_counter() - start, _cpu_children() - cpu


# ------------------------------------------------------------------------------------------------- Checkov


def _twin(file_path: str) -> tuple[str, str] | None:
    parts = Path(str(file_path).lstrip("/")).parts
    return (parts[-3], parts[-2]) if len(parts) >= 3 else None


def parse_checkov(data: Any) -> tuple[dict[tuple[str, str], set[str]], list[str]]:
    """Checkov's JSON report -> ({(case, side): failed check IDs}, ["case/side.tf", ...] it could not parse)."""
    reports = data if isinstance(data, list) else [data]
    found: dict[tuple[str, str], set[str]] = {}
    errors: set[str] = set()
    for rep in reports:
        results = rep.get("results") or {}
        for check in results.get("failed_checks") or []:
            twin = _twin(check.get("file_path", ""))
            if twin:
                found.setdefault(twin, set()).add(str(check["check_id"]))
        for path in results.get("parsing_errors") or []:
            twin = _twin(path)
            errors.add(f"{twin[0]}/{twin[1]}.tf" if twin else str(path))
    return found, sorted(errors)


def run_checkov(exe: Path, dirs: list[Path]) -> tuple[dict[tuple[str, str], set[str]], list[str], float, float]:
    """Failed check IDs per twin, the files Checkov could not parse, and the wall and CPU seconds of one run."""
    with tempfile.TemporaryDirectory(prefix="bench-checkov-") as tmp:
        base = Path(tmp)
        for d in dirs:
            for side in ("bad", "good"):
                tf = d / f"{side}.tf"
                if tf.is_file():
                    (base / d.name / side).mkdir(parents=True)
                    shutil.copy(tf, base / d.name / side / "main.tf")
        # Not --quiet: the full report is the one that lists parsing errors per file.
        cmd = [str(exe), "-d", str(base), "--framework", "terraform", "-o", "json", "--compact"]
        env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
        proc, wall, cpu = _timed(cmd, env=env)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"checkov failed ({proc.returncode}): {proc.stderr[-2000:]}")
    found, errors = parse_checkov(json.loads(proc.stdout or "[]"))
    return found, errors, wall, cpu


# ------------------------------------------------------------------------------------------------- gpucloud


def run_gpucloud(dirs: list[Path]) -> tuple[dict[tuple[str, str], set[str]], float, float]:
    cmd = [sys.executable, str(Path(__file__).resolve().with_name("bench_worker.py")), *map(str, dirs)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc, wall, cpu = _timed(cmd, cwd=ROOT, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"gpucloud worker failed: {proc.stderr[-3000:]}")
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    found: dict[tuple[str, str], set[str]] = {}
    for key, policies in raw.items():
        case, side = key.split("/", 1)
        found[(case, side)] = set(policies)
    return found, wall, cpu


# ------------------------------------------------------------------------------------------------- scoring


def score(dirs: list[Path], found: dict[tuple[str, str], set[str]], classes: dict[str, set[str]]) -> dict[str, Any]:
    """Hits on bad twins and findings on good twins; per case, what the tool reported on each."""
    bad = good = hits = flagged = 0
    missed: list[str] = []
    flagged_good: dict[str, list[str]] = {}
    for d in dirs:
        exp = expectation(d)
        bad += 1
        if found.get((d.name, "bad"), set()) & classes[d.name]:
            hits += 1
        else:
            missed.append(d.name)
        if not exp.get("evasion"):
            good += 1
            if found.get((d.name, "good")):
                flagged += 1
                flagged_good[d.name] = sorted(found[(d.name, "good")])
    return {
        "bad": bad,
        "good": good,
        "hits": hits,
        "flagged": flagged,
        "recall": hits / bad if bad else 0.0,
        "precision": hits / (hits + flagged) if hits + flagged else 0.0,
        "missed": missed,
        "flagged_good": flagged_good,
    }


def compare(
    dirs: list[Path], ck_found: dict[tuple[str, str], set[str]], gc_found: dict[tuple[str, str], set[str]]
) -> dict[str, dict[str, Any]]:
    """Both tools scored the same way; Checkov also with only its mapped checks counted on good twins."""
    expected = {d.name: violation_class(expectation(d)) for d in dirs}
    checkov_classes = {
        name: set().union(*(CHECKOV_IDS.get(p, frozenset()) for p in ps)) for name, ps in expected.items()
    }
    mapped_ids = set().union(*CHECKOV_IDS.values())
    ck = score(dirs, ck_found, checkov_classes)
    mapped = score(dirs, {k: v & mapped_ids for k, v in ck_found.items()}, checkov_classes)
    ck["mapped_flagged"] = mapped["flagged"]
    ck["mapped_precision"] = mapped["precision"]
    ck["mapped_flagged_good"] = mapped["flagged_good"]
    return {"checkov": ck, "gpucloud": score(dirs, gc_found, expected)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "guard" / "corpus")
    parser.add_argument(
        "--venv",
        type=Path,
        default=DEFAULT_VENV,
    )
    parser.add_argument("--only", nargs="*", default=[], help="case id prefixes, e.g. data- k8s-")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tool; times are medians (default 3)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--record", action="store_true", help="write docs/bench/checkov.json and the docs' block")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.record and args.only:
        parser.error("--record measures the whole corpus: drop --only")
    dirs = cases(args.corpus, args.only)
    if not dirs:
        parser.error(f"--corpus {args.corpus}: no case directories with expect.json")
    exe = checkov_bin(args.venv)
    # Byte-compile gpucloud's own modules, as pip does for an installed gpucloud (and did for Checkov in its
    # virtualenv) and as scripts/bench_plan.py does: the build machine sets PYTHONDONTWRITEBYTECODE, and every
    # worker would otherwise compile them from source again, which no installed user pays.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "gpucloud", "components", "policies"], cwd=ROOT, check=True
    )

    with Machine() as machine:
        times: dict[str, list[tuple[float, float]]] = {"checkov": [], "gpucloud": []}
        for _ in range(args.runs):
            # Alternate the tools so a load spike hits both alike; findings are deterministic, keep the last.
            ck_found, parse_errors, wall, cpu = run_checkov(exe, dirs)
            times["checkov"].append((wall, cpu))
            gc_found, wall, cpu = run_gpucloud(dirs)
            times["gpucloud"].append((wall, cpu))
    tools = compare(dirs, ck_found, gc_found)
    for name, runs in times.items():
        tools[name]["wall_s"] = round(statistics.median(w for w, _ in runs), 2)
        tools[name]["cpu_s"] = round(statistics.median(c for _, c in runs), 2)
    tools["checkov"]["parse_errors"] = parse_errors
    evasions = sum(1 for d in dirs if expectation(d).get("evasion"))
    result = {
        "cases": len(dirs),
        "pairs": len(dirs) - evasions,
        "evasions": evasions,
        "runs": args.runs,
        "checkov_version": CHECKOV_VERSION,
        "unmapped_policies": sorted({p for d in dirs for p in violation_class(expectation(d))} - set(CHECKOV_IDS)),
        "tools": tools,
    }
    print_table(result)
    if args.json:
        write_atomic(args.json, json.dumps(result, indent=2, sort_keys=True) + "\n")
    if args.record:
        print(f"recorded {record('checkov', result, machine).relative_to(ROOT)}")
    return 0


def print_table(result: dict[str, Any]) -> None:
    ck, gc = result["tools"]["checkov"], result["tools"]["gpucloud"]
    rows = [
        ("cases (bad / good twins)", f"{ck['bad']} / {ck['good']}", f"{gc['bad']} / {gc['good']}"),
        ("bad twins found", f"{ck['hits']}/{ck['bad']}", f"{gc['hits']}/{gc['bad']}"),
        ("recall", f"{ck['recall']:.1%}", f"{gc['recall']:.1%}"),
        ("good twins flagged (any finding)", f"{ck['flagged']}/{ck['good']}", f"{gc['flagged']}/{gc['good']}"),
        ("precision (strict)", f"{ck['precision']:.1%}", f"{gc['precision']:.1%}"),
        ("good twins flagged (mapped checks only)", f"{ck['mapped_flagged']}/{ck['good']}", "-"),
        ("precision (mapped checks only)", f"{ck['mapped_precision']:.1%}", "-"),
        (f"wall s, median of {result['runs']}", f"{ck['wall_s']:.1f}", f"{gc['wall_s']:.1f}"),
        (f"CPU s, median of {result['runs']}", f"{ck['cpu_s']:.1f}", f"{gc['cpu_s']:.1f}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'':{width}}  {'Checkov ' + result['checkov_version']:>16}  {'gpucloud':>10}")
    for label, a, b in rows:
        print(f"{label:{width}}  {a:>16}  {b:>10}")
    print(f"\nCheckov could not parse: {', '.join(ck['parse_errors']) or '-'}")
    print(f"Checkov missed: {', '.join(ck['missed']) or '-'}")
    print(f"gpucloud missed: {', '.join(gc['missed']) or '-'}")
    print(f"Checkov flagged good twins: {'; '.join(f'{k} {v}' for k, v in ck['flagged_good'].items()) or '-'}")
    print(f"gpucloud flagged good twins: {'; '.join(f'{k} {v}' for k, v in gc['flagged_good'].items()) or '-'}")
    if result["unmapped_policies"]:
        print(f"policies with no Checkov counterpart (a Checkov miss): {', '.join(result['unmapped_policies'])}")


if __name__ == "__main__":
    raise SystemExit(main())
