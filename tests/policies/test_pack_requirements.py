"""The pack installs everything it imports from its own requirements.txt, the way the Pulumi CLI installs it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies"


def _top_level_imports() -> set[str]:
    found = set()
    for path in PACK.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    local = {p.name for p in PACK.iterdir() if p.is_dir()} | {p.stem for p in PACK.glob("*.py")}
    return {name for name in found if name not in sys.stdlib_module_names and name not in local}


def _requirement_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=~!\[ ;]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def _closure(names: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" not in req:
                todo.append(re.split(r"[<>=~!\[ ;(]", req, maxsplit=1)[0].lower().replace("_", "-"))
    return seen


def test_every_import_of_the_pack_comes_from_its_requirements() -> None:
    text = (PACK / "requirements.txt").read_text()
    names = _requirement_names(text)
    # `-e ..` is the repository: the gpucloud distribution with its own dependencies.
    assert "-e .." in text.splitlines()
    names.add("gpucloud")
    installed = _closure(names)
    providers = metadata.packages_distributions()
    missing = {
        module: providers.get(module, ["?"])
        for module in _top_level_imports()
        if not {d.lower().replace("_", "-") for d in providers.get(module, [])} & installed and module != "gpucloud"
    }
    assert missing == {}
    assert "gpucloud" in _top_level_imports()


def test_pip_run_as_the_cli_runs_it_installs_gpucloud_from_the_repository(tmp_path: Path) -> None:
    # sdk/python/toolchain/pip.go InstallDependencies: `python -m pip install -r requirements.txt` with the pack
    # directory as working directory. Offline and as a dry run: everything else is already in this environment.
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation", "--quiet"]
    subprocess.run(
        [*pip, "--report", str(report), "-r", "requirements.txt"],
        cwd=PACK,
        check=True,
        capture_output=True,
        timeout=300,
    )
    install = json.loads(report.read_text())["install"]
    assert [(i["metadata"]["name"], i["download_info"]["url"]) for i in install] == [("gpucloud", ROOT.as_uri())]
