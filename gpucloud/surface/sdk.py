"""The installed provider SDKs' resource types and their input properties, read from the SDKs' generated source.

Every resource class of pulumi-aws and pulumi-kubernetes is a ``pulumi.CustomResource`` subclass whose
``__init__`` passes its type token to ``super().__init__``; its inputs are the ``@pulumi.input_type`` class
``<Class>Args`` (pulumi-kubernetes: ``<Class>InitArgs``) beside it, and each input property is a
``@pulumi.getter(name="camelName")`` whose annotation names the nested input types it holds
(``'_core.v1.PodSpecArgs'``).
The source is scanned as text, not imported: importing all 1,750 pulumi-aws modules takes minutes and gigabytes,
and the generated files are regular enough that the scan reads exactly what the import would define.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

PACKAGES = ("pulumi_aws", "pulumi_kubernetes")

_INPUT_CLASS = re.compile(r"^@pulumi\.input_type\nclass (\w+):\n", re.M)
_RESOURCE_CLASS = re.compile(r"^class (\w+)\(pulumi\.CustomResource\):\n", re.M)
_TOKEN = re.compile(r"super\((\w+), __self__\)\.__init__\(\s*'([^']+)'")
# Deprecated properties carry a `@_utilities.deprecated("""...""")` decorator between the getter and the def.
_GETTER = re.compile(r'@pulumi\.getter(?:\(name="(\w+)"\))?\n(?:.*\n){0,8}?\s+def (\w+)\(self\) -> (.+?):\n')
_NEXT_TOP = re.compile(r"^(?:@|class |def )", re.M)
_QUOTED = re.compile(r"'([\w.]+)'")
_NUMERIC = re.compile(r"\b(?:bool|int|float)\b")
_TEXTUAL = re.compile(r"\b(?:str|Any|object)\b")
_ALIAS = re.compile(r"^from (\.+)([\w.]*) import (\w+) as (\w+)$", re.M)


@dataclass(frozen=True)
class Prop:
    name: str  # the Pulumi (camelCase) name
    refs: tuple[tuple[str, str], ...]  # nested input types: (package directory, class name)
    # The annotation admits only booleans and numbers (``pulumi.Input[Optional[_builtins.int]]``): no text, so
    # never secret material, however the property is named (``masterPasswordWoVersion``, ``passwordLength``).
    numeric: bool = False


@dataclass
class InputClass:
    directory: str
    name: str
    props: list[Prop] = field(default_factory=list)


@dataclass(frozen=True)
class ResourceType:
    token: str
    package: str
    module: str  # the SDK module that defines it, e.g. pulumi_aws.ec2.instance
    args: tuple[str, str] | None  # (package directory, class name) of its input type


@dataclass
class Sdk:
    versions: dict[str, str]
    classes: dict[tuple[str, str], InputClass]
    resources: list[ResourceType]


def versions() -> dict[str, str]:
    out = {}
    for pkg in PACKAGES:
        dist = pkg.replace("_", "-")
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _root(package: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        name = path.name
        # Data sources (get_*), outputs and enums define no inputs of resources.
        if "__pycache__" in path.parts or name.startswith("get_") or name in ("outputs.py", "_enums.py"):
            continue
        yield path


def _aliases(text: str, directory: str) -> dict[str, str]:
    """`from ... import core as _core` -> {'_core': '<pkg dir>/core'} (directories relative to site-packages)."""
    out = {}
    parts = directory.split("/")
    for dots, mod, name, alias in _ALIAS.findall(text):
        base = parts[: len(parts) - (len(dots) - 1)]
        target = [*base, *[p for p in mod.split(".") if p], name]
        out[alias] = "/".join(target)
    return out


def _resolve(ref: str, directory: str, aliases: dict[str, str]) -> tuple[str, str] | None:
    if not ref.endswith("Args"):
        return None  # enums, resources, the TypedDict spelling (...ArgsDict) of the same type
    head, _, rest = ref.partition(".")
    if not rest:
        return directory, ref
    target = aliases.get(head)
    if target is None:
        return None
    *sub, cls = rest.split(".")
    return "/".join([target, *sub]), cls


def _blocks(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[re.Match[str], str]]:
    for m in pattern.finditer(text):
        end = m.end()
        nxt = _NEXT_TOP.search(text, end)
        yield m, text[end : nxt.start() if nxt is not None else len(text)]


def scan() -> Sdk:
    classes: dict[tuple[str, str], InputClass] = {}
    resources: list[ResourceType] = []
    for package in PACKAGES:
        root = _root(package)
        if root is None:
            continue
        site = root.parent
        for path in _files(root):
            text = path.read_text(encoding="utf-8")
            if "@pulumi.input_type" not in text and "pulumi.CustomResource)" not in text:
                continue
            directory = path.parent.relative_to(site).as_posix()
            aliases = _aliases(text, directory)
            for m, body in _blocks(text, _INPUT_CLASS):
                cls = InputClass(directory, m.group(1))
                for camel, snake, annotation in _GETTER.findall(body):
                    refs = tuple(r for r in (_resolve(q, directory, aliases) for q in _QUOTED.findall(annotation)) if r)
                    numeric = not refs and bool(_NUMERIC.search(annotation)) and not _TEXTUAL.search(annotation)
                    cls.props.append(Prop(camel or snake, refs, numeric))
                classes[(directory, cls.name)] = cls
            for m in _RESOURCE_CLASS.finditer(text):
                name = m.group(1)
                token = next((t for c, t in _TOKEN.findall(text) if c == name), None)
                if token is None:
                    continue
                module = path.relative_to(site).with_suffix("").as_posix().replace("/", ".")
                args = next(
                    ((directory, n) for n in (f"{name}Args", f"{name}InitArgs") if (directory, n) in classes), None
                )
                resources.append(ResourceType(token, package.replace("_", "-"), module, args))
    resources.sort(key=lambda r: r.token)
    return Sdk(versions(), classes, resources)
