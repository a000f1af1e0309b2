"""Each resource type token and each well-known label is defined once, in gpucloud.fleet: no product module binds
a constant of its own to one of those strings (tables of provider facts keyed by tokens are data, not names)."""

from __future__ import annotations

import ast
from pathlib import Path

from gpucloud.fleet import labels, types

ROOT = Path(__file__).resolve().parents[2]
# The product code: the library, the components and the policy pack (gpucloud/components and
# gpucloud/policies are symlinks to the last two).
PRODUCT = [ROOT / "gpucloud", ROOT / "components", ROOT / "policies"]
HOMES = {ROOT / "gpucloud" / "fleet" / "types.py", ROOT / "gpucloud" / "fleet" / "labels.py"}


def _strings(module: object) -> dict[str, str]:
    return {value: name for name, value in vars(module).items() if name.isupper() and isinstance(value, str)}


def _bound(value: ast.expr | None, wanted: dict[str, str]) -> list[str]:
    """The wanted strings a constant's value spells out: a string, or a tuple / list / set of only strings."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value] if value.value in wanted else []
    if isinstance(value, ast.Tuple | ast.List | ast.Set) and value.elts:
        found = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(found) == len(value.elts):
            return [v for v in found if v in wanted]
    return []


def redefinitions(roots: list[Path] = PRODUCT, base: Path = ROOT) -> list[str]:
    wanted = {**_strings(types), **_strings(labels)}
    found: list[str] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path in HOMES:
                continue
            if ROOT / "gpucloud" / "components" in path.parents or ROOT / "gpucloud" / "policies" in path.parents:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            scopes = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
            for body in scopes:
                for node in body:
                    if isinstance(node, ast.Assign | ast.AnnAssign):
                        for value in _bound(node.value, wanted):
                            found.append(
                                f"{path.relative_to(base)}:{node.lineno} {value} (gpucloud.fleet: {wanted[value]})"
                            )
    return found


def test_no_module_redefines_a_token_or_a_well_known_label() -> None:
    assert redefinitions() == []


def test_the_scan_finds_a_redefinition(tmp_path: Path) -> None:
    # The scan itself: a module binding NODE_GROUP and a label tuple of its own is reported, line by line.
    (tmp_path / "probe.py").write_text(
        'NG = "aws:eks/nodeGroup:NodeGroup"\nKEYS = ("nvidia.com/gpu", "kubernetes.io/arch")\nOK = ("x", 1)\n'
        'class C:\n    ZONE: str = "topology.kubernetes.io/zone"\n',
        encoding="utf-8",
    )
    assert redefinitions([tmp_path], tmp_path) == [
        "probe.py:1 aws:eks/nodeGroup:NodeGroup (gpucloud.fleet: NODE_GROUP)",
        "probe.py:2 nvidia.com/gpu (gpucloud.fleet: NVIDIA_GPU)",
        "probe.py:2 kubernetes.io/arch (gpucloud.fleet: ARCH)",
        "probe.py:5 topology.kubernetes.io/zone (gpucloud.fleet: ZONE)",
    ]


def test_tokens_and_labels_are_unique_in_their_homes() -> None:
    for module in (types, labels):
        values = [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)]
        assert len(values) == len(set(values)), module.__name__
