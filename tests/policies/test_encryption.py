"""The shared at-rest reader (security/encryption.py): the order of its questions and its message shape."""

import pytest
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from gpucloud.guard.harness import UNKNOWN
from gpucloud.policies.gpucloud_policies.security.efs_cmk import AT_REST as EFS
from gpucloud.policies.gpucloud_policies.security.encryption import AtRest, Gap
from gpucloud.policies.gpucloud_policies.security.rds_cmk import AT_REST as RDS

RULE = AtRest(
    flag="on",
    unencrypted="data is plain",
    flag_fix="turn it on",
    aws_managed="AWS owns the key",
    key_fix="name a key",
    key="keyRef",
)


def gap(props, **kw):
    return RULE.gap(unknown_checking_proxy(props), **kw)


def test_the_flag_is_asked_before_the_key():
    assert gap({}) == Gap("on", None, is_flag=True)
    assert gap({"on": "false", "keyRef": "k"}) == Gap("on", "false", is_flag=True)
    assert gap({"on": False}) == Gap("on", False, is_flag=True)
    assert gap({"on": "TRUE"}) == Gap("keyRef", None, is_flag=False)
    assert gap({"on": True, "keyRef": "k"}) is None


def test_the_key_only_when_required_and_an_inherited_flag_is_not_asked():
    assert gap({"on": True}, require_key=False) is None
    assert gap({}, require_key=False) == Gap("on", None, is_flag=True)
    assert gap({}, flag_inherited=True) == Gap("keyRef", None, is_flag=False)
    assert gap({"keyRef": "k"}, flag_inherited=True) is None
    assert gap({}, require_key=False, flag_inherited=True) is None


def test_an_unknown_stops_at_the_question_it_answers():
    # A false flag is decided even when the key is computed; an unknown flag is not guessed.
    assert gap({"on": False, "keyRef": UNKNOWN}) == Gap("on", False, is_flag=True)
    assert gap({"on": True, "keyRef": UNKNOWN}) is None
    with pytest.raises(UnknownValueError):
        gap({"on": UNKNOWN, "keyRef": "k"})


def test_messages_name_the_field_and_value():
    assert RULE.message(Gap("on", None, True)) == "on is unset: data is plain. Fix: turn it on."
    assert RULE.message(Gap("on", "no", True)) == "on is 'no': data is plain. Fix: turn it on."
    assert RULE.message(Gap("keyRef", None, False)) == "keyRef is not set: AWS owns the key. Fix: name a key."
    found: list[str] = []
    RULE.check({"on": True}, found.append)
    RULE.check({"on": True, "keyRef": "k"}, found.append)
    RULE.check({"on": True}, found.append, require_key=False)
    assert found == ["keyRef is not set: AWS owns the key. Fix: name a key."]


def test_each_policy_keeps_its_own_field_names():
    assert (EFS.flag, EFS.key, RDS.flag, RDS.key) == ("encrypted", "kmsKeyId", "storageEncrypted", "kmsKeyId")
    assert EFS.message(Gap("encrypted", None, True)) == (
        "encrypted is unset: the file system is stored unencrypted. Fix: set encrypted=True and kms_key_id to the "
        "platform's KMS key."
    )
    assert RDS.message(Gap("storageEncrypted", False, True)) == (
        "storageEncrypted is False: the database storage, its backups and snapshots are unencrypted. Fix: set "
        "storage_encrypted=True and kms_key_id."
    )
