"""The fleet layer's readers of engine-view values and of user data, each with the value it must give."""

from __future__ import annotations

import base64

from gpucloud.fleet import labels as L
from gpucloud.fleet import selection
from gpucloud.fleet.bootstrap import parse_user_data
from gpucloud.fleet.model import Taint
from gpucloud.fleet.values import (
    SENTINELS,
    UNKNOWN,
    count,
    decode_user_data,
    flag,
    get,
    is_list,
    known,
    mappings,
    number,
    obj,
    strings,
    tag_map,
    text,
)


def test_values() -> None:
    assert len(SENTINELS) == 7 and UNKNOWN in SENTINELS and known(0) and not known(None) and not known(UNKNOWN)
    assert [count(v) for v in (2.0, "3", 2.6, -1, True, UNKNOWN, "x", float("inf"), None)] == [
        2, 3, 3, None, None, None, None, None, None,
    ]  # fmt: skip
    assert [number(v) for v in ("1.5", 2, "nan", "x", False, UNKNOWN)] == [1.5, 2.0, None, None, None, None]
    assert [text(v) for v in ("a", "", UNKNOWN, 3)] == ["a", None, None, None]
    assert strings(["a", UNKNOWN, 1, "b"]) == ["a", "b"] and strings("ab") == [] and strings(None) == []
    assert mappings([{"a": 1}, 2, None]) == [{"a": 1}] and mappings({"a": 1}) == []
    assert is_list(("a",)) and not is_list("a") and not is_list(b"a")
    assert [flag(v) for v in (True, "TRUE", "false", "yes", None)] == [True, True, False, None, None]
    assert get({"a": [{"b": 1}]}, "a.0.b") == 1 and get({"a": [1]}, "a.1", "d") == "d" and get(None, "a") is None
    assert obj({"a": 1}) == {"a": 1} and obj(UNKNOWN) == {} and obj(None) == {}
    assert tag_map({"a": 1}) == {"a": "1"}
    assert tag_map([{"key": "a", "value": "x"}, {"key": UNKNOWN, "value": "y"}]) == {"a": "x", "<unknown:1>": "y"}
    assert decode_user_data(base64.b64encode(b"#!/bin/sh").decode()) == "#!/bin/sh"
    assert decode_user_data("plain text") == "plain text" and decode_user_data(UNKNOWN) is None


def test_user_data_bootstrap_forms() -> None:
    flags = (
        "/etc/eks/bootstrap.sh c --kubelet-extra-args "
        "'--node-labels=a=1,b=2 --register-with-taints=k=v:NoSchedule,g:NoExecute'"
    )
    boot = parse_user_data(flags)
    assert (boot.labels, boot.taints, boot.known, boot.full) == (
        {"a": "1", "b": "2"},
        [Taint("k", "v", "NoSchedule"), Taint("g", "", "NoExecute")],
        True,
        True,
    )
    spaced = parse_user_data("kubelet --node-labels x=y --register-with-taints t=1:PreferNoSchedule")
    assert (spaced.labels, spaced.taints, spaced.full) == ({"x": "y"}, [Taint("t", "1", "PreferNoSchedule")], False)
    toml = (
        '[settings.kubernetes]\ncluster-name = "c"\n[settings.kubernetes.node-labels]\n"r" = "gpu"\n'
        '[settings.kubernetes.node-taints]\n"d" = ["x:NoSchedule", "y:NoExecute"]\n'
    )
    rocket = parse_user_data(base64.b64encode(toml.encode()).decode())
    assert (rocket.labels, rocket.taints, rocket.full, rocket.bottlerocket) == (
        {"r": "gpu"},
        [Taint("d", "x", "NoSchedule"), Taint("d", "y", "NoExecute")],
        True,
        True,
    )
    assert parse_user_data("[settings broken").labels == {}
    nodeadm = (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: ['--node-labels=p=q']\n"
    )
    boot = parse_user_data(nodeadm)
    assert (boot.labels, boot.full) == ({"p": "q"}, False)
    assert parse_user_data("kind: NodeConfig\n: : bad").labels == {}
    absent, unknown = parse_user_data(None), parse_user_data(UNKNOWN)
    assert (absent.known, absent.full, unknown.known, unknown.full) == (True, False, False, True)


