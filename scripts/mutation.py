"""Mutation testing of the modules a change touches: `make mutation MODULES="a.py b.py" TESTS="tests/x tests/y"`.

mutmut (pinned in the dev extra) mutates the given modules and runs the given tests against each mutant. It works
in a scratch copy of the tracked tree, so the checkout never sees a mutant or mutmut's `mutants/` directory, and
the copy's pyproject gets a [tool.mutmut] section for exactly these modules and tests. Prints the score (killed /
mutants) and the surviving mutant names; exits 1 when the score is below --min-score, 2 when no mutant was run.

A module the tests import through a tracked directory link (``policies/gpucloud_policies/x.py`` is imported as
``gpucloud.policies.gpucloud_policies.x`` through the link ``gpucloud/policies -> ../policies``) is mutated at the
linked path: mutmut's ``also_copy`` copies a linked folder as a plain folder (``shutil.copytree`` follows links),
so a mutant written under ``policies/`` would never be imported, and every mutant would read "not checked".
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def linked_path(rel: str, links: dict[str, str]) -> str:
    """``rel`` as the tests import it: through the tracked directory link whose target holds it, else unchanged."""
    for link, target in sorted(links.items()):
        if rel.startswith(target + "/"):
            return link + rel[len(target) :]
    return rel


def tracked_links(root: Path, tracked: list[str]) -> dict[str, str]:
    """Tracked symlinks to folders of the tree: link path -> target path, both relative to the root."""
    links = {}
    for rel in tracked:
        source = root / rel
        if source.is_symlink() and source.is_dir():
            links[rel] = os.path.normpath(os.path.join(os.path.dirname(rel), os.readlink(source)))
    return links


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", required=True, help="module files to mutate, e.g. gpucloud/x.py")
    parser.add_argument("--tests", nargs="+", required=True, help="test files or directories that cover them")
    parser.add_argument("--min-score", type=float, default=0.85, help="lowest killed share that passes (0.85)")
    parser.add_argument("--show", action="store_true", help="print the diff of every mutant not killed")
    args = parser.parse_args()
    for path in args.modules:
        if not (ROOT / path).is_file():
            parser.error(f"--modules {path}: no such file in {ROOT}")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    links = tracked_links(ROOT, tracked)
    modules = [linked_path(path, links) for path in args.modules]
    with tempfile.TemporaryDirectory(prefix="gpucloud-mutation-") as scratch:
        work = Path(scratch)
        for rel in tracked:
            dest = work / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = ROOT / rel
            if source.is_symlink():
                # gpucloud/components and gpucloud/policies are tracked symlinks: they stay links in the copy.
                dest.symlink_to(os.readlink(source))
            else:
                shutil.copy2(source, dest)
        # mutmut copies only the mutated paths into mutants/; everything a test imports must come along too.
        top = sorted({rel.split("/", 1)[0] for rel in tracked if not rel.startswith(".")})
        config = (
            "\n[tool.mutmut]\n"
            f"source_paths = {modules!r}\n"
            f"pytest_add_cli_args_test_selection = {args.tests!r}\n"
            f"also_copy = {top!r}\n"
        ).replace("'", '"')
        with (work / "pyproject.toml").open("a") as f:
            f.write(config)
        mutmut = Path(sys.executable).with_name("mutmut")
        subprocess.run([str(mutmut), "run"], cwd=work, check=False, stdout=subprocess.DEVNULL)
        results = subprocess.run(
            [str(mutmut), "results", "--all", "true"], cwd=work, capture_output=True, text=True, check=False
        ).stdout
        # The diffs exist only in the scratch copy, so they are read before it goes away.
        diffs = [
            subprocess.run([str(mutmut), "show", name], cwd=work, capture_output=True, text=True, check=False).stdout
            for name, state in re.findall(r"^\s*(\S+): (\w[\w ]*)$", results, flags=re.M)
            if args.show and state != "killed"
        ]
    states = re.findall(r"^\s*(\S+): (\w[\w ]*)$", results, flags=re.M)
    if not states:
        print("mutmut produced no results (see its output above)")
        return 2
    if all(s == "not checked" for _, s in states):
        print(f"mutmut ran no mutant of {' '.join(modules)}: the tests never called the mutated code")
        return 2
    killed = [n for n, s in states if s == "killed"]
    survived = [n for n, s in states if s != "killed"]
    score = len(killed) / len(states)
    print(f"mutation score: {len(killed)}/{len(states)} killed ({score:.0%}) for {' '.join(args.modules)}")
    for name in survived:
        print(f"  not killed: {name}")
    for diff in diffs:
        print(diff)
    return 0 if score >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
