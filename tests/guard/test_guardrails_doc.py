"""docs/guardrails.md lists every policy of the pack with its ID, kind, severity, default level and paths, and the
resource policies' paths are exactly the types the engine calls them for (the corpus test holds every finding's
resource type to the same table)."""

from __future__ import annotations

from doc_paths import Row, documents, rows, short

from gpucloud.policies.gpucloud_policies import GUARDRAILS


def test_every_policy_has_its_row() -> None:
    table = rows()
    assert sorted(table) == sorted(g.name for g in GUARDRAILS)
    for g in GUARDRAILS:
        row = table[g.name]
        assert (row.id, row.kind, row.severity, row.default) == (
            g.id,
            g.kind,
            g.severity.value,
            g.enforcement.value,
        ), g.name


def test_resource_policies_list_exactly_their_resource_types() -> None:
    table = rows()
    for g in GUARDRAILS:
        if g.kind == "resource":
            assert table[g.name].paths == {short(t) for t in g.resource_types}, g.name
        else:
            row = table[g.name]
            assert row.paths or row.any_kubernetes or row.any_type, f"{g.name}: no paths listed"


def test_short_names_and_coverage() -> None:
    assert short("aws:ec2/launchTemplate:LaunchTemplate") == "ec2.LaunchTemplate"
    assert short("kubernetes:karpenter.sh/v1beta1:NodePool") == "karpenter.sh/v1beta1 NodePool"
    row = Row("X", "x", "stack", "high", "mandatory", frozenset({"s3.Bucket"}), False)
    assert documents(row, "aws:s3/bucket:Bucket")
    assert not documents(row, "aws:s3/bucketPolicy:BucketPolicy")
    assert documents(Row("X", "x", "stack", "high", "mandatory", frozenset(), True), "kubernetes:apps/v1:Deployment")
    anything = Row("X", "x", "stack", "high", "mandatory", frozenset(), False, True)
    assert documents(anything, "gcp:compute/instance:Instance")
    kubernetes_only = Row("X", "x", "stack", "high", "mandatory", frozenset(), True)
    assert not documents(kubernetes_only, "gcp:compute/instance:Instance")
