"""The surface inventory is what the installed provider SDKs say: regenerated and compared, so a provider upgrade
that adds, removes or reshapes a type fails here until `python -m gpucloud.surface` is rerun and its new surfaces
are triaged (tests/policies/test_coverage.py)."""

from __future__ import annotations

import json

import pytest

from gpucloud import surface
from gpucloud.surface import classify, generate, sdk


@pytest.fixture(scope="module")
def built() -> dict:
    return generate.build()


def test_checked_in_inventory_is_the_generated_one(built: dict) -> None:
    text = generate.INVENTORY.read_text(encoding="utf-8")
    assert text == generate.render(built), (
        "gpucloud/surface/inventory.json is stale: run `python -m gpucloud.surface`, then triage the new pairs "
        "(scripts/surface_triage.py)"
    )
    assert json.loads(text) == built


def test_every_resource_type_of_both_sdks_is_listed(built: dict) -> None:
    counts = built["counts"]
    aws = [t for t in built["types"] if t.startswith("aws:")]
    k8s = [t for t in built["types"] if t.startswith("kubernetes:")]
    # pulumi-aws 7.51.1 defines 1,748 resource classes and pulumi-kubernetes 4.34.2 550 (kinds, Lists, Patches).
    assert (len(aws), len(k8s), counts["types"]) == (1748, 550, 2298)
    assert built["sources"] == sdk.versions()
    assert set(built["surfaces"]) == {"compute", "network", "principal", "iam", "data", "secrets", "pods"}


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        (
            "aws:ec2/instance:Instance",
            {
                "compute": ["instanceType", "instanceMarketOptions.spotOptions.spotInstanceType"],
                "network": ["associatePublicIpAddress"],
                "data": [
                    "ebsBlockDevices.encrypted",
                    "ebsBlockDevices.kmsKeyId",
                    "rootBlockDevice.encrypted",
                    "rootBlockDevice.kmsKeyId",
                ],
                # getPasswordData is a boolean: it holds no secret, whatever its name says.
                "secrets": ["userData", "userDataBase64"],
            },
        ),
        # Numbers and flags about a password are not one; the password itself is.
        ("aws:rds/cluster:Cluster", None),
        # A name/value list holds values (a CodeBuild variable may be a credential); an object of settings does not.
        ("aws:codebuild/project:Project", None),
        ("aws:cognito/userPool:UserPool", {"data": ["lambdaConfig.kmsKeyId"]}),
        # Reviewed path removals: a unit, not a token; a policy name, not a document; a session policy.
        ("aws:cognito/userPoolClient:UserPoolClient", {}),
        ("aws:iot/policyAttachment:PolicyAttachment", {}),
        ("aws:iot/policy:Policy", {"iam": ["policy"]}),
        (
            "aws:batch/computeEnvironment:ComputeEnvironment",
            {
                "compute": [
                    "computeResources.desiredVcpus",
                    "computeResources.instanceTypes",
                    "computeResources.maxVcpus",
                    "computeResources.minVcpus",
                ],
            },
        ),
        (
            "aws:iam/role:Role",
            {
                "principal": ["assumeRolePolicy"],
                "iam": ["managedPolicyArns", "permissionsBoundary", "inlinePolicies.policy"],
            },
        ),
        ("aws:kms/key:Key", {"principal": ["policy"]}),
        ("kubernetes:apps/v1:Deployment", {"pods": ["spec.template.spec"]}),
        ("kubernetes:batch/v1:CronJob", {"pods": ["spec.jobTemplate.spec.template.spec"]}),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", {"iam": ["aggregationRule", "rules"]}),
        # From the override table: what names cannot say.
        ("kubernetes:core/v1:Secret", {"secrets": ["data", "stringData"]}),
        (
            "aws:cloudcontrol/resource:Resource",
            {"compute": ["desiredState"], "network": ["desiredState"], "iam": ["desiredState"]},
        ),
        ("aws:ec2/placementGroup:PlacementGroup", {}),
    ],
)
def test_surfaces_of_known_types(built: dict, token: str, expected: dict) -> None:
    if token == "aws:rds/cluster:Cluster":
        assert built["types"][token]["secrets"] == ["masterPassword", "masterPasswordWo"]
    elif token == "aws:codebuild/project:Project":
        assert built["types"][token]["secrets"] == ["environment.environmentVariables"]
    else:
        assert built["types"][token] == expected


