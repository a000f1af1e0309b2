"""The PR workflow parses and names only real inputs of the actions it uses."""

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
    assert set(wf["jobs"]) == {"plan", "preview"}
    assert wf["jobs"]["preview"]["if"] == "${{ vars.AWS_ROLE_ARN != '' }}"
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
    steps = _workflow()["jobs"]["preview"]["steps"]
    pulumi = next(s for s in steps if s.get("uses") == "pulumi/actions@v6")
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["policyPacks"] == "policies"
    assert pulumi["with"]["policyPackConfigs"] == "policies/configs/${{ matrix.stack }}.json"
