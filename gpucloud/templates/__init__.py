"""Project templates: `gpucloud new team NAME` writes a team stack project from `templates/team/`.

A template file is `<path>.tmpl` with `@NAME@`, `@ENVIRONMENT@` and `@VERSION@` placeholders (not `{{ }}`: the CI
workflow is full of GitHub's own `${{ }}`). Names that start with a dot are stored without it (`gitignore`,
`github/`) so that no tool hides them from the package data, and `Pulumi.stack.yaml` becomes
`Pulumi.<environment>.yaml`. Every file is written atomically; an existing non-empty directory is refused.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from gpucloud import __version__, package_data

ENVIRONMENTS = ("dev", "staging", "prod")
_DOTTED = {"gitignore": ".gitignore", "github": ".github"}
# The team spec's Name: a lowercase DNS label of at most 40 characters (gpucloud/spec/common.py).
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME = 40


class TemplateError(Exception):
    """A template cannot be written as asked: a bad name, or a target directory that holds files already."""


def check_team_name(name: str) -> None:
    if len(name) > MAX_NAME or not _DNS_LABEL.match(name):
        raise TemplateError(
            f"team name {name!r} is not a lowercase DNS label of at most {MAX_NAME} characters "
            "(a-z, 0-9 and '-', starting and ending with a letter or digit), e.g. vision"
        )


def _target(relative: PurePosixPath, environment: str) -> PurePosixPath:
    parts = [_DOTTED.get(p, p) for p in relative.with_name(relative.name.removesuffix(".tmpl")).parts]
    if parts[-1] == "Pulumi.stack.yaml":
        parts[-1] = f"Pulumi.{environment}.yaml"
    return PurePosixPath(*parts)


def render(template: str, *, name: str, environment: str, version: str = __version__) -> dict[str, str]:
    """Relative path -> text of every file of `templates/<template>/`, placeholders filled in."""
    root = package_data.TEMPLATES / template
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*.tmpl")):
        text = path.read_text()
        for key, value in (("@NAME@", name), ("@ENVIRONMENT@", environment), ("@VERSION@", version)):
            text = text.replace(key, value)
        out[str(_target(PurePosixPath(path.relative_to(root).as_posix()), environment))] = text
    return out


def write_team(dest: Path, name: str, environment: str = "dev") -> list[Path]:
    """Write a team stack project for team `name` on the `environment` platform into `dest`."""
    from gpucloud.fileio import write_atomic

    check_team_name(name)
    if environment not in ENVIRONMENTS:
        raise TemplateError(f"environment {environment!r} is not one of {', '.join(ENVIRONMENTS)}")
    if dest.exists() and not dest.is_dir():
        raise TemplateError(f"{dest} exists and is not a directory: choose another with --dir")
    if dest.is_dir() and any(dest.iterdir()):
        raise TemplateError(f"{dest} is not empty: choose a new or empty directory with --dir (nothing was written)")
    files = render("team", name=name, environment=environment)
    return [write_atomic(dest / relative, text, parents=True) for relative, text in files.items()]
