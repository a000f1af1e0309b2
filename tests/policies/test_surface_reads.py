"""What makes "read" true: for every (type, path) a guardrail claims from the surface inventory, a resource with a
bad value at that very path is flagged and one with a good value is not. Generated from the inventory, so a
provider upgrade that adds a type to a claimed surface is tested here too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpucloud import surface
from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import coverage, secret_sources
from gpucloud.policies.gpucloud_policies.security import resource_policy_public

# A GitHub token in gitleaks' format (readers/secrets.py TOKENS): an error wherever it sits in plain text.
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HIGH_ENTROPY = "API_KEY=Zx9Qw2Er7Ty4Ui1Op3As"


def nested(path: str, value: Any, lists: bool) -> dict[str, Any]:
    """Props holding ``value`` at the dotted path; with ``lists``, every intermediate block is a one-item list
    (the engine shows a nested block either way)."""
    steps = path.split(".")
    node: Any = value
    for i, step in enumerate(reversed(steps)):
        node = {step: [node] if lists and i else node}
    out: dict[str, Any] = node
    return out


SECRET_CASES = [(t, p) for t in sorted(secret_sources.inventory_types()) for p in secret_sources.store_paths(t)]


def test_secret_reads_cover_every_plain_text_store() -> None:
    # Every inventory type with a plain-text store is read, except those whose dedicated reader reads them and
    # those the scope table puts out of scope with its reason.
    assert len(SECRET_CASES) == 140
    assert ("aws:codebuild/project:Project", "environment.environmentVariables") in SECRET_CASES
    assert ("aws:sagemaker/model:Model", "primaryContainer.environment") in SECRET_CASES
    assert ("kubernetes:storage.k8s.io/v1:StorageClassList", "items.parameters") in SECRET_CASES
    assert "kubernetes:core/v1:Secret" not in secret_sources.inventory_types()
    assert "aws:lambda/function:Function" not in secret_sources.inventory_types()  # its dedicated reader


@pytest.mark.parametrize("lists", [False, True])
def test_a_token_at_every_claimed_secret_path_is_flagged(lists: bool) -> None:
    bad = [Res(t, f"bad{i}", nested(p, GH, lists)) for i, (t, p) in enumerate(SECRET_CASES)]
    good = [Res(t, f"good{i}", nested(p, "/app/config/endpoint", lists)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", [*bad, *good]) == {r.name for r in bad}


def test_every_claimed_secret_path_as_a_map_and_as_name_value_pairs() -> None:
    as_map = [Res(t, f"m{i}", nested(p, {"GH_TOKEN": GH}, False)) for i, (t, p) in enumerate(SECRET_CASES)]
    pairs = [Res(t, f"p{i}", nested(p, [{"name": "GH", "value": GH}], False)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", [*as_map, *pairs]) == {r.name for r in [*as_map, *pairs]}
    messages = dict(stack_messages("no-plaintext-secrets", [pairs[0]]))
    assert f"{SECRET_CASES[0][1]}[0].value holds a GitHub token" in messages["p0"]


def test_high_entropy_at_every_claimed_secret_path_is_a_warning_only() -> None:
    warned = [Res(t, f"w{i}", nested(p, HIGH_ENTROPY, False)) for i, (t, p) in enumerate(SECRET_CASES)]
    assert stack_flagged("no-plaintext-secrets", warned) == set()
    assert stack_flagged("secrets-high-entropy", warned) == {r.name for r in warned}


def test_secret_reads_skip_unknown_values() -> None:
    unknown = Res("aws:sagemaker/model:Model", "u", {"primaryContainer": {"environment": UNKNOWN}})
    assert stack_flagged("no-plaintext-secrets", [unknown]) == set()


def test_rendered_objects_are_read_by_their_apiversion_and_kind() -> None:
    from gpucloud.policies.gpucloud_policies import k8s

    manifest = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}}
    values = {**manifest, "parameters": {"token": GH}}
    token = k8s.set_derived([("urn:pulumi:test::test::kubernetes:helm.sh/v3:Release::r", "chart x@1", values)])
    try:
        found = list(secret_sources.inventory_values([]))
    finally:
        k8s.reset_derived(token)
    assert [(v.field, v.value) for v in found] == [("StorageClass fast (from chart x@1) parameters.token", GH)]


# --- principals --------------------------------------------------------------------------------------------

PUBLIC_DOC = json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "x:Get", "Resource": "*"}]})
SCOPED_DOC = json.dumps(
    {
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "x:Get",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}},
            }
        ]
    }
)
PRINCIPAL_CASES = [(t, p) for t, ps in sorted(resource_policy_public.documents().items()) for p in ps]


def test_principal_reads_are_the_inventory_less_what_is_out_of_scope() -> None:
    carried = {t for t, s in surface.types().items() if "principal" in s}
    out = {t for t in carried if coverage.scope().get(t, {}).get("principal", "").startswith("out of scope")}
    # The role's trust policy is iam-no-public-trust's; everything else is read here.
    assert set(resource_policy_public.documents()) == carried - out - {"aws:iam/role:Role"}
    assert len(PRINCIPAL_CASES) == 86


def _value(path: str, bad: bool) -> Any:
    if path.rsplit(".", 1)[-1] in resource_policy_public.PRINCIPAL_LEAVES:
        return "*" if bad else "123456789012"
    return PUBLIC_DOC if bad else SCOPED_DOC


@pytest.mark.parametrize("lists", [False, True])
def test_a_public_principal_at_every_claimed_path_is_flagged(lists: bool) -> None:
    bad = [Res(t, f"bad{i}", nested(p, _value(p, True), lists)) for i, (t, p) in enumerate(PRINCIPAL_CASES)]
    good = [Res(t, f"good{i}", nested(p, _value(p, False), lists)) for i, (t, p) in enumerate(PRINCIPAL_CASES)]
    assert flagged("resource-policy-no-public-principal", [*bad, *good]) == {r.name for r in bad}


def test_documents_as_objects_and_data_access_policies() -> None:
    doc = Res("aws:sqs/queue:Queue", "q", {"policy": json.loads(PUBLIC_DOC)})
    assert flagged("resource-policy-no-public-principal", [doc]) == {"q"}
    aoss = "aws:opensearch/serverlessAccessPolicy:ServerlessAccessPolicy"
    rules = [{"Rules": [{"ResourceType": "index", "Resource": ["index/x/*"]}], "Principal": ["*"]}]
    named = [{"Rules": rules[0]["Rules"], "Principal": ["arn:aws:iam::123456789012:role/reader"]}]
    found = [Res(aoss, "open", {"policy": json.dumps(rules)}), Res(aoss, "named", {"policy": json.dumps(named)})]
    assert flagged("resource-policy-no-public-principal", found) == {"open"}


def test_a_domain_in_a_vpc_is_not_judged_on_its_open_access_policy() -> None:
    domain = "aws:opensearch/domain:Domain"
    public = Res(domain, "public", {"accessPolicies": PUBLIC_DOC})
    in_vpc = Res(domain, "vpc", {"accessPolicies": PUBLIC_DOC, "vpcOptions": {"subnetIds": ["subnet-1"]}})
    assert flagged("resource-policy-no-public-principal", [public, in_vpc]) == {"public"}


def test_an_unknown_document_is_undecided() -> None:
    from pulumi_policy.proxy import UnknownValueError

    with pytest.raises(UnknownValueError):
        resource_messages("resource-policy-no-public-principal", Res("aws:sqs/queue:Queue", "q", {"policy": UNKNOWN}))
    queue = Res("aws:sqs/queue:Queue", "q", {"policy": UNKNOWN})
    msgs = resource_messages("resource-policy-no-public-principal", queue, {"unknowns": "block"})
    assert len(msgs) == 1 and "cannot be decided at preview (unknown: policy)" in msgs[0]
