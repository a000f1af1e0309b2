"""scripts/mutation.py: which path mutmut mutates (the runs themselves take minutes and are not tests)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_under_a_linked_folder_is_mutated_where_the_tests_import_it():
    m = _script()
    links = {"gpucloud/policies": "policies", "gpucloud/components": "components"}
    assert m.linked_path("policies/gpucloud_policies/readers/keys.py", links) == (
        "gpucloud/policies/gpucloud_policies/readers/keys.py"
    )
    assert m.linked_path("gpucloud/fleet/paths.py", links) == "gpucloud/fleet/paths.py"
    assert m.linked_path("policiesX/a.py", links) == "policiesX/a.py"  # a prefix of a name is not the folder


def test_the_trees_links_are_found_from_git():
    m = _script()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = m.tracked_links(ROOT, tracked.split())
    assert links["gpucloud/policies"] == "policies"
    assert links["gpucloud/components"] == "components"
    assert "policies/gpucloud_policies/readers/keys.py" not in links  # files are not links