def test_labels_and_requirements() -> None:
    assert L.normalize("failure-domain.beta.kubernetes.io/region") == L.REGION
    assert L.normalize("topology.ebs.csi.aws.com/zone") == L.ZONE and L.normalize("x") == "x"
    assert L.type_labels("m7g.xlarge") == {
        L.INSTANCE_TYPE: "m7g.xlarge",
        L.ARCH: "arm64",
        L.INSTANCE_CATEGORY: "m",
        L.INSTANCE_GENERATION: "7",
        L.INSTANCE_FAMILY: "m7g",
        L.INSTANCE_SIZE: "xlarge",
    }
    assert L.type_labels("u-12tb1.112xlarge")[L.INSTANCE_GENERATION] == "1"
    assert L.lower_kebab("Radeon Pro V520") == "radeon-pro-v520"
    match = L.requirement_matches
    have = {L.INSTANCE_CPU: "8"}
    assert [match(have, L.INSTANCE_CPU, op, ["8"]) for op in ("In", "NotIn", "Gt", "Lt", "Gte", "Lte")] == [
        True, False, False, False, True, True,
    ]  # fmt: skip
    assert match(have, L.INSTANCE_CPU, "Gt", ["7"]) and match(have, L.INSTANCE_CPU, "Lt", ["9"])
    assert not match({}, L.INSTANCE_CPU, "Gt", ["1"]) and not match({L.INSTANCE_CPU: "x"}, L.INSTANCE_CPU, "Gt", ["1"])
    assert (
        match({}, L.INSTANCE_CPU, "Gt", ["1", "2"])
        and match({}, "k", "DoesNotExist", [])
        and not match({}, "k", "Exists", [])
    )
    assert selection.requirement(
        {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["arm64", UNKNOWN]}
    ) == (
        L.ARCH,
        "In",
        ["arm64"],
    )
    assert selection.requirement({"operator": "In"}) is None and selection.requirement("x") is None
    assert [selection.quantity(v) for v in ("8", "1000m", "2Gi", "1k", 3, -1, "-2Gi", "x", "5Zi", True, None)] == [
        8.0, 1.0, 2 * 2**30, 1000.0, 3.0, None, None, None, None, None, None,
    ]  # fmt: skip


def test_nodepool_limits_in_nodes_of_one_type() -> None:
    from gpucloud.catalog import get_catalog

    g5, inf2 = get_catalog().get("g5.xlarge"), get_catalog().get("inf2.xlarge")  # 4 vCPU, 16 GiB, one device each
    nodes = selection.limit_nodes
    assert nodes({"cpu": "12"}, g5) == 3 and nodes({"cpu": "13"}, g5) == 3 and nodes({"memory": "48Gi"}, g5) == 3
    assert nodes({"cpu": "12", "memory": "32Gi", "nvidia.com/gpu": "9"}, g5) == 2
    assert nodes({"aws.amazon.com/neuron": "4"}, inf2) == 4 and nodes({"nvidia.com/gpu": "4"}, inf2) is None
    assert nodes({"pods": "10", "cpu": "lots"}, g5) is None and nodes({}, g5) is None
    assert nodes({"cpu": "8"}, None) is None and nodes({"nvidia.com/gpu": "0.5"}, g5) == 0
    assert str(Taint("k", "v", "NoSchedule")) == "k=v:NoSchedule" and str(Taint("k", "", "NoExecute")) == "k:NoExecute"


def test_quantities_follow_apimachinerys_grammar() -> None:
    from gpucloud.fleet.values import quantity

    assert [quantity(q) for q in ("8", "1k", "500m", "1.5", ".5", "+2", "-1")] == [8, 1000, 0.5, 1.5, 0.5, 2, -1]
    assert [quantity(q) for q in ("1Ki", "2Gi", "1Ei", "3M", "1E", "1e3", "2E-2", "5n", "7u")] == [
        1024,
        2 * 2**30,
        2**60,
        3e6,
        1e18,
        1000,
        0.02,
        5e-9,
        7e-6,
    ]
    # Not quantities: a unit Kubernetes does not know, two suffixes, a bare suffix, a boolean, nothing.
    assert [quantity(q) for q in ("1kb", "1Kim", "Gi", "", True, None, float("inf"), "1e999")] == [None] * 8


def test_user_data_with_spaces_is_plain_text_not_base64() -> None:
    # Only strict base64 is decoded: "YWJj ZGVm" would decode to "abcdef" if non-alphabet characters were skipped.
    assert decode_user_data("YWJj ZGVm") == "YWJj ZGVm"
    assert decode_user_data("YWJjZGVm") == "abcdef"
