"""The readers behind the inventory-derived reads: values at a property path, strings inside a value, IAM
documents inside templates, Kubernetes RBAC."""

from __future__ import annotations

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpucloud.policies.gpucloud_policies.readers import paths, rbac, templates


def proxy(value: dict) -> object:
    return unknown_checking_proxy(value)


def test_values_walk_maps_and_lists_at_every_step() -> None:
    props = proxy({"a": [{"b": {"c": "x"}}, {"b": [{"c": "y"}, {"c": None}, {"d": "z"}]}], "e": None})
    assert list(paths.values(props, "a.b.c")) == [("a[0].b.c", "x"), ("a[1].b[0].c", "y")]
    assert list(paths.values(props, "a.b")) == [
        ("a[0].b", {"c": "x"}),
        ("a[1].b[0]", {"c": "y"}),
        ("a[1].b[1]", {"c": None}),
        ("a[1].b[2]", {"d": "z"}),
    ]
    assert list(paths.values(props, "e")) == []
    assert list(paths.values(props, "e.f")) == []
    assert list(paths.values(props, "missing")) == []
    assert list(paths.values(proxy({"a": "text"}), "a.b")) == []


def test_values_report_unknown_steps_and_elements() -> None:
    props = proxy(
        {"a": UNKNOWN_STRING_VALUE, "l": [UNKNOWN_STRING_VALUE, {"b": "x"}], "m": {"b": UNKNOWN_STRING_VALUE}}
    )
    assert list(paths.values(props, "a.b")) == [("a", paths.UNKNOWN)]
    assert list(paths.values(props, "l.b")) == [("l[0]", paths.UNKNOWN), ("l[1].b", "x")]
    assert list(paths.values(props, "m.b")) == [("m.b", paths.UNKNOWN)]


def test_strings_name_each_value() -> None:
    value = proxy({"env": {"K": "v", "N": 3, "S": ["a", "b"]}})["env"]
    assert list(paths.strings(value, "env", "")) == [
        ("env.K", "K", "v"),
        ("env.S[0]", "S", "a"),
        ("env.S[1]", "S", "b"),
    ]
    pairs = proxy({"p": [{"name": "DB", "value": "u", "type": "PLAINTEXT"}, {"key": "K", "value": "w"}]})["p"]
    assert list(paths.strings(pairs, "p", "")) == [
        ("p[0].value", "DB", "u"),
        ("p[0].type", "DB", "PLAINTEXT"),
        ("p[1].value", "K", "w"),
    ]
    named = proxy({"p": {"parameterName": "X", "parameterValue": "v"}})["p"]
    assert list(paths.strings(named, "p", "")) == [("p.parameterValue", "X", "v")]
    assert list(paths.strings("whole", "w", "")) == [("w", "", "whole")]
    assert list(paths.strings(paths.UNKNOWN, "u", "n")) == [("u", "n", None)]
    assert list(paths.strings(proxy({"m": {"k": UNKNOWN_STRING_VALUE}})["m"], "m", "")) == [("m.k", "k", None)]
    # A name that is itself unknown names nothing: the entries keep their own keys.
    odd = proxy({"p": {"name": UNKNOWN_STRING_VALUE, "value": "v"}})["p"]
    assert list(paths.strings(odd, "p", "")) == [("p.name", "name", None), ("p.value", "value", "v")]
    assert list(paths.strings(7, "n", "")) == []


def test_template_loader_reads_json_yaml_and_short_tags() -> None:
    assert templates.load('{"Resources": {}}') == {"Resources": {}}
    assert templates.load({"a": 1}) == {"a": 1}
    assert templates.load("Value: !Ref Bucket\nList: !GetAZs ''\nJoin: !Join [',', [a, b]]\nIf: !If {a: b}") == {
        "Value": {"Ref": "Bucket"},
        "List": {"Fn::GetAZs": ""},
        "Join": {"Fn::Join": [",", ["a", "b"]]},
        "If": {"Fn::If": {"a": "b"}},
    }
    assert templates.load("Cond: !Condition IsProd") == {"Cond": {"Condition": "IsProd"}}
    assert templates.load("- a\n- b") is None
    assert templates.load(": [") is None
    assert templates.load("   ") is None
    assert templates.load(None) is None


def test_intrinsic_nodes() -> None:
    assert templates.intrinsic({"Ref": "X"})
    assert templates.intrinsic({"Fn::Sub": "x"})
    assert templates.intrinsic({"Statement": [{"Resource": {"Fn::GetAtt": ["B", "Arn"]}}]})
    assert not templates.intrinsic({"Ref": "X", "Other": 1})
    assert not templates.intrinsic({"Statement": [{"Action": "*", "Resource": "*"}]})
    assert not templates.intrinsic("Ref")


