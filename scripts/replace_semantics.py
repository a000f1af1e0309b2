"""Build and check gpucloud/impact/replace_semantics.json from the providers' sources.

    python scripts/replace_semantics.py --check SOURCES     # compare the table with the sources; exit 1 on a difference
    python scripts/replace_semantics.py --write SOURCES     # rewrite each entry's force_new from the sources

SOURCES is a directory holding fetched checkouts as <owner>/<repo>/ (e.g. SOURCES/hashicorp/terraform-provider-aws
at the tag pulumi-aws bridges, SOURCES/pulumi/pulumi-kubernetes at the pinned tag). Each table entry names the file
its semantics come from (source.repo + source.path):

- terraform-provider-aws: the resource's `Schema: map[string]*schema.Schema{...}` (inline, in a `SchemaFunc`, or in
  the package-level variable or function the resource names, e.g. SQS `Schema: queueSchema`); every attribute with
  `ForceNew: true`, nested blocks included (`launch_template.id`), is a force-new path. Resources written on the
  Plugin Framework (`Attributes: map[string]schema.Attribute{...}`, and the older `tfsdk.Schema`) mark it with a
  `RequiresReplace()` / `RequiresReplaceIfConfigured()` plan modifier instead; those are read the same way
  (`RequiresReplaceIf(...)` is conditional and left to the entry's conditional_force_new). TF names become Pulumi
  input names the way the bridge names them: snake_case to camelCase; `names.AttrX` constants are read from
  the checkout's names package (names/attr_consts*.go at the repository root, Go import path
  github.com/hashicorp/terraform-provider-aws/names), else split from the constant's CamelCase; an entry's
  `renames` (the bridge's plural names for list blocks, e.g. initialLifecycleHook -> initialLifecycleHooks)
  are applied last.
- pulumi-kubernetes: provider/pkg/provider/diff.go's `forceNew` table for the kind, plus the metadata name and
  namespace every kind replaces on.

--write also records the checkout's commit (git rev-parse HEAD) in each entry it rewrites, and --tag the version.
No network: fetch the checkouts first. The table's `pinned` block says which versions are not yet established.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "gpucloud" / "impact" / "replace_semantics.json"

_KEY = re.compile(r'^\s*(?:"(\w+)"|names\.Attr(\w+))\s*:\s*(\{|tftags\.|sdkv2\.|\w)')
_MAP = "map[string]*schema.Schema{"
# The resource's own `Schema:` / `SchemaFunc:` field (two tabs in, inside `return &schema.Resource{`): a map literal,
# a `func() map[...] { return map[...]{`, or the name of a package-level variable or function that holds the map
# (SQS queueSchema, SNS topicSchema). A nested block's `Schema:` is deeper and never matches.
_RESOURCE_SCHEMA = re.compile(r"^\t\t(?:Schema|SchemaFunc):\s*(.*)$", re.M)
# Anywhere: the first schema map (files whose resource is not laid out as above).
_SCHEMA_START = re.compile(
    r"(?:Schema:\s*|SchemaFunc:\s*func\(\)\s*map\[string\]\*schema\.Schema\s*\{\s*return\s+)"
    r"map\[string\]\*schema\.Schema\{"
)


def _schema_start(go: str) -> int | None:
    """The offset just past the opening brace of the resource's schema map, None for a file without one."""
    # From the resource's constructor when the file has one: a helper returning a nested block's
    # `&schema.Resource{Schema: ...}` before it would otherwise be taken for the resource.
    ctor = re.search(r"^func [Rr]esource\w*\(\) \*schema\.Resource \{", go, re.M)
    field = _RESOURCE_SCHEMA.search(go, ctor.end() if ctor else 0)
    if field is not None:
        value = field.group(1).strip()
        if value.startswith(_MAP):
            return field.start(1) + len(_MAP)
        if value.startswith("func()"):
            i = go.find(_MAP, field.start(1))
            return i + len(_MAP) if i >= 0 else None
        ident = re.fullmatch(r"(\w+)(?:\(\))?,?", value)
        if ident is not None:
            # `var x = map...{`, `x = map...{` inside `var (...)`, `func x() map... { return map...{`, or a wrapper
            # around one (`x = sync.OnceValue(func() ... { return map...{`): the first map literal after it.
            name = re.escape(ident.group(1))
            define = re.search(rf"^(?:var\s+|\t)?{name}\s*=|^func {name}\(\)", go, re.M)
            if define is not None:
                i = go.find(_MAP, define.end())
                return i + len(_MAP) if i >= 0 else None
            return None
    m = _SCHEMA_START.search(go)
    return m.end() if m else None


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _split_camel(name: str) -> str:
    name = re.sub(r"(?<=[A-Z])(IDs?|ARNs?)$", r"_\1", name)  # VPCID -> VPC_ID, not one word
    word = r"[A-Z]+s(?=[A-Z]|$)|[A-Z]+(?=[A-Z][a-z]|$)|[A-Z][a-z0-9]*"
    return "_".join(p.lower() for chunk in name.split("_") for p in re.findall(word, chunk))


