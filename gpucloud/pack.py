"""The policy pack outside the repository: the installed pack directory, and a standalone copy to publish.

The repository's pack (`policies/`, which is `gpucloud/policies`) says `virtualenv: ../.venv` in its
PulumiPolicy.yaml: the checkout's venv, one level up. Installed from the wheel the same directory is
`<venv>/lib/pythonX.Y/site-packages/gpucloud/policies`, where `../.venv` names nothing. The wheel's build
(setup.py) therefore rewrites two files of its copy, from the repository's (`installed_pack_files`):

- PulumiPolicy.yaml: `virtualenv: ../../../../..`, the venv the wheel is installed in (five levels up on the POSIX
  venv layout), so `pulumi preview --policy-pack "$(gpucloud pack path)"` runs the pack with the gpucloud that
  printed the path, activated or not. `gpucloud pack path` checks that this resolves to its own interpreter's
  venv and warns where it does not (an install outside a venv, the Windows layout).
- requirements.txt: `gpucloud==<version>` (the repository's says `-e ..`).

`pulumi policy publish` uploads a directory whose requirements the Pulumi CLI installs wherever the pack runs;
the installed directory is not that (it is a package inside site-packages), so `export_pack` writes a standalone
pack directory: PulumiPolicy.yaml with `virtualenv: venv` (inside the directory), a `__main__.py` that runs
gpucloud's pack, an `__init__.py` exposing `gpucloud_pack()` and requirements.txt pinning this gpucloud.

This module is stdlib-only: setup.py imports it at build time, where only setuptools is installed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gpucloud import __version__

# From <venv>/lib/pythonX.Y/site-packages/gpucloud/policies: policies -> gpucloud -> site-packages -> pythonX.Y
# -> lib -> <venv>.
INSTALLED_VIRTUALENV = "../../../../.."
EXPORTED_VIRTUALENV = "venv"
_VIRTUALENV_OPTION = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:#[^\n]*\n(?P=indent))*virtualenv:[^\n]*$")


class PackExportError(Exception):
    """The export directory cannot be written (not empty, not a directory)."""


def with_virtualenv(policy_yaml: str, virtualenv: str, why: str) -> str:
    """PulumiPolicy.yaml's text with its `runtime.options.virtualenv` (and the comment above it) replaced."""
    if not _VIRTUALENV_OPTION.search(policy_yaml):
        raise ValueError("PulumiPolicy.yaml has no runtime.options.virtualenv to replace")

    def repl(match: re.Match[str]) -> str:
        indent = match.group("indent")
        return f"{indent}# {why}\n{indent}virtualenv: {virtualenv}"

    return _VIRTUALENV_OPTION.sub(repl, policy_yaml, count=1)


def requirements(version: str = __version__) -> str:
    return (
        "# The pack's dependencies, as the Pulumi CLI installs them into the pack's virtualenv: gpucloud at the\n"
        "# version this pack was built from (it brings pulumi-policy and the Pulumi SDK pins).\n"
        f"gpucloud=={version}\n"
    )


def installed_pack_files(pack_dir: Path) -> dict[str, str]:
    """The wheel's PulumiPolicy.yaml and requirements.txt, derived from the repository's copies in `pack_dir`."""
    policy = with_virtualenv(
        (pack_dir / "PulumiPolicy.yaml").read_text(),
        INSTALLED_VIRTUALENV,
        "Installed from the wheel: the venv holding site-packages/gpucloud/policies (gpucloud/pack.py).",
    )
    return {"PulumiPolicy.yaml": policy, "requirements.txt": requirements()}


def exported_pack_files(pack_dir: Path) -> dict[str, str]:
    """A standalone pack directory for `pulumi policy publish` (and local use after installing its venv)."""
    policy = with_virtualenv(
        (pack_dir / "PulumiPolicy.yaml").read_text(),
        EXPORTED_VIRTUALENV,
        "The CLI installs requirements.txt (gpucloud, pinned) into venv/ inside this directory.",
    )
    main = (
        f'"""gpucloud-guardrails from gpucloud {__version__}: the policies live in gpucloud (requirements.txt)."""\n\n'
        "import runpy\n\n"
        'runpy.run_module("gpucloud.policies.__main__", run_name="__main__")\n'
    )
    init = (
        '"""gpucloud_pack(): this directory plugs into gpucloud as its pack (GPUCLOUD_POLICY_PACK=<dir>)."""\n\n'
        "from gpucloud.policies import gpucloud_pack\n\n"
        '__all__ = ["gpucloud_pack"]\n'
    )
    return {
        "PulumiPolicy.yaml": policy,
        "requirements.txt": requirements(),
        "__main__.py": main,
        "__init__.py": init,
    }


def export_pack(dest: Path, pack_dir: Path) -> list[Path]:
    """Write the standalone pack into `dest` (created; an existing one must be empty), each file atomically."""
    from gpucloud.fileio import write_atomic

    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        what = "is not a directory" if not dest.is_dir() else "is not empty"
        raise PackExportError(f"{dest} {what}: give a new or empty directory to export the pack into")
    return [write_atomic(dest / name, text, parents=True) for name, text in exported_pack_files(pack_dir).items()]


def virtualenv_mismatch(pack_dir: Path, prefix: str = sys.prefix) -> str | None:
    """Why the pack's virtualenv is not this interpreter's (so the CLI would run it elsewhere), or None."""
    text = (pack_dir / "PulumiPolicy.yaml").read_text()
    found = re.search(r"(?m)^[ \t]*virtualenv:[ \t]*(\S+)[ \t]*$", text)
    if found is None:
        return "PulumiPolicy.yaml names no virtualenv: the Pulumi CLI runs the pack with the python3 on PATH"
    venv = Path(found.group(1))
    resolved = (venv if venv.is_absolute() else pack_dir / venv).resolve()
    if resolved != Path(prefix).resolve():
        return (
            f"the pack's virtualenv ({found.group(1)}) is {resolved}, not this gpucloud's environment {prefix}; "
            "the Pulumi CLI would run the pack there (use `gpucloud pack export DIR` for a standalone pack)"
        )
    return None
