"""Generated type modules executed class by class (gpucloud.plan.lazy_types): the classes a program reads are the
classes the SDK's own module would have defined, with the same resolved type hints, and the rest are never run."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
import threading
import typing
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pulumi_aws
import pulumi_kubernetes
import pytest

from gpucloud.plan import lazy_types
from gpucloud.plan.lazy_types import build_types_index, code_names

if TYPE_CHECKING:
    from tests.plan.conftest import MakeProvider

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------- a fake provider

_RECORD = """
calls = []

def deco(tag):
    calls.append(("evaluate", tag))
    def apply(cls):
        calls.append(("apply", tag, cls.__name__))
        return cls
    return apply
"""

_INPUTS = """\
# generated
import sys
from typing import Optional, TypedDict, NotRequired
from .. import _record

__all__ = [
    'AArgs',
    'AArgsDict',
    'BArgs',
    'CArgs',
    'UnusedArgs',
]

@_record.deco('outer')
@_record.deco('inner')
class AArgs:
    def __init__(self, b: Optional['BArgs'] = None):
        self.b = b

    def method(self) -> int:
        return 1


class AArgsDict(TypedDict):
    b: NotRequired['BArgsDict']

@_record.deco('b')
class BArgs:
    def __init__(self, c: 'CArgs'):
        self.c = c

class CArgs:
    def again(self) -> 'BArgs': ...

@_record.deco('unused')
class UnusedArgs:
    pass
"""

_THING = """\
from ._inputs import *
from . import outputs

__all__ = ['Thing']

class Thing:
    def f(self, a: 'AArgs') -> 'outputs.Out':
        ...
"""

_OUTPUTS = """\
from . import outputs

__all__ = [
    'Out',
]

class Out:
    def child(self) -> 'outputs.Out': ...
