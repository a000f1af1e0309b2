"""gpucloud as a library in someone else's repository: the sdist and wheel the suite builds, installed into a fresh
virtualenv outside this checkout, write and plan the template team project there with the same verdict as here
(and the platform program, whose components read the vendored charts from the installed package), and serve the
installed pack over the Analyzer protocol as `pulumi preview --policy-pack` would start it.

Offline: the fresh venv gets the third-party dependencies from this venv's site-packages through a .pth line (a
plain path line: that directory's own .pth files, among them the editable gpucloud, are not processed), and the
wheel is installed with `pip --no-deps --no-index`. Slow (under two minutes): marked `slow`, it still runs in
`make test`; `pytest -m "not slow"` leaves it out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gpucloud.charts.helm import find_helm
from gpucloud.cli import main
from gpucloud.plan.k8s_components import find_kubectl

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.2.0"
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    venv: Path
    site: Path
    env: dict[str, str]
    timings: dict[str, float]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / "gpucloud"), *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


def _source_tree(dest: Path) -> None:
    """This checkout's files as git sees them (tracked, and new files not ignored), symlinks kept as links."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the work tree, not yet in the index
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def _build(kind: str, source: Path, out: Path) -> Path:
    # setuptools' PEP 517 backend from this venv (no build isolation: nothing is downloaded).
    code = f"from setuptools import build_meta as b; print(b.build_{kind}({str(out)!r}))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=source, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(ROOT)
    timings: dict[str, float] = {}
    src = base / "src"
    _source_tree(src)
    start = time.perf_counter()
    sdist = _build("sdist", src, base / "dist")
    with tarfile.open(sdist) as tar:
        tar.extractall(base / "unpacked", filter="data")
    wheel = _build("wheel", base / "unpacked" / f"gpucloud-{VERSION}", base / "dist")
    timings["build_s"] = time.perf_counter() - start
    venv = base / "venv"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (site / "_gpucloud_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=600,
    )
    timings["install_s"] = time.perf_counter() - start
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    helm, kubectl = find_helm(), find_kubectl()
    assert helm is not None and kubectl is not None, "the suite needs this checkout's helm and kubectl (`make`)"
    # The binaries this checkout uses: the installed gpucloud must not download anything in a test.
    env.update(GPUCLOUD_HELM=str(helm), GPUCLOUD_KUBECTL=str(kubectl), GPUCLOUD_NO_DOWNLOAD="1")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    print(f"\nwheel {wheel.stat().st_size} bytes, sdist {sdist.stat().st_size} bytes, {timings}", file=sys.stderr)
    yield Installed(sdist, wheel, venv, site, env, timings)


def test_the_wheel_holds_gpucloud_only_with_its_package_data(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        names = whl.namelist()
        policy = yaml.safe_load(whl.read("gpucloud/policies/PulumiPolicy.yaml"))
    assert sorted({n.split("/")[0] for n in names}) == ["gpucloud", f"gpucloud-{VERSION}.dist-info"]
    vendored = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "vendor").rglob("*") if p.is_file())
    assert sorted(n.removeprefix("gpucloud/") for n in names if n.startswith("gpucloud/vendor/")) == vendored
    for data in (
        "gpucloud/policies/configs/dev.json",
        "gpucloud/policies/configs/staging.json",
        "gpucloud/policies/configs/prod.json",
        "gpucloud/policies/requirements.txt",
        "gpucloud/report/plan.schema.json",
        "gpucloud/charts/lock.yaml",
        "gpucloud/templates/team/github/workflows/gpucloud.yml.tmpl",
        "gpucloud/templates/team/gitignore.tmpl",
    ):
        assert data in names, data
    assert policy["runtime"]["options"] == {"virtualenv": "../../../../.."}
    with tarfile.open(installed.sdist) as tar:
        members = {m.name: m for m in tar.getmembers()}
    # The sdist carries the package data as files (setuptools copies through the links), and builds the wheel.
    helmignore = f"gpucloud-{VERSION}/gpucloud/vendor/upstream/charts/karpenter-1.12.1/.helmignore"
    assert members[helmignore].isfile()


def test_the_installed_gpucloud_is_the_wheel(installed: Installed, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(installed.python), "-c", "import gpucloud, gpucloud.components; print(gpucloud.__file__)"],
        cwd=tmp_path,
        env=installed.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, f"{installed.site / 'gpucloud' / '__init__.py'}\n")
    assert installed.run("--version", cwd=tmp_path).stdout == f"gpucloud {VERSION}\n"
    path = installed.run("pack", "path", cwd=tmp_path)
    assert (path.returncode, path.stdout, path.stderr) == (0, f"{installed.site / 'gpucloud' / 'policies'}\n", "")


