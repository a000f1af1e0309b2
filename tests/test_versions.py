"""One version, semantic, in step everywhere a user or the Pulumi CLI reads it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

import gpucloud

ROOT = Path(__file__).resolve().parents[1]
# semver.org's grammar, without build metadata (PyPI refuses it).
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def test_the_version_is_0_2_0_and_semantic() -> None:
    # 0.2.0: the first release with the namespaced packages (0.1.0's top-level `components`/`policies` broke).
    assert gpucloud.__version__ == "0.2.0"
    assert SEMVER.match(gpucloud.__version__)
    assert not SEMVER.match("0.2")
    assert not SEMVER.match("01.2.0")


def test_pyproject_takes_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpucloud.__version__"}


def test_the_pack_version_is_the_library_version() -> None:
    policy = yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())
    assert policy["version"] == "0.2.0"


def test_the_changelog_has_unreleased_first_then_this_version() -> None:
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert [h[0] for h in headings[:2]] == ["Unreleased", "0.2.0"]
    assert all(SEMVER.match(name) for name, _ in headings[1:])
    assert all(date for _, date in headings[1:])


def test_gpucloud_version_flag() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpucloud", "--version"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert (proc.returncode, proc.stdout) == (0, "gpucloud 0.2.0\n")