"""


@pytest.fixture
def fake(provider: MakeProvider) -> Path:
    root = provider(
        "fakeprov2",
        {
            "_record.py": _RECORD,
            "things/__init__.py": "import typing\nfrom ._inputs import *\nfrom .thing import *\n",
            "things/_inputs.py": _INPUTS,
            "things/outputs.py": _OUTPUTS,
            "things/thing.py": _THING,
        },
    )
    return root / "things"


def test_a_resource_module_binds_only_the_input_types_it_names(fake: Path) -> None:
    thing = importlib.import_module("fakeprov2.things.thing")
    inputs = sys.modules["fakeprov2.things._inputs"]
    assert type(inputs) is lazy_types.LazyTypes
    # AArgs is named in a quoted annotation; BArgs and CArgs come with it (AArgs names BArgs, BArgs CArgs).
    assert {"AArgs", "BArgs", "CArgs"} <= set(vars(inputs))
    assert "UnusedArgs" not in vars(inputs)
    assert "AArgsDict" not in vars(inputs)
    assert "AArgs" in vars(thing) and "UnusedArgs" not in vars(thing)
    # What the star-import left unbound is still an attribute of the module, the same object, and listed.
    assert thing.UnusedArgs is inputs.UnusedArgs
    assert thing.UnusedArgs.__module__ == "fakeprov2.things._inputs"
    assert "AArgsDict" in dir(thing) and "__getattr__" not in dir(thing)
    with pytest.raises(AttributeError, match="has no attribute 'Missing'"):
        _ = thing.Missing


def test_type_hints_resolve_over_the_module_namespace_as_pulumi_reads_them(fake: Path) -> None:
    thing = importlib.import_module("fakeprov2.things.thing")
    inputs = sys.modules["fakeprov2.things._inputs"]
    outputs = sys.modules["fakeprov2.things.outputs"]

    # pulumi._types resolves a class's hints with a copy of its module's namespace (_globals_for_cls) and locals of
    # its own, so typing evaluates every forward reference again (it caches one only when the two are the same).
    def hints(fn: Any, module: ModuleType) -> dict[str, Any]:
        return typing.get_type_hints(fn, globalns=dict(vars(module)), localns={"T": type(None)})

    assert hints(thing.Thing.f, thing) == {"a": inputs.AArgs, "return": outputs.Out}
    assert hints(inputs.AArgs.__init__, inputs)["b"] == inputs.BArgs | None
    assert hints(inputs.BArgs.__init__, inputs) == {"c": inputs.CArgs}
    assert hints(inputs.CArgs.again, inputs) == {"return": inputs.BArgs}


def test_a_class_is_created_as_its_class_statement_creates_it(fake: Path) -> None:
    record = importlib.import_module("fakeprov2._record")
    inputs = importlib.import_module("fakeprov2.things._inputs")
    a = inputs.AArgs
    # Decorators evaluated top-down, applied bottom-up; the sibling it names (BArgs) defined first.
    assert record.calls[-4:] == [
        ("evaluate", "outer"),
        ("evaluate", "inner"),
        ("apply", "inner", "AArgs"),
        ("apply", "outer", "AArgs"),
    ]
    assert record.calls.index(("apply", "b", "BArgs")) < record.calls.index(("apply", "inner", "AArgs"))
    assert (a.__module__, a.__qualname__, a().method()) == ("fakeprov2.things._inputs", "AArgs", 1)
    # The body is the one compiled from the file: line numbers point into it.
    source = (fake / "_inputs.py").read_text().splitlines()
    assert source[a.method.__code__.co_firstlineno - 1].strip() == "def method(self) -> int:"
    assert inputs.AArgsDict.__required_keys__ == frozenset() and "b" in inputs.AArgsDict.__optional_keys__


def test_a_class_read_by_many_threads_at_once_is_created_once(fake: Path) -> None:
    record = importlib.import_module("fakeprov2._record")
    inputs = importlib.import_module("fakeprov2.things._inputs")
    start = threading.Barrier(8)
    seen: list[type] = []

    def read() -> None:
        start.wait(10)
        seen.append(inputs.UnusedArgs)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(seen) == 8 and len({id(cls) for cls in seen}) == 1
    assert record.calls.count(("apply", "unused", "UnusedArgs")) == 1


def test_a_star_import_from_elsewhere_binds_every_name(fake: Path) -> None:
    namespace: dict[str, Any] = {}
    exec("from fakeprov2.things._inputs import *", namespace)
    assert sorted(k for k in namespace if not k.startswith("__")) == [
        "AArgs",
        "AArgsDict",
        "BArgs",
        "CArgs",
        "UnusedArgs",
    ]
    package = importlib.import_module("fakeprov2.things")
    assert package.UnusedArgs is namespace["UnusedArgs"]


def test_a_module_with_its_own_getattr_keeps_its_star_import_whole(fake: Path) -> None:
    (fake / "hooked.py").write_text(
        "from ._inputs import *\n\ndef __getattr__(name):\n    raise AttributeError(name)\n"
    )
    hooked = importlib.import_module("fakeprov2.things.hooked")
    assert {"AArgs", "AArgsDict", "BArgs", "CArgs", "UnusedArgs"} <= set(vars(hooked))


def test_dir_lists_every_class_whether_created_or_not(fake: Path) -> None:
    inputs = importlib.import_module("fakeprov2.things._inputs")
    listed = dir(inputs)
    assert listed == sorted(listed)
    assert {"AArgs", "AArgsDict", "BArgs", "CArgs", "UnusedArgs", "__name__", "pulumi"} - set(listed) == {"pulumi"}
    assert "UnusedArgs" not in vars(inputs)  # listing creates nothing
    assert vars(inputs)["__all__"] == ["AArgs", "AArgsDict", "BArgs", "CArgs", "UnusedArgs"]
    with pytest.raises(AttributeError, match=r"'fakeprov2\.things\._inputs' has no attribute 'Ghost'"):
        _ = inputs.Ghost


def test_a_module_of_another_shape_is_executed_as_written(fake: Path) -> None:
    (fake / "outputs.py").write_text(_OUTPUTS + "ALIAS = Out\n")
    outputs = importlib.import_module("fakeprov2.things.outputs")
    assert type(outputs) is ModuleType
    assert outputs.ALIAS is outputs.Out and "Out" in vars(outputs)
    assert outputs.__all__ == ["Out"]


def test_a_module_whose_star_imports_are_not_lazy_gets_no_hooks(fake: Path) -> None:
    (fake / "plain.py").write_text("from ._record_like import *\nX = 1\n")
    (fake / "_record_like.py").write_text("__all__ = ['Y']\nY = 2\n")
    plain = importlib.import_module("fakeprov2.things.plain")
    assert (plain.X, plain.Y) == (1, 2)
    assert "__getattr__" not in vars(plain) and "__dir__" not in vars(plain)


def test_the_rest_of_a_star_import_follows_the_later_module(fake: Path) -> None:
    """Two lazy modules exporting the same name: as with two star-imports, the later one's class is the one bound."""
    exported = _OUTPUTS.replace("    'Out',\n", "    'Out',\n    'UnusedArgs',\n")
    (fake / "outputs.py").write_text(exported + "class UnusedArgs:\n    pass\n")
    (fake / "both.py").write_text("from ._inputs import *\nfrom .outputs import *\n\ndef f(a: 'AArgs') -> None: ...\n")
    both = importlib.import_module("fakeprov2.things.both")
    outputs = sys.modules["fakeprov2.things.outputs"]
    assert both.UnusedArgs is outputs.UnusedArgs
    assert vars(both)["UnusedArgs"] is outputs.UnusedArgs  # bound on first read, as the star-import would have
    assert both.AArgs is sys.modules["fakeprov2.things._inputs"].AArgs
    listed = dir(both)
    assert {"AArgs", "AArgsDict", "Out", "UnusedArgs", "f"} <= set(listed) and listed == sorted(listed)
    assert "__getattr__" not in listed and "__dir__" not in listed


