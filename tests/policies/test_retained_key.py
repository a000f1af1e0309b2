"""GC-REL-102 retained-data-key: pass and fail fixtures, the exact set of resources flagged."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import Res, stack_flagged, stack_messages

KEY = "aws:kms/key:Key"
BUCKET = "aws:s3/bucketV2:BucketV2"
SSE = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
POLICY = "retained-data-key"


def fixtures() -> list[Res]:
    return [
        Res(KEY, "kept-key", {}, retain_on_delete=True),
        Res(KEY, "protected-key", {}, protect=True),
        Res(KEY, "cluster-key", {}),
        # Pass: retained data under retained keys; deleted data under a deleted key.
        Res(FSX, "fsx-ok", {}, {"kmsKeyId": ["kept-key"]}, retain_on_delete=True),
        Res(BUCKET, "bucket-ok", {}, retain_on_delete=True),
        Res(SSE, "bucket-ok-sse", {}, {"bucket": ["bucket-ok"], "rules": ["protected-key"]}),
        Res(BUCKET, "scratch", {}),
        Res(SSE, "scratch-sse", {}, {"bucket": ["scratch"], "rules": ["cluster-key"]}),
        Res(SC, "gp3-delete", {"reclaimPolicy": "Delete"}, {"parameters": ["cluster-key"]}),
        Res(SC, "gp3-literal-key", {"reclaimPolicy": "Retain", "parameters": {"kmsKeyId": "arn:aws:kms:x"}}),
        # Fail: retained data under the deleted cluster key.
        Res(SC, "gp3-retain", {"reclaimPolicy": "Retain"}, {"parameters": ["cluster-key"]}),
        Res(FSX, "fsx-bad", {}, {"kmsKeyId": ["cluster-key"]}, protect=True),
        Res(BUCKET, "bucket-bad", {}, retain_on_delete=True),
        Res(SSE, "bucket-bad-sse", {}, {"bucket": ["bucket-bad"], "rules": ["cluster-key"]}),
    ]


def test_retained_data_under_a_deleted_key_is_flagged() -> None:
    assert stack_flagged(POLICY, fixtures()) == {"gp3-retain", "fsx-bad", "bucket-bad-sse"}


def test_the_message_names_the_key_and_the_fix() -> None:
    messages = dict(stack_messages(POLICY, fixtures()))
    # The engine prefixes a stack policy's message with the resource name.
    assert messages["gp3-retain"].startswith(
        "gp3-retain: provisions volumes that are retained (reclaimPolicy Retain), but its KMS key cluster-key is "
        "deleted with the stack"
    )
    assert "retain the key too (ResourceOptions(retain_on_delete=True)" in messages["fsx-bad"]
    assert messages["bucket-bad-sse"].startswith(
        "bucket-bad-sse: encrypts the retained bucket bucket-bad, but its KMS key cluster-key"
    )


def test_exempt_holders_pass() -> None:
    assert stack_flagged(POLICY, fixtures(), {"exemptResources": ["gp3-retain", "bucket-bad"]}) == {"fsx-bad"}


def test_a_key_whose_retention_is_invisible_is_not_passed() -> None:
    # In the Pulumi CLI retainOnDelete is not shown to policies: the pair cannot be decided.
    resources = [
        Res(KEY, "key", {}, retain_on_delete=None),
        Res(SC, "gp3-retain", {"reclaimPolicy": "Retain"}, {"parameters": ["key"]}),
    ]
    with pytest.raises(UnknownValueError):
        stack_messages(POLICY, resources)


def test_prod_keeps_the_cluster_key_of_its_retained_volumes(monkeypatch: pytest.MonkeyPatch) -> None:
    """prod's Prometheus volumes (StorageClass reclaimPolicy Retain) are encrypted with the cluster key: the key is
    retained and protected, and the pack flags the pairing as soon as it is not."""
    from pathlib import Path

    import gpucloud.components.cluster as cluster_module
    from gpucloud.guard import evaluate_plan
    from gpucloud.plan.engine import run_program

    root = Path(__file__).resolve().parents[2]
    plan = run_program(root, "prod")
    key = next(r for r in plan.resources if r.type == KEY and r.name == "gpucloud-prod-eks-key")
    storage_class = next(r for r in plan.resources if r.type == SC)
    assert (key.retain_on_delete, key.protect) == (True, True)
    assert storage_class.inputs["reclaimPolicy"] == "Retain"
    assert storage_class.property_dependencies["parameters"] == [key.urn]
    flagged = [v for v in evaluate_plan(plan)["violations"] if v["policy"] == POLICY]
    assert flagged == []

    original = cluster_module.GpuCluster.__init__

    def without_retention(self, name, config, **kwargs):  # type: ignore[no-untyped-def]
        original(self, name, config.model_copy(update={"retain_key": False}), **kwargs)

    monkeypatch.setattr(cluster_module.GpuCluster, "__init__", without_retention)
    unretained = run_program(root, "prod")
    flagged = [v for v in evaluate_plan(unretained)["violations"] if v["policy"] == POLICY]
    assert [v["urn"].rsplit("::", 1)[-1] for v in flagged] == ["gpucloud-prod-addons-gp3"]
