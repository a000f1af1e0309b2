"""The pack from any repository: its installed PulumiPolicy.yaml, `gpucloud pack path` and `pack export`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from gpucloud import pack, package_data
from gpucloud.cli import main
from gpucloud.guard import online

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_pack_runs_in_the_venv_that_holds_it(tmp_path: Path) -> None:
    files = pack.installed_pack_files(ROOT / "policies")
    policy = yaml.safe_load(files["PulumiPolicy.yaml"])
    assert policy["runtime"] == {"name": "python", "options": {"virtualenv": "../../../../.."}}
    assert policy["version"] == "0.2.0"
    assert files["requirements.txt"].splitlines()[-1] == "gpucloud==0.2.0"
    # Where pip puts it, the CLI's rule (relative to the pack directory) names the venv itself.
    installed = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "gpucloud" / "policies"
    installed.mkdir(parents=True)
    (installed / "PulumiPolicy.yaml").write_text(files["PulumiPolicy.yaml"])
    assert online.pack_virtualenv(installed) == tmp_path / "venv"
    assert pack.virtualenv_mismatch(installed, prefix=str(tmp_path / "venv")) is None
    assert "not this gpucloud's environment /elsewhere" in str(pack.virtualenv_mismatch(installed, "/elsewhere"))


def test_the_repository_pack_keeps_its_checkout_venv() -> None:
    policy = yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())
    assert policy["runtime"]["options"]["virtualenv"] == "../.venv"
    assert "-e .." in (ROOT / "policies" / "requirements.txt").read_text().splitlines()


def test_a_policy_yaml_without_the_option_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no runtime\.options\.virtualenv to replace"):
        pack.with_virtualenv("runtime: python\n", "venv", "why")


def test_pack_path_prints_the_installed_pack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pack", "path"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{(ROOT / 'policies').resolve()}\n"
    assert Path(out.strip()) == package_data.PACK_DIR.resolve()
    # This checkout's pack names ../.venv; the warning says so exactly when that is not this interpreter's venv.
    expected = pack.virtualenv_mismatch(ROOT / "policies")
    assert err == ("" if expected is None else f"gpucloud: warning: {expected}\n")


def test_pack_export_writes_a_standalone_publishable_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "pack"
    assert main(["pack", "export", str(dest)]) == 0
    assert sorted(p.name for p in dest.iterdir()) == [
        "PulumiPolicy.yaml",
        "__init__.py",
        "__main__.py",
        "requirements.txt",
    ]
    policy = yaml.safe_load((dest / "PulumiPolicy.yaml").read_text())
    assert policy["runtime"]["options"] == {"virtualenv": "venv"}
    assert (policy["version"], (dest / "requirements.txt").read_text().splitlines()[-1]) == ("0.2.0", "gpucloud==0.2.0")
    assert 'runpy.run_module("gpucloud.policies.__main__", run_name="__main__")' in (dest / "__main__.py").read_text()
    assert online.pack_virtualenv(dest) == dest / "venv"
    assert capsys.readouterr().err == f"publish it with: cd {dest} && pulumi policy publish [ORG]\n"
    # The exported directory plugs into gpucloud as a pack too (GPUCLOUD_POLICY_PACK=<dir>).
    from gpucloud.guard import packs

    assert packs._from_directory(dest).PACK_NAME == "gpucloud-guardrails"


def test_pack_export_refuses_a_directory_that_holds_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["pack", "export", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"gpucloud: error: {tmp_path} is not empty: give a new or empty directory to export the pack into\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_shipped_configs_are_package_data() -> None:
    assert sorted(p.name for p in package_data.POLICY_CONFIGS.glob("*.json")) == [
        "dev.json",
        "prod.json",
        "staging.json",
    ]
    assert package_data.CHARTS.is_dir() and (package_data.UPSTREAM / "PROVENANCE.md").is_file()
    assert sys.modules["gpucloud.package_data"].PACKAGE_ROOT == ROOT / "gpucloud"