def test_decorator_and_bases_expressions_are_compiled_once(fake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy_types, "_EXPRESSIONS", {})
    inputs = importlib.import_module("fakeprov2.things._inputs")
    _ = (inputs.AArgs, inputs.AArgsDict, inputs.UnusedArgs)
    assert set(lazy_types._EXPRESSIONS) == {
        "_record.deco('outer')",
        "_record.deco('inner')",
        "_record.deco('b')",
        "_record.deco('unused')",
        "(TypedDict,)",
    }
    assert all(code.co_filename == "<generated class>" for code in lazy_types._EXPRESSIONS.values())
    assert lazy_types._evaluate("(1, 2)", {}) == (1, 2) and lazy_types._EXPRESSIONS["(1, 2)"] is not None


def _index(tmp_path: Path, text: str) -> lazy_types.TypesIndex | None:
    path = tmp_path / "_inputs.py"
    path.write_text(text)
    return build_types_index(path, compile(text, str(path), "exec", dont_inherit=True))


def test_the_fake_module_is_of_the_generated_shape(tmp_path: Path) -> None:
    index = _index(tmp_path, _INPUTS)
    assert index is not None
    assert index.names == ("AArgs", "AArgsDict", "BArgs", "CArgs", "UnusedArgs")
    assert index.classes["AArgs"][:2] == (("_record.deco('outer')", "_record.deco('inner')"), "")
    assert index.classes["AArgsDict"][:2] == ((), "TypedDict")
    assert index.refs("AArgs") == ("BArgs",) and index.refs("CArgs") == ("BArgs",)
    assert index.refs("AArgsDict") == ()  # 'BArgsDict' is not a class of the module


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda t: t + "X = 1\n", "a top-level statement after the classes"),
        (lambda t: t.replace("class CArgs:", "class CArgs(metaclass=type):"), "a metaclass keyword"),
        (lambda t: t.replace("    'UnusedArgs',\n", ""), "a class not exported"),
        (lambda t: t.replace("    'CArgs',\n", "    'CArgs',\n    'Ghost',\n"), "an export that is no class"),
        (lambda t: t.replace("    'CArgs',\n", "    'CArgs',\n    'CArgs',\n"), "an export listed twice"),
        (lambda t: t + "class CArgs:\n    pass\n", "a class defined twice"),
        (
            lambda t: t.replace(
                "@_record.deco('unused')\nclass UnusedArgs:\n    pass\n",
                "if True:\n    class UnusedArgs:\n        pass\n",
            ),
            "a conditional class",
        ),
        (lambda t: t.replace("__all__ = [", "__all__ = list(\n").replace("]\n\n@", ")\n\n@", 1), "__all__ not a list"),
        (lambda t: t + "@_record.deco('f')\ndef f():\n    pass\n", "a decorated function"),
        (lambda t: t.replace("class CArgs:", "class CArgs(*()):"), "bases unpacked"),
        (lambda t: t.replace("__all__ = [", "__names__ = ["), "no __all__"),
        (lambda t: t.replace("\n@_record.deco('outer')\n", "\n@_record.deco('outer')\n\n"), "a decorator apart"),
    ],
)
def test_other_shapes_are_executed_as_written(tmp_path: Path, change: Any, why: str) -> None:
    text = change(_INPUTS)
    compile(text, "x", "exec")  # still Python
    assert _index(tmp_path, text) is None, why