def test_rules_on_property_names() -> None:
    def leaf(token: str, name: str, nested: bool = False) -> list[str]:
        return classify._leaf_surfaces(token, name, nested)

    assert leaf("aws:x/y:Y", "masterInstanceType") == ["compute"]
    assert leaf("aws:x/y:Y", "mapPublicIpOnLaunch") == ["network"]
    assert leaf("aws:x/y:Y", "ingressCidrBlocks") == ["network"]
    assert leaf("aws:sqs/queue:Queue", "policy") == ["principal"]
    # In the IAM module a policy document is an identity policy: a grant, not a resource policy.
    assert leaf("aws:iam/rolePolicy:RolePolicy", "policy") == ["iam"]
    # A property holding an object is judged by what is inside it, never by its own name.
    assert leaf("aws:sqs/queue:Queue", "policy", nested=True) == []
    assert leaf("aws:x/y:Y", "kmsKeyArn") == ["data"]
    assert leaf("aws:x/y:Y", "sseSpecification") == ["data"]
    assert leaf("aws:x/y:Y", "masterUserPassword") == ["secrets"]
    assert leaf("aws:x/y:Y", "processes") == []
    assert leaf("kubernetes:rbac.authorization.k8s.io/v1:Role", "rules") == ["iam"]
    assert leaf("kubernetes:networking.k8s.io/v1:NetworkPolicy", "rules") == []


def test_overrides_add_and_remove() -> None:
    table = [
        {"tokens": ["a:b/c:C"], "add": {"compute": ["body"]}, "remove": ["data"], "reason": "r"},
        {"tokens": ["other:x/y:Y"], "add": {"pods": ["spec"]}, "reason": "r"},
    ]
    got = classify.apply_overrides("a:b/c:C", {"data": ["kmsKeyId"], "network": ["cidr"]}, table)
    assert got == {"compute": ["body"], "network": ["cidr"]}


def test_override_removes_one_path() -> None:
    table = [{"tokens": ["a:b/c:C"], "removePaths": {"secrets": ["units.accessToken"]}, "reason": "r"}]
    got = classify.apply_overrides("a:b/c:C", {"secrets": ["password", "units.accessToken"]}, table)
    assert got == {"secrets": ["password"]}
    assert classify.apply_overrides("a:b/c:C", {"secrets": ["units.accessToken"]}, table) == {}


def test_scan_records_numeric_properties(built: dict) -> None:
    scanned = sdk.scan()
    cluster = next(c for (d, n), c in scanned.classes.items() if d == "pulumi_aws/rds" and n == "ClusterArgs")
    numeric = {p.name: p.numeric for p in cluster.props}
    assert numeric["masterPasswordWoVersion"] is True  # pulumi.Input[Optional[_builtins.int]]
    assert numeric["manageMasterUserPassword"] is True  # bool
    assert numeric["masterPassword"] is False  # str


def test_every_override_names_existing_types_and_gives_a_reason(built: dict) -> None:
    for entry in generate.overrides():
        assert entry["reason"].strip(), entry
        assert set(entry.get("add", {})) <= set(classify.SURFACES), entry
        assert set(entry.get("removePaths", {})) <= set(classify.SURFACES), entry
        missing = [t for t in entry["tokens"] if t not in built["types"]]
        assert missing == [], f"override for types the SDKs do not define: {missing}"


def test_loader_reads_the_checked_in_file() -> None:
    assert surface.types()["aws:eks/nodeGroup:NodeGroup"]["compute"][0] == "instanceTypes"
    assert next(iter(surface.surfaces())) == "compute"
