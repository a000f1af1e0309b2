"""Lazy provider sub-packages (gpucloud.plan.lazy_sdk): the same names bound to the same objects, and the same
plan, as the SDKs' own eager __init__ modules, with fewer modules loaded."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pulumi._utils
import pytest

from gpucloud.plan import lazy_sdk
from gpucloud.plan.lazy_sdk import build_index

if TYPE_CHECKING:
    from tests.plan.conftest import MakeProvider

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "pulumi_aws.ec2",
    "pulumi_aws.iam",
    "pulumi_aws.s3",
    "pulumi_aws.eks",
    "pulumi_aws.cloudformation",  # read by pulumi_eks.NodeGroup from an executor thread (corpus nodegroup-py)
    "pulumi_aws.autoscaling",
    "pulumi_kubernetes.core.v1",
    "pulumi_kubernetes.helm.v3",
    "pulumi_aws.config",  # not of the generated shape: the finder falls back to the file loader
]

# Run in a fresh interpreter (the test process has long since imported the SDKs one way or the other): plan
# the dev stack, then describe every name of each package as module-qualified object names.
PROBE = """
import gc, importlib, json, sys, types
gc.set_threshold(100_000, 50, 100)  # as the CLI does; only speed
mode, root, packages = sys.argv[1], sys.argv[2], sys.argv[3:]
from gpucloud.plan import engine, lazy_sdk
if mode == "eager":
    engine.lazy_sdk = types.SimpleNamespace(install=lambda: None)
plan = engine.run_program(root, "dev")
loaded = sorted(m for m in sys.modules if m.startswith(("pulumi_aws.", "pulumi_kubernetes.")))

def describe(value):
    if isinstance(value, types.ModuleType):
        return "module " + value.__name__
    qualname = getattr(value, "__qualname__", None)
    if qualname is not None and hasattr(value, "__module__"):
        return f"{value.__module__}.{qualname}"
    return type(value).__name__

names = {}
for package in packages:
    module = importlib.import_module(package)
    getattr(module, "_utilities", None)  # load a package the SDK still holds as its own lazy module
    names[package] = {n: describe(getattr(module, n)) for n in dir(module) if not n.startswith("__")}