def test_an_index_needs_the_compiled_module(tmp_path: Path) -> None:
    path = tmp_path / "_inputs.py"
    path.write_text(_INPUTS)
    assert build_types_index(path, None) is None
    missing = importlib.machinery.SourceFileLoader("gone", str(tmp_path / "gone.py"))
    assert lazy_types.cached_types_index(tmp_path / "gone.py", missing, "gone") is None


def test_postponed_annotations_are_executed_as_written(tmp_path: Path) -> None:
    text = "from __future__ import annotations\n" + _INPUTS
    path = tmp_path / "_inputs.py"
    path.write_text(text)
    assert build_types_index(path, compile(text, str(path), "exec", dont_inherit=True)) is None


def test_code_names_reads_names_and_strings_of_nested_code() -> None:
    code = compile(
        "def f(x: 'Quoted') -> None:\n    return Global\nclass K:\n    y: 'Inner'\n", "m", "exec", dont_inherit=True
    )
    assert {"Quoted", "Global", "Inner", "f", "K"} <= code_names(code)


# ------------------------------------------------------------------------------------------- the real SDKs


def _type_modules() -> list[Path]:
    roots = [Path(pulumi_aws.__file__).parent, Path(pulumi_kubernetes.__file__).parent]
    return sorted(p for root in roots for name in ("_inputs.py", "outputs.py") for p in root.rglob(name))


def test_every_installed_type_module_is_of_the_generated_shape() -> None:
    """A provider upgrade that changes the generator's shape fails here (its modules would run eagerly)."""
    modules = _type_modules()
    assert len(modules) == 585  # pulumi-aws 7.51.1 and pulumi-kubernetes 4.34.2, top-level modules included
    classes = 0
    for path in modules:
        loader = importlib.machinery.SourceFileLoader("probe", str(path))
        index = build_types_index(path, loader.get_code("probe"))
        assert index is not None, path
        classes += len(index.classes)
    assert classes == 33017


# In a fresh interpreter, eager (the SDK as shipped) or lazy (the offline finder installed): every type hint pulumi
# resolves for these resources, their args and every nested input and output type reachable from them.
PROBE = """
import importlib, json, sys, typing
mode, names = sys.argv[1], sys.argv[2:]
if mode == "lazy":
    from gpucloud.plan import lazy_sdk
    lazy_sdk.install()
from pulumi import _types

def nested(hint):
    found = []
    for arg in typing.get_args(hint) or ():
        found.extend(nested(arg))
    if isinstance(hint, type) and (_types.is_input_type(hint) or _types.is_output_type(hint)):
        found.append(hint)
    return found

out, queue, seen = {}, [], set()
for name in names:
    module, _, cls = name.rpartition(".")
    resource = getattr(importlib.import_module(module), cls)
    queue.append(resource)
    queue.append(getattr(sys.modules[resource.__module__], cls + "Args"))
while queue:
    cls = queue.pop()
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key in seen:
        continue
    seen.add(key)
    if _types.is_input_type(cls):
        hints = _types.input_type_types(cls)
    elif _types.is_output_type(cls):
        hints = _types.output_type_types(cls)
    else:
        hints = _types.resource_types(cls)
    out[key] = {k: repr(v) for k, v in sorted(hints.items())}
    for hint in hints.values():
        queue.extend(nested(hint))
loaded = sorted(n for n, m in sys.modules.items() if n.endswith(("._inputs", ".outputs")) and hasattr(m, "__dict__"))
defined = sum(len([k for k in vars(sys.modules[n]) if k[:1].isupper()]) for n in loaded)
print(json.dumps({"hints": out, "defined": defined}))
"""

