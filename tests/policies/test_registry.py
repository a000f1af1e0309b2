"""The registry, the pack metadata, the shipped configs and property-based robustness."""

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, Severity, StackValidationPolicy
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from gpucloud.guard.config import validate_config
from gpucloud.guard.harness import Res, resource_messages, stack_messages
from gpucloud.policies.gpucloud_policies import GUARDRAILS, PACK_NAME, by_name, initial_config, policies

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "policies" / "configs").glob("*.json"))


def test_every_guardrail_has_complete_metadata():
    assert len(GUARDRAILS) >= 30
    ids = [g.id for g in GUARDRAILS]
    names = [g.name for g in GUARDRAILS]
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names)
    for g in GUARDRAILS:
        assert re.fullmatch(r"GC-(GPU|COST|SEC|REL)-\d{3}", g.id), g.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", g.name) and g.name != "all", g.name
        assert g.description and g.remediation_steps and g.references, g.name
        assert isinstance(g.severity, Severity) and isinstance(g.enforcement, EnforcementLevel)
        assert g.kind == "stack" or g.resource_types, g.name
        for key, prop in g.config.items():
            assert "default" in prop and prop.get("description"), (g.name, key)
            jsonschema.validate(prop["default"], prop)


def test_policy_objects_match_the_registry():
    built = policies()
    assert [p.name for p in built] == [g.name for g in GUARDRAILS]
    for p, g in zip(built, GUARDRAILS):
        assert isinstance(p, StackValidationPolicy if g.kind == "stack" else ResourceValidationPolicy)
        assert p.severity == g.severity and p.enforcement_level == g.enforcement
    assert {p.name for p in built if isinstance(p, ResourceValidationPolicy) and p.has_remediation()} == {
        "cost-tags",
        "lt-imdsv2",
    }
    assert PACK_NAME == "gpucloud-guardrails"
    assert initial_config()["gpu-count-cap"] == {"maxGpusPerPool": 64, "maxGpusPerStack": 256, "unknowns": "warn"}


def test_pack_files():
    main = (ROOT / "policies" / "__main__.py").read_text()
    assert "PolicyPack(" in main and "def " not in main
    yaml_text = (ROOT / "policies" / "PulumiPolicy.yaml").read_text()
    assert "name: python" in yaml_text and re.search(r"^version: \d+\.\d+\.\d+$", yaml_text, re.M)
    assert "pulumi-policy" in (ROOT / "policies" / "requirements.txt").read_text()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    assert validate_config(json.loads(path.read_text()), by_name()) == []


def test_environment_family_lists():
    allowed = {p.stem: set(json.loads(p.read_text())["gpu-family-allowlist"]["allowedFamilies"]) for p in CONFIGS}
    assert set(allowed) == {"dev", "staging", "prod"}
    assert not {f for f in allowed["dev"] if f.startswith("p")}
    assert "p5" in allowed["prod"] and "p5" not in allowed["staging"]


# Random property shapes: anything JSON-like, plus the analyzer's unknown sentinel anywhere.
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.integers(),
    st.text(max_size=12),
    st.sampled_from(
        [
            "true",
            "false",
            "required",
            "0.0.0.0/0",
            "p5.48xlarge",
            "g6e.xlarge",
            "SPOT",
            "efa",
            "CAPACITY_BLOCK",
            "PERSISTENT_2",
            "secrets",
            "*",
            UNKNOWN_STRING_VALUE,
        ]
    ),
)
_keys = st.sampled_from(
    [
        "instanceTypes",
        "instanceType",
        "scalingConfig",
        "maxSize",
        "minSize",
        "metadataOptions",
        "httpTokens",
        "httpPutResponseHopLimit",
        "blockDeviceMappings",
        "ebs",
        "encrypted",
        "kmsKeyId",
        "networkInterfaces",
        "associatePublicIpAddress",
        "interfaceType",
        "userData",
        "ingress",
        "cidrBlocks",
        "self",
        "tags",
        "labels",
        "vpcConfig",
        "endpointPublicAccess",
        "publicAccessCidrs",
        "encryptionConfig",
        "provider",
        "keyArn",
        "resources",
        "spec",
        "template",
        "requirements",
        "key",
        "operator",
        "values",
        "limits",
        "policy",
        "capacityType",
        "mixedInstancesPolicy",
        "launchTemplate",
        "overrides",
        "tagSpecifications",
        "resourceType",
        "deploymentType",
    ]
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=5)),
    max_leaves=20,
)
_props = st.dictionaries(_keys, _values, max_size=8)
_types = sorted({t for g in GUARDRAILS for t in g.resource_types})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(props=_props, type_=st.sampled_from(_types))
def test_resource_policies_only_ever_raise_the_unknown_signal(props, type_):
    for g in GUARDRAILS:
        if g.kind != "resource" or type_ not in g.resource_types:
            continue
        try:
            messages = resource_messages(g.name, Res(type_, "r", props))
        except UnknownValueError:
            continue
        assert all(isinstance(m, str) and m.startswith("r: ") for m in messages)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(resources=st.lists(st.tuples(st.sampled_from([*_types, "aws:ec2/subnet:Subnet"]), _props), max_size=4))
def test_stack_policies_only_ever_raise_the_unknown_signal(resources):
    res = [Res(t, f"r{i}", p) for i, (t, p) in enumerate(resources)]
    for g in GUARDRAILS:
        if g.kind != "stack" or g.name == "monthly-spend-cap":
            continue
        try:
            stack_messages(g.name, res)
        except UnknownValueError:
            continue
