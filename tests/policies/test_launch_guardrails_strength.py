"""Exact values of GC-SEC-008 lt-imdsv2 (validate and remediate), written against the mutants
`scripts/mutation.py` left alive: inheritance from a program's launch template, unknown endpoint and token
settings (undecided, never a violation or a remediation), and the remediated metadata options.
"""

from __future__ import annotations

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, remediate, resource_messages
from gpucloud.policies.gpucloud_policies.base import UnknownValueError

INSTANCE = "aws:ec2/instance:Instance"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
FIX = "Fix: set metadata_options={'http_tokens': 'required', 'http_put_response_hop_limit': 1}."


def test_an_instance_inherits_from_the_programs_template():
    # The template is judged on its own; the instance that launches from it is not judged twice.
    assert resource_messages("lt-imdsv2", Res(INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}})) == []
    own = Res(INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}, "metadataOptions": {"httpTokens": "optional"}})
    assert resource_messages("lt-imdsv2", own) == [
        f"i: metadataOptions.httpTokens is optional: IMDSv1 lets any SSRF read the node role's credentials. {FIX}"
    ]
    assert remediate("lt-imdsv2", Res(INSTANCE, "i", {"launchTemplate": {"id": UNKNOWN}})) is None


def test_unset_tokens_message():
    assert resource_messages("lt-imdsv2", Res(LT, "lt", {"imageId": "ami-0a1b2c3d4e5f60789"})) == [
        "lt: metadataOptions.httpTokens is unset (defaults to optional): IMDSv1 lets any SSRF read the node "
        f"role's credentials. {FIX}"
    ]


@pytest.mark.parametrize("field", ["httpEndpoint", "httpTokens"])
def test_unknown_metadata_settings_are_undecided_and_not_remediated(field):
    lt = Res(LT, "lt", {"imageId": "ami-0a1b2c3d4e5f60789", "metadataOptions": {field: UNKNOWN}})
    with pytest.raises(UnknownValueError):
        resource_messages("lt-imdsv2", lt)
    assert remediate("lt-imdsv2", lt) is None


def test_remediation_keeps_other_options_and_replaces_a_non_mapping():
    kept = Res(LT, "lt", {"metadataOptions": {"httpTokens": "optional", "httpPutResponseHopLimit": 1}})
    assert remediate("lt-imdsv2", kept) == {
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1, "httpEndpoint": "enabled"}
    }
    assert remediate("lt-imdsv2", Res(LT, "lt", {"metadataOptions": None})) == {
        "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled"}
    }


def test_a_computed_ami_leaves_unset_tokens_undecided_on_the_ami():
    with pytest.raises(UnknownValueError) as caught:
        resource_messages("lt-imdsv2", Res(LT, "lt", {"imageId": UNKNOWN}))
    assert caught.value.props == ["imageId"]
    assert caught.value.message == (
        "metadataOptions.httpTokens is unset, so the AMI's default decides (required on AL2023 and other "
        "ImdsSupport v2.0 AMIs, optional otherwise), and imageId is computed at preview"
    )
