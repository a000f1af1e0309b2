"""Execute the provider SDKs' generated type modules one class at a time during offline plans.

Each leaf package of pulumi_aws and pulumi_kubernetes holds an ``_inputs.py`` and an ``outputs.py`` with every
nested input and output type of the package: sagemaker's are 1.4 MB and 1.2 MB, 820 and 410 classes, each
class body a run of typing expressions and decorators. Every resource module of the package star-imports
``_inputs``, so creating one ``aws.sagemaker.Model`` executed all 1,230 classes; over the red-team corpus these
modules took 0.66 s of a 2.8 s run, to define classes the programs never touch.

While the offline finder is installed (lazy_sdk), such a module is loaded as a LazyTypes module: its header
(the imports above ``__all__``) runs as written, and a class is created when its name is first read, as its
``class`` statement would create it (decorators, bases, the class body the interpreter compiled for the module),
together with the sibling classes it names in quotes, so that ``typing.get_type_hints`` over the module's
namespace (as ``pulumi._types`` resolves a class's properties) finds every class it needs. A resource module of
the same package is executed by exec_importer: its ``from ._inputs import *`` binds the names the module's own
code refers to (its code objects' names and string constants: the quoted annotations), and the rest stay
reachable as attributes of the module (PEP 562).

Only a module of exactly the generated shape is loaded this way: after ``__all__``, nothing at the top level
but decorator lines and ``class`` lines, one class per exported name. Anything else (another SDK version's
shape) is executed as written. Class objects are created once, under one lock, whichever thread asks first.
"""

from __future__ import annotations
import __future__

import builtins
import contextvars
import importlib.util
import marshal
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

from gpucloud import filecache

#: The generated type modules of a leaf package that are executed class by class.
TYPE_MODULES = frozenset({"_inputs", "outputs"})

