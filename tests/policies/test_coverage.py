"""Every guarded surface of every provider type is read by a guardrail or listed out of scope with a reason, derived
from the guardrails' own declarations; docs/guardrails.md shows the same table."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from gpucloud import surface
from gpucloud.policies.gpucloud_policies import GUARDRAILS, coverage

DOC = Path(__file__).resolve().parents[2] / "docs" / "guardrails.md"


def test_every_surfaced_type_is_read_or_out_of_scope_with_a_reason() -> None:
    untriaged = [(p.token, p.surface) for p in coverage.pairs() if p.status == "untriaged"]
    assert untriaged == [], (
        f"{len(untriaged)} (type, surface) pair(s) neither read by a guardrail nor in "
        f"policies/gpucloud_policies/scope.json: {untriaged[:10]}; add a reader, or run scripts/surface_triage.py "
        "--write and review each new line"
    )


def test_scope_table_lists_only_pairs_nobody_reads() -> None:
    types = surface.types()
    stale = [
        (token, s)
        for token, entries in coverage.scope().items()
        for s in entries
        if s not in types.get(token, {}) or coverage.readers(token, s)
    ]
    assert stale == []


def test_scope_reasons_are_given() -> None:
    for token, entries in coverage.scope().items():
        for s, reason in entries.items():
            if reason.startswith(coverage.NOT_YET_READ):
                assert reason == f"not yet read: {s}", (token, reason)
            else:
                assert reason.startswith("out of scope: ") and len(reason) > 40, (token, reason)
    for token, reason in coverage.reviewed_elsewhere().items():
        assert token not in surface.types() and len(reason) > 20, token


def test_coverage_counts() -> None:
    counts = Counter(p.status for p in coverage.pairs())
    # Every pair of every surface is read or out of scope with its reason: nothing "not yet read" (issue 25).
    assert counts == {"read": 681, "out of scope": 162}
    read = {(p.token, p.surface): p.readers for p in coverage.pairs() if p.readers}
    assert read[("aws:ec2/instance:Instance", "secrets")] == ("lt-no-secrets-in-userdata",)
    assert read[("kubernetes:apps/v1:DaemonSet", "pods")] == ("k8s-pod-security",)
    # The pod-spec finder reads List items, so the List kinds are read like their items.
    assert read[("kubernetes:apps/v1:DeploymentList", "pods")] == ("k8s-pod-security",)
    # Shared readers: reachability (NACLs), principals (resource policies), secrets (env, ConfigMaps).
    assert read[("aws:ec2/networkAcl:NetworkAcl", "network")] == ("nacl-no-world-admin-ports",)
    assert read[("aws:sqs/queuePolicy:QueuePolicy", "principal")] == ("resource-policy-no-public-principal",)
    assert read[("aws:lambda/function:Function", "secrets")] == ("no-plaintext-secrets",)
    assert read[("kubernetes:core/v1:ConfigMap", "secrets")] == ("no-plaintext-secrets",)
    assert read[("aws:batch/computeEnvironment:ComputeEnvironment", "compute")] == (
        "gpu-family-allowlist",
        "gpu-count-cap",
    )
    assert read[("aws:cloudformation/stack:Stack", "iam")] == ("iam-no-admin-star",)
    # Read from the inventory: every plain-text store of the secrets surface, every resource policy.
    assert read[("aws:codebuild/project:Project", "secrets")] == ("no-plaintext-secrets",)
    assert read[("kubernetes:storage.k8s.io/v1:StorageClassList", "secrets")] == ("no-plaintext-secrets",)
    assert read[("aws:apigateway/restApiPolicy:RestApiPolicy", "principal")] == ("resource-policy-no-public-principal",)
    assert read[("aws:quicksight/dataSet:DataSet", "principal")] == ("resource-policy-no-public-principal",)
    assert read[("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBindingList", "iam")] == (
        "k8s-rbac-no-anonymous-binding",
        "k8s-rbac-wildcard-admin",
    )
    assert read[("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "iam")] == ("k8s-rbac-wildcard-admin",)
    assert coverage.scope()["aws:iam/user:User"]["iam"].startswith("out of scope: a permissions boundary")
    # The credential itself (a password, a private key) is out of scope with its reason; so is an endpoint policy.
    assert coverage.scope()["aws:rds/instance:Instance"]["secrets"].startswith("out of scope: the input is the")
    assert coverage.scope()["aws:ec2/vpcEndpoint:VpcEndpoint"]["principal"].startswith("out of scope: an endpoint")
    # Inventory-driven readers (surface_paths.py): a type another guardrail names is left to it.
    assert read[("aws:rds/clusterInstance:ClusterInstance", "network")] == ("public-data-endpoint",)
    assert read[("aws:ec2/subnet:Subnet", "network")] == ("public-exposure-review",)
    assert read[("aws:sqs/queue:Queue", "data")] == ("encryption-not-disabled",)
    assert read[("aws:cloudformation/stack:Stack", "network")] == ("public-data-endpoint", "public-exposure-review")
    assert read[("kubernetes:core/v1:ServiceList", "network")] == ("k8s-no-public-load-balancer",)
    assert read[("aws:rds/instance:Instance", "data")] == ("rds-encrypted-cmk",)
    assert read[("aws:lambda/capacityProvider:CapacityProvider", "compute")] == (
        "gpu-family-allowlist",
        "gpu-count-cap",
    )
    # A Service/Ingress patch is judged on the fields it sets (undecided where the patched object decides).
    assert read[("kubernetes:core/v1:ServicePatch", "network")] == ("k8s-no-public-load-balancer",)


def test_docs_show_the_generated_table() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert coverage.DOC_START in doc and coverage.DOC_END in doc
    assert coverage.with_table(doc) == doc, "docs/guardrails.md: run scripts/surface_triage.py --write"
    table = coverage.table_markdown()
    assert "| compute (starts compute) | 69 | 43 | 0 | 26 |" in table
    assert "| network (network exposure) | 134 | 73 | 0 | 61 |" in table
    assert "| principal (principal-bearing documents) | 89 | 85 | 0 | 4 |" in table
    assert "| iam (IAM grants) | 61 | 58 | 0 | 3 |" in table
    assert "| data (data at rest) | 251 | 237 | 0 | 14 |" in table
    assert "| secrets (secrets) | 179 | 125 | 0 | 54 |" in table


def test_declarations_name_real_types_and_surfaces() -> None:
    types = surface.types()
    for g in GUARDRAILS:
        assert g.surfaces <= set(surface.surfaces()), g.name
        for t in g.read_types:
            if t.startswith(("aws:", "kubernetes:")) and "*" not in t and ".sh/" not in t and ".aws/" not in t:
                assert t in types, f"{g.name} reads {t}, which the SDKs do not define"


def test_pattern_reads() -> None:
    reads = ["kubernetes:*", "!kubernetes:*List", "aws:s3/bucket:Bucket"]
    assert coverage.matches("kubernetes:apps/v1:Deployment", reads)
    assert not coverage.matches("kubernetes:apps/v1:DeploymentList", reads)
    assert coverage.matches("aws:s3/bucket:Bucket", reads)
    assert not coverage.matches("aws:s3/bucketV2:BucketV2", reads)
    assert not coverage.matches("aws:s3/bucket:Bucket", [])


def test_triaged_types(monkeypatch: pytest.MonkeyPatch) -> None:
    assert coverage.triaged("aws:autoscaling/schedule:Schedule")  # in the inventory (its compute not yet read)
    assert coverage.triaged("kubernetes:karpenter.sh/v1:NodePool")  # named by the GPU guardrails
    assert coverage.triaged("kubernetes:kubeflow.org/v2beta1:MPIJob")  # reviewed by hand
    # Read by a pattern only (k8s-pod-security searches every object): a surface, not a review of the type.
    assert not coverage.triaged("kubernetes:serving.kserve.io/v1beta1:InferenceService")
    assert not coverage.triaged("gcp:compute/instance:Instance")
    assert coverage.unread_roots("kubernetes:core/v1:ServicePatch", ("network",)) == ()  # k8s-no-public-lb
    assert coverage.unread_roots("aws:autoscaling/schedule:Schedule", ("compute",)) == ()  # gpu-count-cap
    assert coverage.unread_roots("aws:gamelift/fleet:Fleet", ("compute",)) == ()
    assert coverage.unread_roots("aws:ec2/instance:Instance", ("compute", "network")) == ()
    # A pair nobody reads and the scope table does not list (a provider upgrade's new input) counts as unread,
    # named by its top-level input.
    monkeypatch.setattr(coverage, "readers", lambda token, surface_id=None: [])
    assert coverage.unread_roots("kubernetes:networking.k8s.io/v1:IngressPatch", ("network",)) == (("network", "spec"),)


def test_scope_file_is_one_entry_per_line() -> None:
    text = coverage.SCOPE_FILE.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text.count("\n") == len(data["types"]) + len(data["reviewed"]) + 7