RESOURCES = [
    "pulumi_aws.sagemaker.Model",
    "pulumi_aws.sagemaker.EndpointConfiguration",
    "pulumi_aws.ec2.Instance",
    "pulumi_aws.ec2.LaunchTemplate",
    "pulumi_aws.ec2.SpotFleetRequest",
    "pulumi_aws.eks.Cluster",
    "pulumi_aws.eks.NodeGroup",
    "pulumi_aws.autoscaling.Group",
    "pulumi_aws.batch.ComputeEnvironment",
    "pulumi_aws.emr.Cluster",
    "pulumi_aws.fsx.LustreFileSystem",
    "pulumi_aws.s3.BucketV2",
    "pulumi_kubernetes.apps.v1.Deployment",
    "pulumi_kubernetes.core.v1.Pod",
    "pulumi_kubernetes.batch.v1.CronJob",
    "pulumi_kubernetes.networking.v1.Ingress",
]


def _hints(mode: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode, *RESOURCES], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_resolved_hints_are_those_of_the_sdk_as_shipped() -> None:
    eager, lazy = _hints("eager"), _hints("lazy")
    assert lazy["hints"] == eager["hints"]
    assert len(lazy["hints"]) == 859  # resources, args and every nested type reachable from them
    assert lazy["hints"]["pulumi_aws.ec2.outputs.InstanceRootBlockDevice"]["volumeSize"] == "<class 'int'>"
    # The lazy run defined only the classes it was asked about (and their quoted siblings), a fraction of all.
    assert lazy["defined"] < eager["defined"] / 3


def test_the_stored_index_is_the_built_one_until_the_module_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUCLOUD_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "_inputs.py"
    path.write_text(_INPUTS)
    loader = importlib.machinery.SourceFileLoader("probe_inputs", str(path))
    first = lazy_types.cached_types_index(path, loader, "probe_inputs")
    assert first is not None and first.names == ("AArgs", "AArgsDict", "BArgs", "CArgs", "UnusedArgs")
    again = lazy_types.cached_types_index(path, loader, "probe_inputs")
    assert again is not None and again.classes == first.classes
    assert again.body("AArgs").co_name == "AArgs"
    path.write_text(
        _INPUTS.replace("    'UnusedArgs',\n", "    'UnusedArgs',\n    'Late',\n") + "class Late:\n    pass\n"
    )
    changed = lazy_types.cached_types_index(
        path, importlib.machinery.SourceFileLoader("probe_inputs", str(path)), "probe_inputs"
    )
    assert changed is not None and changed.names[-1] == "Late"
    # The same size, a later modification time: read again too.
    same_size = path.read_text().replace("Late", "Lata")
    path.write_text(same_size)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000_000))
    reloaded = importlib.machinery.SourceFileLoader("probe_inputs", str(path))
    renamed = lazy_types.cached_types_index(path, reloaded, "probe_inputs")
    assert renamed is not None and renamed.names[-1] == "Lata"
    # Another shape is stored as such, and read back as such.
    path.write_text(_INPUTS + "X = 1\n")
    odd = importlib.machinery.SourceFileLoader("probe_inputs", str(path))
    assert lazy_types.cached_types_index(path, odd, "probe_inputs") is None
    assert lazy_types.cached_types_index(path, odd, "probe_inputs") is None


def test_a_class_whose_base_is_a_sibling_is_created_after_it(fake: Path) -> None:
    text = _INPUTS.replace("    'UnusedArgs',\n", "    'UnusedArgs',\n    'Derived',\n").replace(
        "@_record.deco('unused')\nclass UnusedArgs:",
        "class Derived(UnusedArgs):\n    pass\n\n@_record.deco('unused')\nclass UnusedArgs:",
    )
    (fake / "_inputs.py").write_text(text)
    inputs = importlib.import_module("fakeprov2.things._inputs")
    assert type(inputs) is lazy_types.LazyTypes  # still the generated shape: the base is created first
    assert inputs.Derived.__mro__[1] is inputs.UnusedArgs
    assert lazy_types._INDEXES["fakeprov2.things._inputs"].refs("Derived") == ("UnusedArgs",)