_ALL = re.compile(rb"^__all__\s*=\s*\[(.*?)\]", re.MULTILINE | re.DOTALL)
_NAME = re.compile(rb"""['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")
# A class statement on one line: its name and what stands in its parentheses.
_CLASS_LINE = re.compile(rb"\nclass ([A-Za-z_][A-Za-z0-9_]*)(?:\(([^()\n]*)\))?:[ \t]*\r?(?=\n)")
# A top-level line that is neither blank, a comment, a decorator nor a class statement.
_OTHER_TOP_LEVEL = re.compile(rb"\n(?![ \t\r\n#@]|class |\Z)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class TypesIndex:
    """Where each class of a generated type module is defined, and what its header runs."""

    path: str
    header: CodeType
    names: tuple[str, ...]  # __all__, in order
    # class name -> (decorator expressions, bases expression or "", sibling classes its body names, its body as
    # marshalled from the module's compiled code: unmarshalled only when the class is created)
    classes: dict[str, tuple[tuple[str, ...], str, tuple[str, ...], bytes]]

    def refs(self, name: str) -> tuple[str, ...]:
        return self.classes[name][2]

    def body(self, name: str) -> CodeType:
        code = marshal.loads(self.classes[name][3])
        assert isinstance(code, CodeType)
        return code

    def to_marshal(self) -> tuple[Any, ...]:
        return (self.header, self.names, self.classes)

    @classmethod
    def from_marshal(cls, path: str, data: Any) -> TypesIndex:
        header, names, classes = data
        return cls(path=path, header=header, names=names, classes=classes)


def build_types_index(path: Path, module_code: CodeType | None) -> TypesIndex | None:
    """Index a generated type module from its source (the shape) and its compiled code (each class body, as
    the interpreter cached it), or None when it is not of the shape this module reproduces."""
    if module_code is None or module_code.co_flags & __future__.annotations.compiler_flag:
        return None  # postponed annotations would hide the quoted sibling names inside longer strings
    data = path.read_bytes()
    match = _ALL.search(data)
    if match is None:
        return None
    names = tuple(n.decode("ascii") for n in _NAME.findall(match.group(1)))
    body = match.end()
    if len(set(names)) != len(names) or _OTHER_TOP_LEVEL.search(data, body) is not None:
        return None
    bodies: dict[str, list[CodeType]] = {}
    for const in module_code.co_consts:
        if isinstance(const, CodeType):
            bodies.setdefault(const.co_name, []).append(const)
    classes: dict[str, tuple[tuple[str, ...], str, tuple[str, ...], bytes]] = {}
    first = len(data)
    for found in _CLASS_LINE.finditer(data, body - 1):
        name = found.group(1).decode("ascii")
        codes = bodies.get(name, [])
        if len(codes) != 1 or name in classes:
            return None
        start = found.start() + 1
        decorators: list[str] = []
        while True:  # the decorator lines directly above belong to the class
            previous = data.rfind(b"\n", 0, start - 1) + 1
            if previous < body or not data.startswith(b"@", previous):
                break
            decorators.insert(0, data[previous + 1 : start - 1].decode("utf-8").strip())
            start = previous
        first = min(first, start)
        bases = (found.group(2) or b"").decode("utf-8")
        if "=" in bases or "*" in bases:
            return None  # keywords (a metaclass) or unpacking: not a plain list of bases
        classes[name] = (tuple(decorators), bases, (), marshal.dumps(codes[0]))
    if sorted(names) != sorted(classes) or data[body:first].strip():
        return None  # a class not exported, an export not a class, or a decorator without its class
    # The sibling classes each class names: in its body (its quoted forward references are string constants of its
    # code), its bases or its decorators (evaluated before the class exists, so those must be created first).
    for name, code in ((n, bodies[n][0]) for n in classes):
        decorators_, bases_, _, marshalled = classes[name]
        named = code_names(code) | set(_IDENTIFIER.findall(" ".join((bases_, *decorators_))))
        refs = tuple(sorted(n for n in named if n in classes and n != name))
        classes[name] = (decorators_, bases_, refs, marshalled)
    # dont_inherit: compiled as the interpreter compiles the file, not with this module's __future__ flags.
    header = compile(data[: match.start()], str(path), "exec", dont_inherit=True)
    return TypesIndex(path=str(path), header=header, names=names, classes=classes)


# Bump when the cached form of an index changes.
_CACHE_FORMAT = 3


def cached_types_index(path: Path, original: Any, fullname: str) -> TypesIndex | None:
    """build_types_index, as stored by an earlier process for the same file (filecache): reading the stored
    index back costs a few milliseconds where unmarshalling the module's whole compiled code and scanning its
    source cost 35 ms for sagemaker's inputs. The signature is the file's path, size and modification time and
    the interpreter's bytecode magic, as the interpreter's own .pyc check uses."""
    try:
        stat = path.stat()
    except OSError:
        return None
    signature = (_CACHE_FORMAT, str(path), stat.st_size, stat.st_mtime_ns, importlib.util.MAGIC_NUMBER)

    def derive() -> tuple[Any, ...] | None:
        index = build_types_index(path, original.get_code(fullname))
        return None if index is None else index.to_marshal()

    data = filecache.memo("sdk-types", f"{fullname}\0{path}", signature, derive)
    return None if data is None else TypesIndex.from_marshal(str(path), data)


# Indexes of the type modules loaded lazily, by module name (kept out of the modules' namespaces).
_INDEXES: dict[str, TypesIndex] = {}

# One lock for every class definition: a class must be created once, even when two threads (the program and an
# executor thread registering a resource) first read it together. Executing a class body imports nothing, so
# this lock is never held while waiting for another.
_DEFINING = threading.RLock()


# Decorator and bases expressions as compiled once (a generated module has a handful of distinct ones).
_EXPRESSIONS: dict[str, CodeType] = {}


def _evaluate(expression: str, namespace: dict[str, Any]) -> Any:
    code = _EXPRESSIONS.get(expression)
    if code is None:
        code = _EXPRESSIONS[expression] = compile(expression, "<generated class>", "eval", dont_inherit=True)
    return eval(code, namespace)


def _define(namespace: dict[str, Any], index: TypesIndex, name: str, visiting: set[str]) -> None:
    """Create a class as its ``class`` statement does (decorators evaluated, body run by __build_class__, then
    decorated bottom-up), after the sibling classes its body names."""
    if name in namespace or name in visiting:
        return
    visiting.add(name)
    for ref in sorted(index.refs(name)):
        _define(namespace, index, ref, visiting)
    decorators, bases, _, _ = index.classes[name]
    applied = [_evaluate(expression, namespace) for expression in decorators]
    base_values = _evaluate(f"({bases},)", namespace) if bases.strip() else ()
    cls = builtins.__build_class__(FunctionType(index.body(name), namespace, name), name, *base_values)
    for decorator in reversed(applied):
        cls = decorator(cls)
    namespace[name] = cls


class LazyTypes(ModuleType):
    """A generated type module whose classes are executed on first use."""

    def __getattr__(self, name: str) -> Any:
        fullname = ModuleType.__getattribute__(self, "__name__")
        index = _INDEXES[fullname]
        if name not in index.classes:
            raise AttributeError(f"module {fullname!r} has no attribute {name!r}")
        namespace = ModuleType.__getattribute__(self, "__dict__")
        with _DEFINING:
            _define(namespace, index, name, set())
        return namespace[name]

    @property
    def __all__(self) -> list[str]:
        """Every exported name; inside a star-import by a sibling module, the names that module refers to."""
        fullname = ModuleType.__getattribute__(self, "__name__")
        index = _INDEXES[fullname]
        importer = _IMPORTER.get()
        # Only the star-import statement of the module being executed itself: IMPORT_STAR reads __all__ from
        # that module's frame, and any other reader gets the whole list.
        if (
            importer is None
            or importer.package != fullname.rpartition(".")[0]
            or sys._getframe(1).f_globals is not importer.namespace
        ):
            return list(index.names)
        importer.partial.append(self)
        wanted = importer.names()
        return [n for n in index.names if n in wanted]

    def __dir__(self) -> list[str]:
        fullname = ModuleType.__getattribute__(self, "__name__")
        names = set(ModuleType.__getattribute__(self, "__dict__")) | set(_INDEXES[fullname].names)
        return sorted(names)


def load_types(module: ModuleType, original: Any) -> None:
    """Exec a generated type module lazily, or as written when it is not of the generated shape."""
    spec = module.__spec__
    assert spec is not None and spec.origin is not None
    index = cached_types_index(Path(spec.origin), original, spec.name)
    if index is None:
        original.exec_module(module)
        return
    namespace = module.__dict__
    exec(index.header, namespace)
    namespace["__all__"] = list(index.names)  # for vars(); attribute reads go through LazyTypes.__all__
    _INDEXES[spec.name] = index
    module.__class__ = LazyTypes


# ------------------------------------------------------------------------------------------------ importers


def code_names(code: CodeType) -> set[str]:
    """Every global name and string constant in a module's code and the code nested in it: what the module can
    refer to by name, including the quoted forward references of its annotations."""
    names: set[str] = set()
    stack: list[Any] = [code]
    while stack:
        item = stack.pop()
        if isinstance(item, CodeType):
            names.update(item.co_names)
            stack.extend(item.co_consts)
        elif isinstance(item, str):
            names.add(item)
        elif isinstance(item, (tuple, frozenset)):
            stack.extend(item)
    return names


@dataclass
class _Importer:
    package: str
    namespace: dict[str, Any]
    code: CodeType
    partial: list[ModuleType] = field(default_factory=list)
    _names: set[str] | None = None

    def names(self) -> set[str]:
        if self._names is None:
            self._names = code_names(self.code)
        return self._names


_IMPORTER: contextvars.ContextVar[_Importer | None] = contextvars.ContextVar("gpucloud_lazy_importer", default=None)


class _RestOfStar:
    """A resource module's ``__getattr__`` (PEP 562): the names its star-import of a type module left unbound,
    read from that module as the star-import would have bound them."""

    def __init__(self, namespace: dict[str, Any], sources: Iterable[ModuleType]) -> None:
        self.namespace = namespace
        self.sources = list(dict.fromkeys(sources))

    def __call__(self, name: str) -> Any:
        for source in reversed(self.sources):  # a later star-import shadows an earlier one
            if name in _INDEXES[source.__name__].classes:
                value = getattr(source, name)
                self.namespace.setdefault(name, value)
                return self.namespace[name]
        raise AttributeError(f"module {self.namespace.get('__name__')!r} has no attribute {name!r}")

    def dir(self) -> list[str]:
        names = set(self.namespace)
        for source in self.sources:
            names.update(_INDEXES[source.__name__].names)
        return sorted(names - {"__getattr__", "__dir__"})


def exec_importer(module: ModuleType, original: Any) -> None:
    """Exec a module of a leaf package whose star-imports of the package's type modules bind only the names its
    code refers to."""
    code = original.get_code(module.__name__)
    if code is None or "__getattr__" in code.co_names or "__dir__" in code.co_names:
        original.exec_module(module)  # a module with its own PEP 562 hooks: keep its star-imports whole
        return
    spec = module.__spec__
    importer = _Importer(package=(spec.parent if spec is not None else "") or "", namespace=module.__dict__, code=code)
    token = _IMPORTER.set(importer)
    try:
        exec(code, module.__dict__)
    finally:
        _IMPORTER.reset(token)
    if importer.partial:
        rest = _RestOfStar(module.__dict__, importer.partial)
        module.__dict__["__getattr__"] = rest
        module.__dict__["__dir__"] = rest.dir


def is_type_module(fullname: str) -> bool:
    return fullname.rpartition(".")[2] in TYPE_MODULES
