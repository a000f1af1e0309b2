"""A new AWS AMI release (the SSM `recommended`/`latest` parameters move) with an unchanged stack spec changes no
node group, launch template or Karpenter node class input: node pools roll only when the spec changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpucloud.plan import Plan
from gpucloud.plan.engine import run_program
from gpucloud.plan.offline import OfflineAnswers

ROOT = Path(__file__).resolve().parents[2]
NODE_TYPES = (
    "aws:eks/nodeGroup:NodeGroup",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:autoscaling/group:Group",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
)


def node_inputs(plan: Plan) -> dict[str, Any]:
    return {r.urn: r.inputs for r in plan.resources if r.type in NODE_TYPES}


def aws_released_a_new_ami(monkeypatch: pytest.MonkeyPatch) -> None:
    """The moving SSM parameters (`recommended`, `latest`) answer a new release, as after an AWS AMI release; the
    per-release parameters (`.../amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260714/image_id`) never change."""
    original = OfflineAnswers._ssm_parameter

    def newer(self: OfflineAnswers, args: dict[str, Any]) -> dict[str, Any]:
        answer = dict(original(self, args))
        if "/recommended/" in str(args.get("name")) or "/latest/" in str(args.get("name")):
            answer["value"] = f"{answer['value']}-newer"
            answer["insecureValue"] = answer["value"]
        return answer

    monkeypatch.setattr(OfflineAnswers, "_ssm_parameter", newer)


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_a_new_ami_release_changes_no_node_input(stack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = node_inputs(run_program(ROOT, stack))
    aws_released_a_new_ami(monkeypatch)
    after = node_inputs(run_program(ROOT, stack))
    assert len(before) >= 3
    assert after == before


def test_the_ssm_answer_change_is_seen_by_an_unpinned_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    # The stub above really changes what SSM answers (so the test above would catch a pool that still read it).
    answers = OfflineAnswers("us-east-1", {})
    param = {"name": "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/recommended/release_version"}
    first = answers._ssm_parameter(param)["value"]
    aws_released_a_new_ami(monkeypatch)
    assert answers._ssm_parameter(param)["value"] == f"{first}-newer"
