"""Load the provider SDKs' generated sub-packages one module at a time during offline plans.

Every leaf package of pulumi_aws (`pulumi_aws.ec2`) and pulumi_kubernetes (`pulumi_kubernetes.core.v1`) is
generated with an ``__init__.py`` that star-imports every module of the package: touching ``aws.ec2.Vpc``
executes about 180 modules, each a class body full of typing expressions. A prod plan uses under 20 of them,
and the unused rest cost about 0.5 s of a 3 s plan. While installed, the finder below gives such packages a loader that
runs only the ``__init__``'s plain statements and resolves each exported name on first use (the package becomes
a LazyPackage, a module subclass with ``__getattr__``), from an index of the sibling modules' ``__all__`` built
in the ``__init__``'s own order, so that a later star-import shadows an earlier one exactly as it does there.

The SDKs bind each sub-package on the top-level package with ``pulumi._utils.lazy_import``, a copy of the
stdlib's LazyLoader without the lock CPython later added (gh-114763): the first attribute access turns the module
into a plain module and only then runs the loader, so a second thread reading ``aws.cloudformation.Stack``
meanwhile finds an empty module (the SDK registers resources from executor threads). Every module this finder
creates therefore carries a PEP 562 ``__getattr__`` that waits (bounded) for the loader to finish and then
answers as the loaded package would.

A package whose ``__init__.py`` holds anything but imports (or one of whose modules neither has ``__all__`` nor
a top level that shows what it binds) is loaded as usual: the finder only takes shapes it reproduces exactly.
Only the offline engine installs the finder; the real `pulumi preview` / `up` path imports the SDKs as shipped.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from gpucloud import filecache
from gpucloud.plan import lazy_types

#: Top-level provider packages whose leaf packages are loaded lazily.
PROVIDERS = ("pulumi_aws", "pulumi_kubernetes")

_ALL = re.compile(r"^__all__\s*=\s*\[(.*?)\]", re.MULTILINE | re.DOTALL)
_NAME = re.compile(r"""['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")
_CHUNK = 1 << 16


@dataclass(frozen=True)
class PackageIndex:
    """What a generated ``__init__.py`` binds: its plain statements, and each other name's source."""

    preamble: CodeType
    # exported name -> (sibling module, attribute in it, or None for the module itself)
    owners: dict[str, tuple[str, str | None]]


def _module_all(path: Path) -> list[str] | None:
    """The names in a generated module's ``__all__``, read without importing it (only up to the list's end)."""
    text = ""
    with path.open(encoding="utf-8") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            text += chunk
            match = _ALL.search(text)
            if match is not None:
                return _NAME.findall(match.group(1))
            if not chunk:
                return None


def _top_level_names(path: Path) -> list[str] | None:
    """What ``from module import *`` binds for a module without ``__all__`` (pulumi_kubernetes' hand-written
    helm.py, yaml.py): every public name its top level binds. None when the top level does anything but
    import, define and assign plain names, since then only running it tells."""
    names: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Import):
            names.extend(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.extend(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(isinstance(target, ast.Name) for target in targets):
                return None
            names.extend(target.id for target in targets if isinstance(target, ast.Name))
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # docstrings
            return None
    return [name for name in names if not name.startswith("_")]


def _module_exports(path: Path) -> list[str] | None:
    names = _module_all(path)
    return names if names is not None else _top_level_names(path)


def build_index(init_path: Path) -> PackageIndex | None:
    """Index a generated package ``__init__.py``, or None when it is not of the shape this module reproduces."""
    tree = ast.parse(init_path.read_text(encoding="utf-8"), str(init_path))
    package_dir = init_path.parent
    preamble: list[ast.stmt] = []
    owners: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is not None:
            if [alias.name for alias in node.names] != ["*"]:
                return None
            source = package_dir / f"{node.module}.py"
            if not source.is_file():
                return None
            names = _module_exports(source)
            if names is None:
                return None
            # As the import system does: the submodule is bound first, then the names it exports.
            owners[node.module] = (node.module, None)
            for name in names:
                owners[name] = (node.module, name)
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            for alias in node.names:
                if not (package_dir / f"{alias.name}.py").is_file():
                    return None
                owners[alias.asname or alias.name] = (alias.name, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            # `import typing`, `from .. import _utilities`: cheap, and they bind names; run them as written.
            preamble.append(node)
            for alias in node.names:
                owners.pop(alias.asname or alias.name.split(".")[0], None)
        else:
            return None
    code = compile(ast.Module(body=preamble, type_ignores=[]), str(init_path), "exec", dont_inherit=True)
    return PackageIndex(preamble=code, owners=owners)


# Bump when the cached form of an index changes.
_CACHE_FORMAT = 2


def cached_index(init_path: Path) -> PackageIndex | None:
    """build_index, as stored by an earlier process for the same package (filecache). Building it parses the
    ``__init__.py`` and reads the head of every module of the package (ec2 has 400); the signature is what
    that reads: the size and modification time of every module file of the package, and the interpreter's
    bytecode magic (the preamble is compiled code)."""
    try:
        files = sorted(
            (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
            for entry in os.scandir(init_path.parent)
            if entry.name.endswith(".py") and entry.is_file()
        )
    except OSError:
        return build_index(init_path)
    signature = (_CACHE_FORMAT, importlib.util.MAGIC_NUMBER, str(init_path), tuple(files))

    def derive() -> tuple[CodeType, dict[str, tuple[str, str | None]]] | None:
        index = build_index(init_path)
        return None if index is None else (index.preamble, index.owners)

    data = filecache.memo("sdk-package", str(init_path), signature, derive)
    return None if data is None else PackageIndex(preamble=data[0], owners=data[1])


# The index of every package loaded lazily, by package name: kept out of the packages' own namespaces so that
# dir() and star-imports see only what the generated __init__ would have bound.
_INDEXES: dict[str, PackageIndex] = {}


# The SDK registers resources from executor threads, so two threads can resolve names of one package at once (an
# expansion model's children autonamed while the program imports the same module); one at a time, each sees the
# submodule whole and the binding the generated __init__ would have made.
_RESOLVING = threading.RLock()


# How long a thread reading a package that another thread is executing waits for it; a bound so that an import
# cycle across threads ends in an AttributeError naming the package, not a hang.
LOAD_WAIT_S = 60.0


class _AwaitLoad:
    """A module's ``__getattr__`` (PEP 562) from creation on: consulted only for names not yet in its namespace.

    While another thread executes the module it waits for that to finish; in the executing thread itself (its
    ``__init__`` probing ``hasattr``) it answers as a partially initialised module does. Afterwards it puts back the
    class the loader gave the module, in case a racing LazyLoader trigger reset it, and resolves the name there.
    """

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.lock = threading.RLock()
        self.done = False
        self.loaded_class: type[ModuleType] | None = None

    def __call__(self, name: str) -> Any:
        fullname = ModuleType.__getattribute__(self.module, "__name__")
        if not self.lock.acquire(timeout=LOAD_WAIT_S):
            raise AttributeError(
                f"module {fullname!r} has no attribute {name!r}: another thread was still loading it after "
                f"{LOAD_WAIT_S:g} s"
            )
        try:
            ready, loaded_class = self.done, self.loaded_class
        finally:
            self.lock.release()
        if ready and loaded_class is not None:
            if type(self.module) is not loaded_class:
                self.module.__class__ = loaded_class
            if isinstance(self.module, LazyPackage):
                return LazyPackage.__getattr__(self.module, name)
            namespace = ModuleType.__getattribute__(self.module, "__dict__")
            if name in namespace:
                return namespace[name]
        raise AttributeError(f"module {fullname!r} has no attribute {name!r}")


def _await_load(module: ModuleType) -> _AwaitLoad:
    """The module's _AwaitLoad, installed now if the module was created elsewhere (importlib.reload)."""
    namespace = ModuleType.__getattribute__(module, "__dict__")
    waiter = namespace.get("__getattr__")
    if not isinstance(waiter, _AwaitLoad):
        waiter = _AwaitLoad(module)
        namespace["__getattr__"] = waiter
    return waiter


class LazyPackage(ModuleType):
    """A generated package whose exported names are imported from their modules on first use."""

    def __getattr__(self, name: str) -> Any:
        fullname = ModuleType.__getattribute__(self, "__name__")
        owner = _INDEXES[fullname].owners.get(name)
        if owner is None:
            raise AttributeError(f"module {fullname!r} has no attribute {name!r}")
        with _RESOLVING:
            submodule = importlib.import_module(f"{fullname}.{owner[0]}")
            value = submodule if owner[1] is None else getattr(submodule, owner[1])
            ModuleType.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        fullname = ModuleType.__getattribute__(self, "__name__")
        owner = _INDEXES[fullname].owners.get(name)
        if (
            owner is not None
            and owner[1] is not None
            and isinstance(value, ModuleType)
            and value.__name__ == f"{fullname}.{name}"
        ):
            # The import system binding submodule `get_ami` on its package after loading it; in the generated
            # __init__ the star-import that follows re-binds the name to the function `get_ami`. Do the same.
            if owner[0] != name:
                return  # exported by a later module: __getattr__ resolves it from there
            value = getattr(value, owner[1])
        ModuleType.__setattr__(self, name, value)

    def __dir__(self) -> list[str]:
        fullname = ModuleType.__getattribute__(self, "__name__")
        names = set(ModuleType.__getattribute__(self, "__dict__")) | set(_INDEXES[fullname].owners)
        return sorted(names - {"__getattr__"})  # the load waiter is not one of the package's names


class _LazyPackageLoader(importlib.abc.Loader):
    """Runs a generated package's preamble and defers each exported name to the module that defines it."""

    def __init__(self, original: Any) -> None:
        self._original = original

    def __getattr__(self, name: str) -> Any:  # resource readers and the like come from the file loader
        return getattr(self._original, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module = ModuleType(spec.name)
        _await_load(module)
        return module

    def exec_module(self, module: ModuleType) -> None:
        waiter = _await_load(module)
        with waiter.lock:
            if waiter.done:
                # Python 3.11's LazyLoader: two threads triggered the load at once and the second reset the class
                # to a plain module after the first had run this; the module is loaded, only its class is back.
                if waiter.loaded_class is not None:
                    module.__class__ = waiter.loaded_class
                return
            try:
                self._exec(module)
                waiter.loaded_class = type(module)
            finally:
                waiter.done = True

    def _exec(self, module: ModuleType) -> None:
        spec = module.__spec__
        assert spec is not None and spec.origin is not None
        index = cached_index(Path(spec.origin))
        if index is None:
            self._original.exec_module(module)
            return
        namespace = module.__dict__
        exec(index.preamble, namespace)
        for name in index.owners:  # bound by the preamble, then re-bound by a later star-import
            namespace.pop(name, None)
        # The generated __init__ has no __all__, so `from pkg import *` takes every public name it bound.
        namespace["__all__"] = sorted(
            name for name in set(index.owners) | set(namespace) if not name.startswith("_") and name != "__all__"
        )
        _INDEXES[spec.name] = index
        module.__class__ = LazyPackage


class _ModuleLoader(importlib.abc.Loader):
    """A plain module of a provider package: a generated type module (`_inputs`, `outputs`) is executed class by
    class, any other module with its star-imports of those bound to the names it refers to (lazy_types)."""

    def __init__(self, original: importlib.machinery.SourceFileLoader) -> None:
        self._original = original

    def __getattr__(self, name: str) -> Any:  # get_code, get_source, resource readers: the file loader's
        return getattr(self._original, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        if lazy_types.is_type_module(module.__name__):
            lazy_types.load_types(module, self._original)
        else:
            lazy_types.exec_importer(module, self._original)


class LazyProviderFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder that hands the providers' packages to _LazyPackageLoader.

    Whether a package is of the generated shape is only decided when it is executed (most of the ~300 that
    pulumi_aws declares never are); packages of any other shape, such as those holding sub-packages, then run
    their ``__init__`` as written. Plain modules (from source) get _ModuleLoader.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is None or fullname.partition(".")[0] not in PROVIDERS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or spec.origin is None:
            return spec
        if spec.submodule_search_locations is not None:
            spec.loader = _LazyPackageLoader(spec.loader)
        elif isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _ModuleLoader(spec.loader)
        return spec


_FINDER = LazyProviderFinder()


def install() -> None:
    """Put the finder first on sys.meta_path (idempotent). Packages already imported are left as they are."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