def test_template_documents_by_resource_type() -> None:
    doc = {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    body = {
        "Resources": {
            "P": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyDocument": doc}},
            "S": {"Type": "AWS::IAM::RolePolicy", "Properties": {"PolicyDocument": '{"Statement": []}'}},
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "Policies": [{"PolicyDocument": doc}, "x"],
                    "ManagedPolicyArns": ["arn:a", {"Ref": "M"}],
                },
            },
            "B": {"Type": "AWS::S3::Bucket", "Properties": {"PolicyDocument": doc}},
            "N": {"Type": "AWS::IAM::Policy"},
            "Bad": "x",
        }
    }
    assert list(templates.template_documents(body)) == [
        ("Resources.P.PolicyDocument", doc, None),
        ("Resources.S.PolicyDocument", {"Statement": []}, None),
        ("Resources.R.Policies[0]", doc, None),
        ("Resources.R.ManagedPolicyArns[0]", None, "arn:a"),
        ("Resources.R.ManagedPolicyArns[1]", {"Ref": "M"}, None),
    ]
    assert list(templates.template_documents({"Resources": "x"})) == []
    assert list(templates.template_documents("not a template")) == []
    assert list(templates.documents("AWS::IAM::Policy", {"PolicyDocument": "not json"}, "w")) == [
        ("w.PolicyDocument", None, None)
    ]
    assert list(templates.documents("AWS::IAM::Policy", {"PolicyDocument": {"Version": "1"}}, "w")) == [
        ("w.PolicyDocument", None, None)
    ]


def test_rbac_readers() -> None:
    role = {
        "rules": [
            {"apiGroups": [""], "verbs": ["*"], "resources": ["*"]},
            {"apiGroups": ["*"], "verbs": ["*"], "resources": ["*"]},
        ]
    }
    assert rbac.wildcard_rules(role) == [1]
    assert rbac.wildcard_rules({"rules": [{"apiGroups": ["*"], "verbs": ["get"], "resources": ["*"]}]}) == []
    assert rbac.wildcard_rules({"rules": [{"apiGroups": ["*"], "verbs": ["*"], "resources": ["pods"]}]}) == []
    binding = {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "system:anonymous"},
            {"kind": "Group", "name": "system:unauthenticated"},
            {"kind": "Group", "name": "system:anonymous"},
            {"kind": "User", "name": "system:unauthenticated"},
            {"kind": "Group", "name": "system:authenticated"},
        ],
    }
    assert rbac.anonymous(binding) == [
        rbac.Subject("User", "system:anonymous"),
        rbac.Subject("Group", "system:unauthenticated"),
    ]
    assert rbac.role_ref(binding) == ("ClusterRole", "view")
    assert rbac.role_ref({}) == ("", "")
    assert rbac.base_kind("ClusterRoleBindingPatch") == "ClusterRoleBinding"
    assert rbac.base_kind("Role") == "Role"
    bindings = rbac.rbac_types(frozenset({"roleRef", "subjects"}))
    assert "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBindingList" in bindings
    assert "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" not in bindings
    assert len(bindings) == 18


def test_secret_store_paths_and_rendered_tokens() -> None:
    from gpucloud.policies.gpucloud_policies import secret_sources as s

    assert s.store_paths("aws:codebuild/project:Project") == ["environment.environmentVariables"]
    assert s.store_paths("aws:imagebuilder/imageRecipe:ImageRecipe") == ["userDataBase64", "components.parameters"]
    # The credential itself is not a store: a password path is left to the scope table.
    assert s.store_paths("aws:rds/instance:Instance") == []
    assert s.store_paths("aws:nothing/here:Here") == []
    assert s._token({"apiVersion": "v1", "kind": "ConfigMap"}) == "kubernetes:core/v1:ConfigMap"
    assert s._token({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass"}) == (
        "kubernetes:storage.k8s.io/v1:StorageClass"
    )
    assert s._token({"apiVersion": "v1"}) == ""
    assert s._token({"kind": "StorageClass"}) == ""


def test_inventory_values_of_registered_and_rendered_objects() -> None:
    from pulumi_policy import PolicyResource

    from gpucloud.guard.harness import Res
    from gpucloud.policies.gpucloud_policies import k8s
    from gpucloud.policies.gpucloud_policies import secret_sources as s

    def res(r: Res) -> PolicyResource:
        return PolicyResource(r.type, proxy(dict(r.props)), f"urn:{r.name}", r.name, None, None, None, [], {})

    found = list(
        s.inventory_values(
            [
                res(Res("aws:sagemaker/model:Model", "m", {"primaryContainer": {"environment": {"A": "1"}}})),
                res(Res("aws:lambda/function:Function", "f", {"environment": {"variables": {"B": "2"}}})),
                res(Res("aws:lightsail/instance:Instance", "l", {"userData": "#!/bin/sh"})),
            ]
        )
    )
    assert [(v.urn, v.field, v.value, v.name) for v in found] == [
        ("urn:m", "primaryContainer.environment.A", "1", "A"),
        ("urn:l", "userData", "#!/bin/sh", ""),
    ]
    rendered = [
        ("urn:r", "chart c@1", {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "parameters": {"t": "x"}}),
        ("urn:r", "chart c@1", {"apiVersion": "v1", "kind": "ConfigMap", "data": {"t": "y"}}),
        ("urn:r", "chart c@1", {"apiVersion": "v1", "kind": "Secret", "data": {"t": "z"}}),
    ]
    token = k8s.set_derived(rendered)
    try:
        found = list(s.inventory_values([]))
    finally:
        k8s.reset_derived(token)
    # ConfigMaps have their own reader; a Secret is where secrets belong (out of scope).
    assert [(v.urn, v.field, v.value, v.name) for v in found] == [
        ("urn:r", "StorageClass (from chart c@1) parameters.t", "x", "t")
    ]