plan_json = {"resources": [r.to_json() for r in plan.resources], "outputs": plan.outputs, "warnings": plan.warnings}
print(json.dumps({"plan": plan_json, "loaded": loaded, "names": names}, default=str))
"""


def _probe(mode: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(ROOT), *PACKAGES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def probes() -> tuple[dict[str, Any], dict[str, Any]]:
    return _probe("eager"), _probe("lazy")


def test_lazy_packages_bind_every_name_to_the_same_object(probes: tuple[dict[str, Any], dict[str, Any]]) -> None:
    eager, lazy = probes
    for package in PACKAGES:
        assert lazy["names"][package] == eager["names"][package], package
    # Spot checks of the shadowing rules: a star-import re-binds the module name to the function it exports.
    assert lazy["names"]["pulumi_aws.ec2"]["get_ami"] == "pulumi_aws.ec2.get_ami.get_ami"
    assert lazy["names"]["pulumi_aws.ec2"]["Vpc"] == "pulumi_aws.ec2.vpc.Vpc"
    assert lazy["names"]["pulumi_aws.ec2"]["outputs"] == "module pulumi_aws.ec2.outputs"
    assert len(lazy["names"]["pulumi_aws.ec2"]) > 1000
    # pulumi_aws.config swaps its own module class at import; the fallback ran its __init__ as written.
    assert lazy["names"]["pulumi_aws.config"]["_ExportableConfig"] == "pulumi_aws.config.vars._ExportableConfig"


def test_lazy_packages_give_the_same_plan_with_fewer_modules(probes: tuple[dict[str, Any], dict[str, Any]]) -> None:
    eager, lazy = probes
    assert lazy["plan"] == eager["plan"]
    assert len(lazy["plan"]["resources"]) == 191  # the dev stack with metrics-server, Kueue and the LB controller
    assert "pulumi_aws.ec2.vpn_connection" in eager["loaded"]
    assert "pulumi_aws.ec2.vpn_connection" not in lazy["loaded"]
    assert "pulumi_aws.ec2.vpc" in lazy["loaded"]
    # helm.py has no __all__ (its exports come from its top level) and pulls in requests; only Release is used.
    assert "pulumi_kubernetes.helm.v3.helm" in eager["loaded"]
    assert "pulumi_kubernetes.helm.v3.helm" not in lazy["loaded"]
    assert "pulumi_kubernetes.helm.v3.Release" in lazy["loaded"]
    assert len(lazy["loaded"]) < len(eager["loaded"]) / 2


def _package(tmp_path: Path, init: str, modules: dict[str, str]) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(init)
    for name, text in modules.items():
        (package / f"{name}.py").write_text(text)
    return package / "__init__.py"


def test_index_follows_the_init_order_for_shadowed_names(tmp_path: Path) -> None:
    init = _package(
        tmp_path,
        "import typing\nfrom .a import *\nfrom .b import *\nfrom . import outputs\n",
        {"a": "__all__ = ['Shared', 'OnlyA']\n", "b": "__all__ = [\n    'Shared',\n    'b',\n]\n", "outputs": ""},
    )
    index = build_index(init)
    assert index is not None
    assert index.owners == {
        "a": ("a", None),
        "Shared": ("b", "Shared"),
        "OnlyA": ("a", "OnlyA"),
        "b": ("b", "b"),
        "outputs": ("outputs", None),
    }


def test_index_reads_the_top_level_of_a_module_without_all(tmp_path: Path) -> None:
    module = 'import json\nimport pulumi.runtime\nfrom typing import Any as A\n"""doc"""\nclass Chart: ...\n'
    module += "def _private(): ...\nX: int = 1\n_Y = 2\n"
    index = build_index(_package(tmp_path, "from .helm import *\n", {"helm": module}))
    assert index is not None
    assert sorted(name for name, owner in index.owners.items() if owner[1] is not None) == [
        "A",
        "Chart",
        "X",
        "json",
        "pulumi",
    ]


@pytest.mark.parametrize(
    ("init", "modules", "why"),
    [
        ("from .a import *\nX = 1\n", {"a": "__all__ = ['A']\n"}, "a statement other than an import"),
        ("from .a import *\n", {"a": "if True:\n    A = 1\n"}, "no __all__ and a conditional top level"),
        ("from .a import *\n", {"a": "from b import *\n"}, "no __all__ and a star-import of its own"),
        ("from .a import A\n", {"a": "__all__ = ['A']\n"}, "a named import, not a star-import"),
        ("from .missing import *\n", {}, "a star-import of a module that is not a file here"),
    ],
)
def test_index_refuses_shapes_it_cannot_reproduce(tmp_path: Path, init: str, modules: dict[str, str], why: str) -> None:
    assert build_index(_package(tmp_path, init, modules)) is None, why


# A provider-shaped package whose preamble blocks until the test releases it: the window in which pulumi's
# lazy_import has made the sub-package a plain module and the loader has not finished.
_SYNC = "import threading\nentered = threading.Event()\nrelease = threading.Event()\n"
_GATE = "from fakeprov import _sync\n_sync.entered.set()\n_sync.release.wait(30)\n"


@pytest.fixture
def fakeprov(provider: MakeProvider) -> ModuleType:
    provider(
        "fakeprov",
        {
            "_sync.py": _SYNC,
            "_gate.py": _GATE,
            "cloudformation/__init__.py": (
                "import typing\nfrom .. import _gate\nfrom .stack import *\nfrom .stack_set import *\n"
            ),
            "cloudformation/stack.py": "__all__ = ['Stack']\nclass Stack: ...\n",
            "cloudformation/stack_set.py": "__all__ = ['StackSet']\nclass StackSet: ...\n",
        },
    )
    # As pulumi_aws binds `cloudformation` on itself at import: a lazy module, loaded on first attribute use.
    return pulumi._utils.lazy_import("fakeprov.cloudformation")


def test_a_name_read_while_another_thread_loads_the_package_waits_for_the_load(fakeprov: ModuleType) -> None:
    sync = importlib.import_module("fakeprov._sync")
    loader = threading.Thread(target=lambda: fakeprov.StackSet)
    loader.start()
    assert sync.entered.wait(10)  # the loader thread is inside the package's __init__
    result: dict[str, Any] = {}
    reading = threading.Event()

    def read() -> None:
        reading.set()
        try:
            result["value"] = fakeprov.Stack
        except AttributeError as error:  # the old loader: "module 'fakeprov.cloudformation' has no attribute"
            result["error"] = str(error)

    reader = threading.Thread(target=read)
    reader.start()
    assert reading.wait(10)
    reader.join(0.3)
    sync.release.set()
    reader.join(10)
    loader.join(10)
    assert "error" not in result, result["error"]
    assert result == {"value": sys.modules["fakeprov.cloudformation.stack"].Stack}
    assert type(fakeprov) is lazy_sdk.LazyPackage
    assert "__getattr__" not in dir(fakeprov)


def test_a_package_whose_class_a_racing_trigger_reset_still_resolves_its_names(fakeprov: ModuleType) -> None:
    importlib.import_module("fakeprov._sync").release.set()
    assert fakeprov.StackSet.__module__ == "fakeprov.cloudformation.stack_set"
    # What a second thread's LazyLoader trigger does after the first thread's load finished.
    fakeprov.__class__ = ModuleType
    assert fakeprov.Stack.__module__ == "fakeprov.cloudformation.stack"
    assert type(fakeprov) is lazy_sdk.LazyPackage
    with pytest.raises(AttributeError, match="has no attribute 'Missing'"):
        _ = fakeprov.Missing


def test_the_stored_index_is_the_built_one_until_a_module_of_the_package_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "cache"))
    init = _package(tmp_path, "import typing\nfrom .a import *\n", {"a": "__all__ = ['A']\n"})
    first = lazy_sdk.cached_index(init)
    assert first is not None and first.owners == {"a": ("a", None), "A": ("a", "A")}
    assert list((tmp_path / "cache" / "derived").glob("sdk-package-*"))
    again = lazy_sdk.cached_index(init)
    assert again is not None and again.owners == first.owners
    # A module of the package now exports another name: the stored index is stale and is built again.
    (init.parent / "a.py").write_text("__all__ = ['A', 'B']\n")
    changed = lazy_sdk.cached_index(init)
    assert changed is not None and changed.owners["B"] == ("a", "B")
    # A cache that cannot be written only means building the index again.
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(init))  # a file, not a directory
    assert lazy_sdk.cached_index(init) == build_index(init)


def test_the_stored_index_is_read_back_while_its_signature_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "cache"))
    init = _package(tmp_path, "import typing\nfrom .a import *\n", {"a": "__all__ = ['A']\n"})
    built: list[Path] = []
    real = lazy_sdk.build_index

    def counting(path: Path) -> Any:
        built.append(path)
        return real(path)

    monkeypatch.setattr(lazy_sdk, "build_index", counting)
    assert lazy_sdk.cached_index(init) == lazy_sdk.cached_index(init) == real(init)
    assert len(built) == 1
    (init.parent / "notes.txt").write_text("not a module")  # only the package's modules sign the index
    assert lazy_sdk.cached_index(init) is not None and len(built) == 1
    (init.parent / "b.py").write_text("__all__ = ['B']\n")  # a new module (not yet imported by __init__)
    assert lazy_sdk.cached_index(init) is not None and len(built) == 2
    monkeypatch.setattr(lazy_sdk, "_CACHE_FORMAT", lazy_sdk._CACHE_FORMAT + 1)  # a new cached form
    assert lazy_sdk.cached_index(init) is not None and len(built) == 3
    monkeypatch.setattr(importlib.util, "MAGIC_NUMBER", b"\x00\x00\r\n")  # another interpreter's bytecode
    assert lazy_sdk.cached_index(init) is not None and len(built) == 4

    def unreadable(_path: object) -> Any:
        raise PermissionError("denied")

    monkeypatch.setattr(lazy_sdk.os, "scandir", unreadable)
    assert lazy_sdk.cached_index(init) == real(init) and len(built) == 5


def test_the_finder_hands_each_kind_of_provider_module_its_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "fakeprov3"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "pkg" / "__init__.py").write_text("from .mod import *\n")
    (root / "pkg" / "mod.py").write_text("__all__ = ['M']\nM = 1\n")
    (root / "pkg" / "_inputs.py").write_text("__all__ = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(lazy_sdk, "PROVIDERS", (*lazy_sdk.PROVIDERS, "fakeprov3"))
    finder = lazy_sdk.LazyProviderFinder()
    path = [str(root)]
    assert finder.find_spec("fakeprov3", None) is None  # the top-level package loads as usual
    assert finder.find_spec("elsewhere.pkg", path) is None  # not a provider
    package = finder.find_spec("fakeprov3.pkg", path)
    assert package is not None and isinstance(package.loader, lazy_sdk._LazyPackageLoader)
    module = finder.find_spec("fakeprov3.pkg.mod", [str(root / "pkg")])
    assert module is not None and isinstance(module.loader, lazy_sdk._ModuleLoader)
    # Everything else a loader offers (the source, the code, resource readers) is the file loader's.
    assert module.loader.get_source("fakeprov3.pkg.mod") == "__all__ = ['M']\nM = 1\n"
    assert module.loader.create_module(module) is None
    assert finder.find_spec("fakeprov3.pkg.missing", [str(root / "pkg")]) is None


def test_install_puts_one_finder_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", [m for m in sys.meta_path if m is not lazy_sdk._FINDER])
    lazy_sdk.install()
    lazy_sdk.install()
    assert sys.meta_path[0] is lazy_sdk._FINDER
    assert sum(m is lazy_sdk._FINDER for m in sys.meta_path) == 1


def test_index_drops_a_name_a_later_plain_import_binds(tmp_path: Path) -> None:
    init = _package(
        tmp_path,
        "from .a import *\nimport json\nimport os.path\nfrom typing import Any as Shared\n",
        {"a": "__all__ = ['json', 'os', 'Shared', 'Kept']\n"},
    )
    index = build_index(init)
    assert index is not None
    assert sorted(index.owners) == ["Kept", "a"]  # json, os and Shared are the preamble's, as in the __init__
    assert index.preamble.co_filename == str(init)


@pytest.fixture
def odd(provider: MakeProvider) -> Path:
    """A provider package whose __init__ does more than import (loaded as written) and one of the generated shape."""
    return provider(
        "fakeprov4",
        {
            "odd/__init__.py": "from .mod import *\nEXTRA = len(__name__)\n",
            "odd/mod.py": "__all__ = ['M']\nM = 1\n",
            "ok/__init__.py": "import typing\nfrom .mod import *\nfrom .other import *\n",
            "ok/mod.py": "__all__ = ['M', '_hidden']\nM = 1\n_hidden = 0\n",
            "ok/other.py": "__all__ = ['N']\nN = 2\n",
        },
    )


def test_a_package_of_another_shape_runs_its_init_as_written(odd: Path) -> None:
    package = importlib.import_module("fakeprov4.odd")
    assert type(package) is ModuleType
    assert (1, len("fakeprov4.odd")) == (package.M, package.EXTRA)
    with pytest.raises(AttributeError, match=r"^module 'fakeprov4\.odd' has no attribute 'Missing'$"):
        _ = package.Missing


def test_a_lazy_package_lists_and_star_exports_its_public_names(odd: Path) -> None:
    package = importlib.import_module("fakeprov4.ok")
    assert type(package) is lazy_sdk.LazyPackage
    assert package.__all__ == ["M", "N", "mod", "other", "typing"]
    namespace: dict[str, Any] = {}
    exec("from fakeprov4.ok import *", namespace)
    assert (namespace["M"], namespace["N"]) == (1, 2) and "_hidden" not in namespace
    assert package._hidden == 0  # exported by its module, bound on first read, not star-exported
