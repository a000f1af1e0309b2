"""The PR workflow parses and names only real inputs of the actions it uses."""

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

# Inputs from each action's action.yml (the versions pinned below).
ALLOWED_INPUTS = {
    "actions/checkout@v4": {
        "repository",
        "ref",
        "token",
        "ssh-key",
        "path",
        "clean",
        "fetch-depth",
        "lfs",
        "submodules",
        "persist-credentials",
        "sparse-checkout",
        "fetch-tags",
    },
    "actions/setup-python@v5": {
        "python-version",
        "python-version-file",
        "cache",
        "architecture",
        "check-latest",
        "token",
        "cache-dependency-path",
        "update-environment",
        "allow-prereleases",
    },
    "github/codeql-action/upload-sarif@v3": {
        "sarif_file",
        "checkout_path",
        "ref",
        "sha",
        "token",
        "matrix",
        "category",
        "wait-for-processing",
    },
    "marocchino/sticky-pull-request-comment@v2": {
        "header",
        "append",
        "recreate",
        "delete",
        "hide",
        "hide_and_recreate",
        "hide_classify",
        "hide_details",
        "only_create",
        "only_update",
        "skip_unchanged",
        "message",
        "path",
        "number",
        "repo",
        "GITHUB_TOKEN",
        "ignore_empty",
        "follow_symbolic_links",
    },
    "actions/upload-artifact@v4": {
        "name",
        "path",
        "if-no-files-found",
        "retention-days",
        "compression-level",
        "overwrite",
        "include-hidden-files",
    },
    "aws-actions/configure-aws-credentials@v4": {
        "aws-region",
        "role-to-assume",
        "role-session-name",
        "role-duration-seconds",
        "audience",
        "aws-access-key-id",
        "aws-secret-access-key",
        "aws-session-token",
        "mask-aws-account-id",
        "web-identity-token-file",
        "role-chaining",
        "role-skip-session-tagging",
    },
    "pulumi/actions@v6": {
        "command",
        "stack-name",
        "work-dir",
        "comment-on-pr",
        "github-token",
        "cloud-url",
        "secrets-provider",
        "parallel",
        "message",
        "configMap",
        "expect-no-changes",
        "diff",
        "replace",
        "target",
        "target-dependents",
        "policyPacks",
        "policyPackConfigs",
        "refresh",
        "upsert",
        "edit-pr-comment",
        "color",
        "pulumi-version",
        "pulumi-version-file",
    },
}


def _workflow():
    return yaml.safe_load((ROOT / ".github" / "workflows" / "pr.yml").read_text())


def test_workflow_runs_on_pull_requests_with_two_jobs():
    wf = _workflow()
    # PyYAML reads the bare key `on` as True (YAML 1.1).
    assert "pull_request" in (wf.get("on") or wf.get(True))
    assert set(wf["jobs"]) == {"plan", "stacks", "preview"}
    assert wf["jobs"]["stacks"]["if"] == "${{ vars.AWS_ROLE_ARN != '' }}"
    assert wf["jobs"]["preview"]["if"] == "${{ vars.AWS_ROLE_ARN != '' && needs.stacks.outputs.matrix != '[]' }}"
    runs = "\n".join(s.get("run", "") for s in wf["jobs"]["plan"]["steps"])
    # Every stack the diff reaches, team stacks included, each with its own policy config, sharded over a matrix.
    assert "make test" in runs and "--changed" in runs and "--shard" in runs and "--format" in runs
    assert "--stack" not in runs and "--policy-config" not in runs
    assert wf["jobs"]["plan"]["strategy"]["matrix"]["shard"] == [1, 2]
    checkout = next(s for s in wf["jobs"]["plan"]["steps"] if s.get("uses") == "actions/checkout@v4")
    assert checkout["with"]["fetch-depth"] == 0


def test_every_action_is_pinned_and_uses_only_real_inputs():
    used = set()
    for job in _workflow()["jobs"].values():
        for step in job["steps"]:
            if "uses" not in step:
                continue
            uses = step["uses"]
            assert uses in ALLOWED_INPUTS, f"unpinned or unknown action {uses}"
            unknown = set(step.get("with") or {}) - ALLOWED_INPUTS[uses]
            assert not unknown, f"{uses}: not inputs of the action: {sorted(unknown)}"
            used.add(uses)
    assert {
        "github/codeql-action/upload-sarif@v3",
        "pulumi/actions@v6",
        "marocchino/sticky-pull-request-comment@v2",
    } <= used


def test_preview_job_runs_the_pack_with_the_stack_config():
    wf = _workflow()
    steps = wf["jobs"]["preview"]["steps"]
    pulumi = next(s for s in steps if s.get("uses") == "pulumi/actions@v6")
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["policyPacks"] == "${{ github.workspace }}/policies"
    assert pulumi["with"]["policyPackConfigs"] == (
        "${{ matrix.policy_config && format('{0}/{1}', github.workspace, matrix.policy_config) || '' }}"
    )
    assert pulumi["with"]["work-dir"] == "${{ matrix.program }}"
    assert (
        pulumi["with"]["stack-name"]
        == "${{ vars.PULUMI_ORG || 'organization' }}/${{ matrix.project }}/${{ matrix.stack }}"
    )


def test_preview_matrix_is_every_changed_stack_team_stacks_included():
    """Not a fixed dev/staging/prod list: the `stacks` job's --changed selection, whose fields the preview reads."""
    wf = _workflow()
    assert wf["jobs"]["preview"]["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.stacks.outputs.matrix) }}"}
    assert wf["jobs"]["preview"]["needs"] == ["plan", "stacks"]
    select = next(s for s in wf["jobs"]["stacks"]["steps"] if s.get("id") == "select")["run"]
    assert '--changed "origin/${{ github.base_ref }}" --format json' in select
    fields = select.split("[.stacks[] | {", 1)[1].split("}", 1)[0].replace(" ", "").split(",")
    # Every field the preview job reads from the matrix is one the selection emits ...
    preview_text = yaml.safe_dump(wf["jobs"]["preview"])
    read = set(re.findall(r"matrix\.([a-z_]+)", preview_text))
    assert read <= set(fields), read - set(fields)
    # ... and one `gpucloud stacks --format json` really prints for the shipped repository.
    out = subprocess.run(
        [sys.executable, "-m", "gpucloud", "stacks", "--root", str(ROOT), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    stacks = json.loads(out)["stacks"]
    assert all(set(fields) <= set(s) for s in stacks)
    by_id = {s["id"]: (s["program"], s["policy_config"]) for s in stacks}
    assert by_id["gpucloud-team-vision/dev"] == ("stacks/teams/vision", "policies/configs/dev.json")
    assert by_id["gpucloud/prod"] == (".", "policies/configs/prod.json")