def _verdict(report: dict) -> dict:
    return {
        "policies": report["policies"],
        "conformance": (report["conformance"]["errors"], report["conformance"]["warnings"]),
        "findings": report["conformance"]["findings"],
        "resources": sorted((r["urn"], r["type"]) for r in report["resources"]),
        "cost": (report["cost"]["monthly"], report["cost"]["monthly_ceiling"]),
        "outputs": report["outputs"],
    }


def test_the_template_plans_outside_the_repository_as_inside(
    installed: Installed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    made = installed.run("new", "team", "ml-research", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "ml-research"
    done = installed.run("plan", "--stack", "dev", "--format", "json", "--out", str(tmp_path / "out.json"), cwd=project)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    outside = json.loads((tmp_path / "out.json").read_text())
    # Judged by the dev config shipped in the wheel, since the team's repository has none of its own.
    assert outside["policy_config"] == str(installed.site / "gpucloud" / "policies" / "configs" / "dev.json")
    monkeypatch.chdir(ROOT)
    code = main(["plan", "--program", str(project), "--stack", "dev", "--format", "json"])
    inside = json.loads(capsys.readouterr().out)
    assert inside["policy_config"] == "policies/configs/dev.json"
    assert code == 0
    assert _verdict(outside) == _verdict(inside)
    assert outside["policies"]["violations"] == []


def test_the_installed_pack_serves_the_analyzer_protocol(
    installed: Installed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpucloud.cost import price_plan
    from gpucloud.guard import evaluate, online
    from gpucloud.plan import run_program

    assert installed.run("new", "team", "ml", "--environment", "prod", cwd=tmp_path).returncode == 0
    plan = run_program(tmp_path / "ml", "prod")
    pack_dir = installed.site / "gpucloud" / "policies"
    config = json.loads((pack_dir / "configs" / "prod.json").read_text())
    # Started as the CLI starts it: the interpreter of the virtualenv PulumiPolicy.yaml names, which for the wheel
    # is the fresh venv; nothing of this checkout on its path.
    for key in ("PYTHONPATH", "VIRTUAL_ENV"):
        monkeypatch.delenv(key, raising=False)
    launch = online.launch_spec(pack_dir, project=plan.project, stack=plan.stack)
    assert (launch.python, launch.virtualenv) == (str(installed.venv / "bin" / "python"), installed.venv)
    with online.serve(plan.project, plan.stack, pack_dir=pack_dir, config=config, rpc_timeout=120) as served:
        server, policies, _ = served
        on = online.preview(server, plan)
    off = evaluate(plan, policy_config=config, cost=price_plan(plan))
    assert "budget-and-anomaly" in {p.name for p in policies}
    assert online.keys(on.violations, "policy", "urn") == online.keys(off.violations, "policy", "urn") == set()
    assert online.keys(on.not_evaluated, "policy", "urn") == online.keys(off.not_evaluated, "policy", "urn")
    assert on.analyze_calls == len(online.engine_resources(plan))


def test_the_platform_program_renders_the_wheels_charts_outside_the_repository(
    installed: Installed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The root program copied out of the checkout: its components read the vendored charts, CRDs and manifests,
    # which now come from the installed package (0.1.0's wheel failed here on kueue's values.yaml).
    program = tmp_path / "platform"
    for name in ("Pulumi.yaml", "__main__.py", "stacks/Pulumi.dev.yaml"):
        (program / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, program / name)
    env = {**installed.env, "GPUCLOUD_CACHE_DIR": str(tmp_path / "cache")}  # nothing rendered before
    done = subprocess.run(
        [str(installed.venv / "bin" / "gpucloud"), "plan", "--stack", "dev", "--format", "json"],
        cwd=program,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    outside = json.loads(done.stdout)
    assert outside["policy_config"] == str(installed.site / "gpucloud" / "policies" / "configs" / "dev.json")
    monkeypatch.chdir(ROOT)
    assert main(["plan", "--program", str(program), "--stack", "dev", "--format", "json"]) == 0
    inside = json.loads(capsys.readouterr().out)
    assert _verdict(outside) == _verdict(inside)
    # The charts were rendered from the wheel's copies, every one of them.
    assert outside["conformance"]["derived_objects"] == inside["conformance"]["derived_objects"]
    assert len(outside["conformance"]["derived_objects"]) > 100
