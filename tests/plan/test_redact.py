"""Secret values masked in messages as the Pulumi CLI filters its diagnostics (sdk/go/common/util/logging
CreateFilter): short secrets and booleans are left alone, a secret's JSON-escaped form is masked too."""

from __future__ import annotations

from gpucloud.plan.model import SECRET, redact


def test_a_secret_is_masked_longest_first() -> None:
    assert redact("token abc123 and abc", {"abc", "abc123"}) == f"token {SECRET} and {SECRET}"


def test_secrets_shorter_than_three_characters_are_left_alone() -> None:
    # An SSM parameter whose value is "x" must not turn every "Fix:" into "Fi[secret]:".
    assert redact("Fix: set it", {"x", "it"}) == "Fix: set it"
    assert redact("a key xyz here", {"xyz"}) == f"a key {SECRET} here"


def test_true_and_false_are_left_alone_in_any_case() -> None:
    assert redact("enabled: true, False", {"true", "False", "TRUE"}) == "enabled: true, False"


def test_the_json_escaped_form_of_a_secret_is_masked() -> None:
    secret = 'pa"ss\\word'
    assert redact('{"password": "pa\\"ss\\\\word"}', {secret}) == f'{{"password": "{SECRET}"}}'
    assert redact(f"raw {secret}", {secret}) == f"raw {SECRET}"