def attr_names(checkout: Path | None) -> dict[str, str]:
    """names.AttrX -> its TF attribute name, from the checkout's names package when it has one."""
    if checkout is None:
        return {}
    found: dict[str, str] = {}
    for path in (checkout / "names").glob("attr_consts*.go"):
        for const, value in re.findall(r'\bAttr(\w+)\s*=\s*"(\w+)"', path.read_text()):
            found[const] = value
    return found


def _schema_lines(go: str) -> list[str]:
    """The lines of the resource's schema map (through its closing brace)."""
    start = _schema_start(go)
    if start is None:
        raise ValueError("no `Schema: map[string]*schema.Schema{` (or schema variable) in the file")
    depth, out, i = 1, [], start
    line = ""
    while i < len(go) and depth:
        ch = go[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "\n":
            out.append(line)
            line = ""
        else:
            line += ch
        i += 1
    out.append(line)
    return out


def _tf_scan(go: str, names: dict[str, str] | None) -> tuple[set[str], set[str]]:
    """(attribute paths, block paths) of the resource schema's `ForceNew: true` entries.

    A block is an attribute whose Elem is a `&schema.Resource{...}` (a list or set of nested blocks). Its ForceNew
    applies to the number of blocks only: terraform-plugin-sdk's diffList/diffSet give the count (`x.#`) the
    block's ForceNew and diff each nested attribute with its own schema, so a change inside an existing block is
    replaced only by the nested attribute's ForceNew. A list of primitives copies ForceNew to its elements."""
    names = names or {}
    stack: list[list[object]] = []  # [attribute name, brace depth inside it, ForceNew seen, is a block]
    depth = 0
    attrs: set[str] = set()
    blocks: set[str] = set()

    def pop() -> None:
        frame = stack[-1]
        if frame[2]:
            path = ".".join(camel(str(f[0])) for f in stack)
            (blocks if frame[3] else attrs).add(path)
        stack.pop()

    for line in _schema_lines(go):
        key = _KEY.match(line)
        if key:
            tf = key.group(1) or names.get(key.group(2) or "") or _split_camel(key.group(2) or "")
            while stack and int(str(stack[-1][1])) >= depth + 1:
                pop()
            if key.group(3) == "{":
                stack.append([tf, depth + 1, False, False])
        if stack and re.search(r"\bForceNew:\s*true\b", line):
            stack[-1][2] = True
        if stack and depth == stack[-1][1] and re.search(r"\bElem:\s*&schema\.Resource\{", line):
            stack[-1][3] = True
        depth += line.count("{") - line.count("}")
        while stack and depth < int(str(stack[-1][1])):
            pop()
    while stack:
        pop()
    return attrs, blocks


def tf_force_new(go: str, names: dict[str, str] | None = None) -> list[str]:
    """The Pulumi input paths of every `ForceNew: true` attribute of the file's resource schema (nested blocks'
    attributes included), except blocks' own ForceNew: those are tf_force_new_blocks."""
    return sorted(_tf_scan(go, names)[0])


def tf_force_new_blocks(go: str, names: dict[str, str] | None = None) -> list[str]:
    """The blocks with `ForceNew: true` of the file's resource schema: replaced when a block is added or removed,
    which the table records as a conditional replace (conditional_force_new), not as a force-new path."""
    return sorted(_tf_scan(go, names)[1])


# `Attributes: map[string]schema.Attribute{` (Plugin Framework) or the older `Attributes: map[string]tfsdk.Attribute{`.
_FW_START = re.compile(r"Attributes:\s*map\[string\](?:schema|tfsdk)\.Attribute\{")
_FW_KEY = re.compile(r'^\s*(?:"(\w+)"|names\.Attr(\w+))\s*:\s*(?:schema\.\w+|\w+\.\w+)?\s*\{')
_FW_REPLACE = re.compile(r"\bRequiresReplace(?:IfConfigured)?\(\)")


def tf_requires_replace(go: str, names: dict[str, str] | None = None) -> list[str]:
    """The Pulumi input paths of a Plugin Framework resource's attributes (and nested blocks' attributes) that
    carry an unconditional RequiresReplace plan modifier."""
    names = names or {}
    m = _FW_START.search(go)
    if m is None:
        raise ValueError("no `Attributes: map[string]schema.Attribute{` in the file")
    # The schema ends where the Schema method's body does: the first `func` after the attributes start.
    end = go.find("\nfunc ", m.start())
    body = go[m.start() : end if end > 0 else len(go)]
    stack: list[tuple[str, int]] = []
    depth = 0
    found: set[str] = set()
    for line in body.splitlines():
        key = _FW_KEY.match(line)
        if key:
            while stack and stack[-1][1] >= depth + 1:
                stack.pop()
            tf = key.group(1) or names.get(key.group(2) or "") or _split_camel(key.group(2) or "")
            stack.append((tf, depth + 1))
        if _FW_REPLACE.search(line) and stack:
            found.add(".".join(camel(n) for n, _ in stack))
        depth += line.count("{") - line.count("}")
        while stack and depth < stack[-1][1]:
            stack.pop()
    return sorted(found)


def rename(paths: list[str], renames: dict[str, str]) -> list[str]:
    """Apply an entry's TF-to-Pulumi renames to each path segment (plural names of list blocks)."""
    return sorted({".".join(renames.get(seg, seg) for seg in p.split(".")) for p in paths})


def _helpers(go: str) -> dict[str, list[str]]:
    """`func name(prefix string) properties { return properties{ prefix + ".x", ... } }` -> suffixes."""
    out: dict[str, list[str]] = {}
    for name, body in re.findall(r"func (\w+)\(\w+ (?:\.\.\.)?string\) properties \{(.*?)\n\}", go, re.S):
        out[name] = re.findall(r'\+ "([^"]+)"', body)
    return out


def _expand(expr: str, helpers: dict[str, list[str]], variables: dict[str, list[str]]) -> list[str]:
    calls = r'(\w+)\(((?:\s*"[^"]*",?)+)\s*\)'  # helper("prefix", ...): expanded below, not literals
    props = re.findall(r'(?<![+\w])"(\.[^"]+)"', re.sub(calls, "", expr))
    for helper, args in re.findall(calls, expr):
        for arg in re.findall(r'"([^"]+)"', args):
            props += [arg + s for s in helpers.get(helper, [])]
    for var in re.findall(r"^\s*(\w+)\s*$", expr):
        props += variables.get(var, [])
    return props


def k8s_force_new(go: str, kind: str, group: str, version: str) -> list[str]:
    """pulumi-kubernetes' force-new paths for one kind (group "" or "core" for the core API), metadata included."""
    helpers = _helpers(go)
    variables: dict[str, list[str]] = {}
    for name, expr in re.findall(r"^var (\w+) = (append\(.*?\n\)|properties\{.*?\n\})", go, re.S | re.M):
        variables[name] = _expand(expr, helpers, variables)
    block = _group_block(go, "core" if group in ("", "core") else group)
    props = [".metadata" + s for s in helpers.get("metadataForceNewProperties", [])]
    if block is not None:
        version_block = _braced_after(block, f'"{version}"')
        if version_block is not None:
            entry = _kind_entry(version_block, kind)
            if entry is not None:
                props += _expand(entry, helpers, variables)
    return sorted({p.lstrip(".") for p in props})


def _braced_after(text: str, marker: str) -> str | None:
    i = text.find(marker)
    if i < 0:
        return None
    j = text.find("{", i)
    depth, k = 0, j
    while k < len(text):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return text[j + 1 : k]
        k += 1
    return None


def _group_block(go: str, group: str) -> str | None:
    if group == "core":
        m = re.search(r"^var core = _versions\{", go, re.M)
        return _braced_after(go[m.start() :], "_versions") if m else None
    return _braced_after(go, f'"{group}": _versions')


def _kind_entry(block: str, kind: str) -> str | None:
    m = re.search(rf'"{kind}":\s*', block)
    if m is None:
        return None
    rest = block[m.end() :]
    depth, k = 0, 0
    while k < len(rest):
        ch = rest[k]
        if ch in "({":
            depth += 1
        elif ch in ")}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        k += 1
    return rest[:k].strip()


def derive(type_: str, entry: dict[str, object], sources: Path) -> list[str] | None:
    """The force-new paths of one table entry re-derived from SOURCES, None when its file is not there."""
    src = entry["source"]
    assert isinstance(src, dict)
    checkout = sources / str(src["repo"])
    path = checkout / str(src["path"])
    if not path.is_file():
        return None
    go = path.read_text()
    if src["repo"] == "pulumi/pulumi-kubernetes":
        gv, kind = type_.split(":")[1], type_.split(":")[2]
        group, _, version = gv.rpartition("/")
        return k8s_force_new(go, kind, group, version)
    names = attr_names(checkout)
    derived = tf_force_new(go, names) if _schema_start(go) is not None else tf_requires_replace(go, names)
    renames = entry.get("renames") or {}
    assert isinstance(renames, dict)
    return rename(derived, renames)


def derive_blocks(type_: str, entry: dict[str, object], sources: Path) -> list[str]:
    """The entry's SDKv2 blocks with a block-level ForceNew (replaced when one is added or removed), from SOURCES;
    each must be quoted in the entry's conditional_force_new."""
    src = entry["source"]
    assert isinstance(src, dict)
    path = sources / str(src["repo"]) / str(src["path"])
    if src["repo"] == "pulumi/pulumi-kubernetes" or not path.is_file():
        return []
    go = path.read_text()
    if _schema_start(go) is None:
        return []
    renames = entry.get("renames") or {}
    assert isinstance(renames, dict)
    return rename(tf_force_new_blocks(go, attr_names(sources / str(src["repo"]))), renames)


def _entries(table: dict[str, object]) -> Iterator[tuple[str, dict[str, object]]]:
    types = table["types"]
    assert isinstance(types, dict)
    yield from types.items()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="SOURCES")
    mode.add_argument("--write", metavar="SOURCES")
    ap.add_argument("--tag", help="with --write: the version the checkouts are at, recorded in each entry")
    args = ap.parse_args(argv)
    sources = Path(args.check or args.write)
    table = json.loads(TABLE.read_text())
    problems = 0
    for type_, entry in _entries(table):
        derived = derive(type_, entry, sources)
        if derived is None:
            print(f"{type_}: not checked ({entry['source']['path']} is not under {sources})")  # type: ignore[index]
            problems += 1
            continue
        conditional = entry.get("conditional_force_new") or {}
        assert isinstance(conditional, dict)
        unquoted = [b for b in derive_blocks(type_, entry, sources) if b not in conditional]
        if unquoted:
            # Words are needed here, so --write does not fill them in.
            print(f"{type_}: blocks replaced when added or removed, not in conditional_force_new: {unquoted}")
            problems += 1
        if derived != entry["force_new"]:
            print(f"{type_}: table {entry['force_new']} != source {derived}")
            problems += 1
            if args.write:
                entry["force_new"] = derived
                src = entry["source"]
                assert isinstance(src, dict)
                checkout = sources / str(src["repo"])
                head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
                if head.returncode == 0:
                    src["commit"] = head.stdout.strip()
                if args.tag:
                    src["version"] = args.tag
    if args.write:
        sys.path.insert(0, str(ROOT))
        from gpucloud.fileio import write_atomic

        write_atomic(TABLE, json.dumps(table, indent=1) + "\n")
        return 0
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
