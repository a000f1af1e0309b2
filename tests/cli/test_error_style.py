"""Every bad input the first-hour report named gets the house format: the file, the field path, what is allowed,
the fix; one problem per line; never a traceback, a pydantic dump or a Python warning line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pydantic import BaseModel, Field

from gpucloud.cli import main
from gpucloud.cost import price_plan
from gpucloud.plan import run_callable
from gpucloud.plan.engine import PlanInputError, Project
from gpucloud.spec.errors import SpecError
from gpucloud.spec.team import parse_team

ROOT = Path(__file__).resolve().parents[2]
VISION = yaml.safe_load((ROOT / "stacks" / "teams" / "vision" / "Pulumi.dev.yaml").read_text())["config"]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def project(tmp_path: Path, pulumi_yaml: str, stack_yaml: str = "config: {}\n") -> Path:
    (tmp_path / "Pulumi.yaml").write_text(pulumi_yaml)
    (tmp_path / "Pulumi.dev.yaml").write_text(stack_yaml)
    (tmp_path / "__main__.py").write_text("")
    return tmp_path


def test_duplicate_key_in_a_stack_file_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # PyYAML alone keeps the last value silently; the Pulumi CLI rejects the file.
    program = project(
        tmp_path, "name: p\nruntime: python\n", "config:\n  aws:region: us-west-2\n  aws:region: us-east-1\n"
    )
    code, out, err = run_cli(capsys, "plan", "--program", str(program), "--no-policy-config")
    assert (code, out) == (2, "")
    assert err == (
        f"gpucloud: error: {program / 'Pulumi.dev.yaml'}:3: not valid YAML: duplicate key 'aws:region' "
        "(first on line 2); keep one of them\n"
    )


def test_duplicate_key_nested_and_in_the_project_file(tmp_path: Path) -> None:
    nested = "config:\n  gpucloud:platform:\n    name: a\n    tags: {x: 1}\n    name: b\n"
    program = project(tmp_path, "name: p\nruntime: python\nname: q\n", nested)
    with pytest.raises(PlanInputError) as err:
        Project(program)
    assert str(err.value) == (
        f"{program / 'Pulumi.yaml'}:3: not valid YAML: duplicate key 'name' (first on line 1); keep one of them"
    )
    (program / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    with pytest.raises(
        PlanInputError, match=r"Pulumi.dev.yaml:5: not valid YAML: duplicate key 'name' \(first on line 3\)"
    ):
        Project(program).config("dev")


def test_same_key_in_different_mappings_is_fine(tmp_path: Path) -> None:
    program = project(tmp_path, "name: p\nruntime: python\n", "config:\n  a: {name: 1}\n  b: {name: 2}\n")
    assert Project(program).config("dev") == {"p:a": {"name": 1}, "p:b": {"name": 2}}


def test_project_without_runtime(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = project(tmp_path, "name: p\n")
    code, _, err = run_cli(capsys, "plan", "--program", str(program))
    assert code == 2
    assert err == (
        f"gpucloud: error: {program / 'Pulumi.yaml'}: runtime: missing (the Pulumi CLI requires it); allowed: "
        "python. Fix: add `runtime: python` (or `runtime: {name: python, options: {toolchain: pip, virtualenv: "
        "venv}}`)\n"
    )


def test_project_with_another_runtime(tmp_path: Path) -> None:
    program = project(tmp_path, "name: p\nruntime:\n  name: nodejs\n")
    with pytest.raises(PlanInputError) as err:
        Project(program)
    assert str(err.value) == (
        f"{program / 'Pulumi.yaml'}: runtime.name: 'nodejs' is not supported; allowed: python (gpucloud plan runs "
        "Python programs only). Fix: plan a Python project, or preview this one with the Pulumi CLI"
    )


def test_pricing_errors_one_per_line_naming_the_stack_file() -> None:
    plan = SimpleNamespace(
        config={"gpucloud:pricing": {"extra": 1, "commitments": [{"match": "p5", "kind": "bogus", "term": "2y"}]}},
        stack="dev",
        stack_file="stacks/Pulumi.dev.yaml",
    )
    with pytest.raises(PlanInputError) as err:
        price_plan(plan)
    assert str(err.value) == (
        "stacks/Pulumi.dev.yaml: invalid gpucloud:pricing: 3 problems\n"
        "  - gpucloud:pricing: unknown keys ['extra']; allowed: commitments, rootVolumes, asOf\n"
        "  - gpucloud:pricing.commitments[0].kind: 'bogus' is not one of ['ri', 'savings-plan', "
        "'compute-savings-plan']\n"
        "  - gpucloud:pricing.commitments[0].term: '2y' is not one of ['1y', '3y']"
    )


def test_corrupt_price_cache_is_one_warning_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpucloud.prices import get_price_book

    cache = tmp_path / "prices.json"
    cache.write_text("{not json")
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(cache))
    get_price_book.cache_clear()
    # The price book (above the catalog leaf) is what reads the cache.
    code, out, err = run_cli(capsys, "prices", "show", "--region", "us-east-1", "--types", "g5.xlarge")
    get_price_book.cache_clear()
    assert code == 0 and out
    assert err == (
        f"gpucloud: warning: ignoring price cache {cache}: not readable JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1)); the shipped catalog prices are used. Fix: run `gpucloud prices "
        "refresh` to rewrite it, or delete it\n"
    )
    assert "UserWarning" not in err


def team_error(**changes: object) -> str:
    team = copy.deepcopy(VISION["gpucloud:team"])
    for path, value in changes.items():
        section, key = path.split("__")
        team[section][key] = value
    with pytest.raises(SpecError) as err:
        parse_team(team, "stack 'dev'")
    return str(err.value)


def test_team_instance_type_typo_names_the_field_with_suggestions() -> None:
    assert team_error(inference__instanceType="g6e.xlarg") == (
        "invalid stack 'dev': 1 problem\n  - gpucloud:team.inference.instanceType: unknown instance type "
        "'g6e.xlarg' (did you mean 'g6e.xlarge', 'g6e.8xlarge' or 'g6e.4xlarge'?); give the platform pool's "
        "instance type"
    )
    assert team_error(training__instanceType="g6.12xlarg").startswith(
        "invalid stack 'dev': 1 problem\n  - gpucloud:team.training.instanceType: unknown instance type 'g6.12xlarg' "
        "(did you mean 'g6.12xlarge'"
    )
    assert team_error(inference__instanceType="m5.large") == (
        "invalid stack 'dev': 1 problem\n  - gpucloud:team.inference.instanceType: 'm5.large' is not a GPU type in "
        "the gpucloud catalog; give the pool's type"
    )


def test_team_stack_spec_errors_name_the_stack_file() -> None:
    team = copy.deepcopy(VISION["gpucloud:team"])
    team["inference"]["instanceType"] = "g6e.xlarg"
    with pytest.raises(PlanInputError) as err:
        from gpucloud.plan import run_program

        run_program(ROOT / "stacks" / "teams" / "vision", "dev", config_overrides={"gpucloud:team": team})
    first = str(err.value).splitlines()[0]
    assert first.startswith("invalid stack 'dev' (") and first.endswith(
        "stacks/teams/vision/Pulumi.dev.yaml): 1 problem"
    )
    assert "__main__.py" not in str(err.value)


class WorkloadConfig(BaseModel):
    replicas: int = Field(ge=1)
    image: str


def test_a_component_validation_error_is_one_line_per_field() -> None:
    def program() -> None:
        WorkloadConfig(replicas=0, image=None)  # type: ignore[arg-type]

    with pytest.raises(PlanInputError) as err:
        run_callable(program)
    message = str(err.value)
    assert message.startswith("program error in ")
    assert message.endswith(
        ": invalid WorkloadConfig: 2 problems\n"
        "  - replicas: Input should be greater than or equal to 1\n"
        "  - image: Input should be a valid string"
    )
    assert "errors.pydantic.dev" not in message and "input_value" not in message


def base_plan(tmp_path: Path, **changes: object) -> Path:
    from gpucloud.report import SCHEMA

    base = {
        "schema": SCHEMA,
        "project": "gpucloud",
        "stack": "dev",
        "resources": [],
        "cost": {
            "currency": "USD",
            "hours_per_month": 730,
            "monthly": 1.0,
            "monthly_ceiling": 2.0,
            "items": [],
            "unpriced": [],
        },
        "policies": {"pack": "gpucloud-guardrails", "violations": [], "not_evaluated": [], "mandatory_violations": 0},
    }
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            base[section][field] = value  # type: ignore[index]
        else:
            base[section] = value
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    return path


@pytest.mark.parametrize(
    ("changes", "where", "problem"),
    [
        ({"cost__monthly": "12k"}, "cost.monthly", "'12k' is not of type 'number'"),
        ({"resources": [{"urn": "x"}]}, "resources[0]", "'type' is a required property"),
        ({"resources": "none"}, "resources", "'none' is not of type 'array'"),
    ],
)
def test_compare_base_is_checked_against_the_plan_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, changes: dict, where: str, problem: str
) -> None:
    base = base_plan(tmp_path, **changes)
    code, out, err = run_cli(
        capsys, "plan", "--program", str(ROOT / "tests/fixtures/raw_program"), "--stack", "test", "--compare", str(base)
    )
    assert (code, out) == (2, "")
    assert err == (
        f"gpucloud: error: --compare file {base}: {where}: {problem}; the base must follow "
        "gpucloud/report/plan.schema.json (write it with gpucloud plan --format json)\n"
    )


def test_preflight_spec_errors_name_the_stack_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = project(tmp_path, "name: p\nruntime: python\n", "config:\n  gpucloud:platform:\n    region: moon-1\n")
    code, _, err = run_cli(capsys, "preflight", "--stack", "dev", "--program", str(program))
    assert code == 2
    assert err.startswith(f"gpucloud: error: invalid stack 'dev' ({program / 'Pulumi.dev.yaml'}): ")
    (program / "Pulumi.dev.yaml").write_text("config: {}\n")
    code, _, err = run_cli(capsys, "preflight", "--stack", "dev", "--program", str(program))
    stack_file = program / "Pulumi.dev.yaml"
    assert (code, err) == (
        2,
        f"gpucloud: error: stack 'dev' has no gpucloud:platform object in its stack file {stack_file}\n",
    )
