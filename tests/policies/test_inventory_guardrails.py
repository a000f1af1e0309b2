"""The inventory-driven guardrails (surface_paths.py): for every (type, path) each one claims, generated from the
surface inventory, a resource with a bad value at that path is flagged, naming the path, and one with a good value
is not (what makes "read" in the coverage table true); plus the semantics each kind of path is judged by."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages
from gpucloud.policies.gpucloud_policies import GUARDRAILS
from gpucloud.policies.gpucloud_policies import surface_paths as sp
from gpucloud.policies.gpucloud_policies.security import encryption_off, public_data_endpoint, public_exposure

KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
BY_ID = {g.id: g for g in GUARDRAILS}

# kind -> (bad value, good value); None as the good value: the property left out.
NETWORK_VALUES: dict[str, tuple[Any, Any]] = {
    sp.PUBLIC_FLAG: (True, False),
    sp.BLOCK_FLAG: (False, True),
    sp.PUBLIC_ACCESS: ({"type": "SERVICE_PROVIDED_EIPS"}, {"type": "DISABLED"}),
    sp.INTERNAL: (False, True),
    sp.PRESENCE: ({"ipType": "IPV4"}, None),
    sp.ALLOW_CIDRS: (["0.0.0.0/1", "128.0.0.0/1"], ["10.0.0.0/16"]),
    # An OpenSearch Serverless network policy: the collection open to the internet, or to one VPC endpoint only.
    sp.PUBLIC_DOC: (
        json.dumps(
            [{"Rules": [{"ResourceType": "collection", "Resource": ["collection/logs"]}], "AllowFromPublic": True}]
        ),
        json.dumps(
            [
                {
                    "Rules": [{"ResourceType": "collection", "Resource": ["collection/logs"]}],
                    "AllowFromPublic": False,
                    "SourceVPCEs": ["vpce-0123456789abcdef0"],
                }
            ]
        ),
    ),
    # A template (or a Cloud Control desired state) with a public database and a public-IP subnet in it.
    sp.TEMPLATE: (
        json.dumps(
            {
                "Resources": {
                    "Db": {"Properties": {"PubliclyAccessible": True}},
                    "Net": {"Properties": {"MapPublicIpOnLaunch": True}},
                },
                "PubliclyAccessible": True,
                "MapPublicIpOnLaunch": True,
            }
        ),
        json.dumps(
            {
                "Resources": {
                    "Db": {"Properties": {"PubliclyAccessible": False}},
                    "Net": {"Properties": {"MapPublicIpOnLaunch": False}},
                },
                "PubliclyAccessible": False,
                "MapPublicIpOnLaunch": False,
            }
        ),
    ),
}
DATA_VALUES: dict[str, tuple[Any, Any]] = {
    sp.FLAG: (False, True),
    sp.INVERTED: (True, False),
    sp.MODE: ("NONE", "SSE_KMS"),
    sp.KEY: ("alias/aws/s3", KEY_ARN),
    sp.CONTAINER: ({"enabled": False}, {"enabled": True}),
}


def nest(path: str, value: Any, lists: bool) -> dict[str, Any]:
    """Props with ``value`` at the dotted path; with ``lists`` every inner step holds a one-element list."""
    steps = path.split(".")
    node: Any = value
    for i, step in enumerate(reversed(steps)):
        node = {step: node}
        if lists and i < len(steps) - 1:
            node = [node]
    return node


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def cases(guardrail_id: str, kind_of: Any, surface: str, table: dict[str, tuple[Any, Any]]) -> list[Any]:
    g = BY_ID[guardrail_id]
    out = []
    for token in sorted(g.resource_types):
        for path in sp.paths_of(token, surface):
            k = kind_of(token, path)
            if k is not None:
                out.append(pytest.param(g.name, token, path, k, table, id=f"{token}:{path}"))
    return out


def _baseline(token: str) -> dict[str, Any]:
    """Good values at the paths whose absence is itself a finding (a load balancer's ``internal``)."""
    props: dict[str, Any] = {}
    for path in sp.paths_of(token, "network"):
        if sp.network_kind(token, path) == sp.INTERNAL:
            props = merge(props, nest(path, True, False))
    return props


ALL = (
    cases("GC-SEC-170", public_data_endpoint.kind, "network", NETWORK_VALUES)
    + cases("GC-SEC-171", public_exposure.kind, "network", NETWORK_VALUES)
    + cases(
        "GC-SEC-172",
        lambda t, p: sp.data_kind(t, p) if sp.data_kind(t, p) in encryption_off.JUDGED else None,
        "data",
        DATA_VALUES,
    )
)


@pytest.mark.parametrize(("policy", "token", "path", "kind", "table"), ALL)
def test_every_claimed_path_is_read(policy: str, token: str, path: str, kind: str, table: Any) -> None:
    bad, good = table[kind]
    base = _baseline(token) if kind != sp.INTERNAL else {}
    for lists in (False, True):
        resources = [Res(token, "bad", merge(base, nest(path, bad, lists)))]
        resources.append(Res(token, "good", merge(base, nest(path, good, lists)) if good is not None else base))
        assert flagged(policy, resources) == {"bad"}, (lists, resources)
    message = resource_messages(policy, Res(token, "bad", merge(base, nest(path, bad, False))))[0]
    shown = path.rsplit(".", 1)[0] if kind in (sp.INTERNAL,) else path
    assert shown.split(".")[-1] in message


def test_every_type_is_claimed_by_the_inventory_not_by_name() -> None:
    """Each claimed type's every listed path has a kind: the guardrail reads the type whole."""
    assert len(ALL) > 250
    for gid, surface, kind_of in (
        ("GC-SEC-170", "network", sp.network_kind),
        ("GC-SEC-171", "network", sp.network_kind),
        ("GC-SEC-172", "data", sp.data_kind),
    ):
        for token in BY_ID[gid].resource_types:
            assert all(kind_of(token, p) is not None for p in sp.paths_of(token, surface)), token


def test_types_named_by_a_dedicated_guardrail_are_left_to_it() -> None:
    assert "aws:rds/instance:Instance" in encryption_off.GUARDRAIL.resource_types  # the module claims it ...
    assert "aws:rds/instance:Instance" not in BY_ID["GC-SEC-172"].resource_types  # ... rds-encrypted-cmk reads it
    assert "aws:ec2/instance:Instance" not in BY_ID["GC-SEC-171"].resource_types  # lt-no-public-ip
    assert "aws:sqs/queue:Queue" in BY_ID["GC-SEC-172"].resource_types


def test_data_semantics() -> None:
    queue = "aws:sqs/queue:Queue"
    rs = [
        Res(queue, "off", {"sqsManagedSseEnabled": False}),
        # SSE-SQS off beside a customer-managed key is SSE-KMS, not unencrypted.
        Res(queue, "kms-instead", {"sqsManagedSseEnabled": False, "kmsMasterKeyId": KEY_ARN}),
        # A key ARN the program creates is unknown at preview: set, and not AWS-managed.
        Res(queue, "computed-key", {"kmsMasterKeyId": UNKNOWN}),
        Res(queue, "aws-key", {"kmsMasterKeyId": "arn:aws:kms:us-east-1:123456789012:alias/aws/sqs"}),
        Res(queue, "unset", {}),
    ]
    assert flagged("encryption-not-disabled", rs) == {"off", "aws-key"}
    assert flagged("encryption-not-disabled", rs, {"requireCustomerManagedKeys": False}) == {"off"}
    domain = "aws:opensearch/domain:Domain"
    os_bad = Res(
        domain, "os", {"nodeToNodeEncryption": {"enabled": "false"}, "encryptAtRest": {"kmsKeyId": "alias/aws/es"}}
    )
    assert resource_messages("encryption-not-disabled", os_bad) == [
        "os: nodeToNodeEncryption.enabled is 'false': encryption is turned off. Fix: set it to true (or remove it).",
        "os: encryptAtRest.kmsKeyId is 'alias/aws/es', an AWS-managed key alias (alias/aws/...), not a "
        "customer-managed key. Fix: name a customer-managed KMS key, whose key policy the account controls.",
    ]
    # A container's inner key unknown at preview decides nothing; its inner mode still does.
    fw = "aws:networkfirewall/firewall:Firewall"
    rs = [
        Res(fw, "computed", {"encryptionConfiguration": {"keyId": UNKNOWN, "type": "CUSTOMER_KMS"}}),
        Res(fw, "aws-owned", {"encryptionConfiguration": {"type": "AWS_OWNED_KMS_KEY"}}),
    ]
    assert flagged("encryption-not-disabled", rs) == set()
    # Storage Gateway: kmsEncrypted false is S3-managed keys, still encrypted.
    share = "aws:storagegateway/nfsFileShare:NfsFileShare"
    assert flagged("encryption-not-disabled", [Res(share, "sse-s3", {"kmsEncrypted": False})]) == set()
    stream = "aws:kinesis/stream:Stream"
    assert flagged("encryption-not-disabled", [Res(stream, "k", {"encryptionType": "none"})]) == {"k"}
    assert flagged("encryption-not-disabled", [Res(stream, "k", {"encryptionType": "KMS"})]) == set()
    # An unknown flag is undecided, never passed: the engine's unknowns rule reports it.
    neptune = Res("aws:neptune/cluster:Cluster", "n", {"storageEncrypted": UNKNOWN})
    with pytest.raises(UnknownValueError):
        flagged("encryption-not-disabled", [neptune])
    assert flagged("encryption-not-disabled", [neptune], {"unknowns": "block"}) == {"n"}


def test_network_semantics() -> None:
    lb = "aws:lb/loadBalancer:LoadBalancer"
    elb = "aws:elb/loadBalancer:LoadBalancer"
    assert flagged("public-exposure-review", [Res(lb, "default", {}), Res(lb, "private", {"internal": True})]) == {
        "default"
    }
    assert resource_messages("public-exposure-review", Res(elb, "e", {"listeners": [{"lbPort": 443}]})) == [
        "e: internal is unset: the load balancer is internet-facing (listeners on port 443). Review: set "
        "internal=True unless it is meant to be a public front end."
    ]
    svc = "aws:ecs/service:Service"
    rs = [
        Res(svc, "enabled", {"networkConfiguration": {"assignPublicIp": "ENABLED"}}),
        Res(svc, "disabled", {"networkConfiguration": {"assignPublicIp": "DISABLED"}}),
    ]
    assert flagged("public-exposure-review", rs) == {"enabled"}
    isg = "aws:medialive/inputSecurityGroup:InputSecurityGroup"
    rs = [
        # Two halves of the internet are the internet (readers/reach.py).
        Res(isg, "halves", {"whitelistRules": [{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}]}),
        Res(isg, "v6", {"whitelistRules": [{"cidr": "::/0"}]}),
        Res(isg, "office", {"whitelistRules": [{"cidr": "203.0.113.0/24"}, {"cidr": "10.0.0.0/8"}]}),
    ]
    assert flagged("public-exposure-review", rs) == {"halves", "v6"}
    # A subnet's own CIDR is address space, not exposure; its public-IP mapping is.
    subnet = "aws:ec2/subnet:Subnet"
    rs = [
        Res(subnet, "public", {"cidrBlock": "0.0.0.0/0", "mapPublicIpOnLaunch": True}),
        Res(subnet, "private", {"cidrBlock": "10.0.0.0/24"}),
    ]
    assert flagged("public-exposure-review", rs) == {"public"}
    db = "aws:rds/clusterInstance:ClusterInstance"
    rs = [
        Res(db, "public", {"publiclyAccessible": True}),
        Res(db, "default", {}),
        Res(db, "private", {"publiclyAccessible": False}),
    ]
    assert flagged("public-data-endpoint", rs) == {"public"}
    assert flagged("public-exposure-review", rs) == set()
    # Public key material is not network exposure (the classifier no longer files it there).
    assert sp.paths_of("aws:ec2/keyPair:KeyPair", "network") == ()
    assert sp.paths_of("aws:opensearch/domain:Domain", "network") == ()


def test_templates_are_judged_by_the_same_names() -> None:
    stack = "aws:cloudformation/stack:Stack"
    template = {
        "Resources": {
            "Brokers": {
                "Type": "AWS::MSK::Cluster",
                "Properties": {
                    "BrokerNodeGroupInfo": {"ConnectivityInfo": {"PublicAccess": {"Type": "SERVICE_PROVIDED_EIPS"}}}
                },
            },
            "Front": {"Type": "AWS::ElasticLoadBalancingV2::LoadBalancer", "Properties": {"Scheme": "internet-facing"}},
            "Inputs": {
                "Type": "AWS::MediaLive::InputSecurityGroup",
                "Properties": {"WhitelistRules": [{"Cidr": "0.0.0.0/1"}, {"Cidr": "128.0.0.0/1"}]},
            },
        }
    }
    r = Res(stack, "stk", {"templateBody": json.dumps(template)})
    assert resource_messages("public-data-endpoint", r) == [
        "stk: templateBody.Resources.Brokers.Properties.BrokerNodeGroupInfo.ConnectivityInfo.PublicAccess.type is "
        "'SERVICE_PROVIDED_EIPS': the brokers get public addresses. Fix: set it to 'DISABLED' and reach the cluster "
        "from inside the VPC."
    ]
    assert [m.split(":", 2)[1].strip() for m in resource_messages("public-exposure-review", r)] == [
        "templateBody.Resources.Front.Properties.Scheme is 'internet-facing'",
        "templateBody.Resources.Inputs.Properties whitelistRules.cidr admits 0.0.0.0/1, 128.0.0.0/1, which together "
        "reach the internet. Fix",
    ]
    inside = {"Resources": {"Inputs": {"Properties": {"WhitelistRules": [{"Cidr": "203.0.113.0/24"}]}}}}
    assert flagged("public-exposure-review", [Res(stack, "ok", {"templateBody": json.dumps(inside)})]) == set()
    # YAML with CloudFormation's short tags parses too.
    yaml_body = "Resources:\n  Db:\n    Type: AWS::RDS::DBInstance\n    Properties:\n      PubliclyAccessible: true\n"
    assert flagged("public-data-endpoint", [Res(stack, "yaml", {"templateBody": yaml_body})]) == {"yaml"}


def test_service_lists_are_read_like_services() -> None:
    from gpucloud.guard.harness import stack_flagged

    item = {"metadata": {"name": "web"}, "spec": {"type": "LoadBalancer"}}
    lst = Res("kubernetes:core/v1:ServiceList", "svcs", {"items": [item]})
    assert stack_flagged("k8s-no-public-load-balancer", [lst]) == {"svcs"}
    assert (
        stack_flagged("k8s-no-public-load-balancer", [Res("kubernetes:core/v1:ServiceList", "none", {"items": []})])
        == set()
    )


def test_claims_and_narrowing_recomputed() -> None:
    """The declarations are what the inventory and the kind functions give, computed again here (the module-level
    sets are computed once at import)."""
    assert sp.claimed("data", sp.data_kind, encryption_off.JUDGED) == encryption_off.TYPES
    assert (
        sp.claimed("network", public_data_endpoint._claims, public_data_endpoint.JUDGED) == public_data_endpoint.TYPES
    )
    assert sp.claimed("network", public_exposure._claims, public_exposure.JUDGED) == public_exposure.TYPES
    assert len(encryption_off.TYPES) == 234
    assert len(public_data_endpoint.TYPES) == 26
    assert len(public_exposure.TYPES) == 26
    # Both network guardrails read a type with paths of both (RDS shard groups only have the data flag).
    assert "aws:rds/shardGroup:ShardGroup" in public_data_endpoint.TYPES
    assert "aws:rds/shardGroup:ShardGroup" not in public_exposure.TYPES
    assert "aws:ecs/service:Service" in public_exposure.TYPES
    assert "aws:ecs/service:Service" not in public_data_endpoint.TYPES
    # A type with a path no name explains is not claimed (VPC: address space only; cleanrooms: crypto settings).
    assert "aws:ec2/vpc:Vpc" not in public_exposure.TYPES | public_data_endpoint.TYPES
    assert "aws:cleanrooms/collaboration:Collaboration" not in encryption_off.TYPES
    modules = (encryption_off, public_data_endpoint, public_exposure)
    wide = tuple(g for g in GUARDRAILS if g.id not in sp.INVENTORY_DRIVEN) + tuple(m.GUARDRAIL for m in modules)
    again = {g.id: g for g in sp.narrowed(wide)}
    for gid in sp.INVENTORY_DRIVEN:
        assert again[gid].resource_types == BY_ID[gid].resource_types, gid
    named_elsewhere = encryption_off.GUARDRAIL.resource_types - BY_ID["GC-SEC-172"].resource_types
    assert {"aws:rds/instance:Instance", "aws:efs/fileSystem:FileSystem", "aws:ebs/volume:Volume"} <= named_elsewhere
    # Another surface's guardrail does not narrow (the count cap names CloudFormation stacks for compute).
    assert "aws:cloudformation/stack:Stack" in BY_ID["GC-SEC-171"].resource_types
    assert all(g is again[g.id] or g.id in sp.INVENTORY_DRIVEN for g in wide)


def test_kinds_by_name() -> None:
    lb = "aws:lb/loadBalancer:LoadBalancer"
    assert sp.network_kind(lb, "listeners") == sp.CONTEXT
    assert sp.network_kind("aws:appmesh/virtualRouter:VirtualRouter", "spec.listeners") is None
    assert sp.network_kind("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "cidrIpv4") == sp.CONTEXT
    assert sp.network_kind("kubernetes:networking.k8s.io/v1:NetworkPolicy", "spec.egress.to.ipBlock.cidr") == sp.CONTEXT
    np_ingress = "spec.ingress.from.ipBlock.cidr"
    assert sp.network_kind("kubernetes:networking.k8s.io/v1:NetworkPolicy", np_ingress) == sp.ALLOW_CIDRS
    assert sp.network_kind("aws:ec2/subnet:Subnet", "cidrBlock") == sp.CONTEXT
    assert sp.network_kind("aws:ec2/vpc:Vpc", "cidrBlock") is None
    assert sp.network_kind("aws:ses/receiptFilter:ReceiptFilter", "cidr") is None
    assert sp.network_kind("aws:cloudformation/stack:Stack", "templateBody") == sp.TEMPLATE
    assert sp.network_kind("aws:cloudcontrol/resource:Resource", "desiredState") == sp.TEMPLATE
    assert sp.network_kind("aws:other/thing:Thing", "templateBody") is None
    assert sp.network_kind("aws:emr/x:X", "permittedPublicSecurityGroupRuleRanges") == sp.CONTEXT
    assert sp.data_kind("", "kmsEncrypted") == sp.CONTEXT
    assert sp.data_kind("", "sseS3") == sp.CONTEXT
    assert sp.data_kind("", "encryptionDisabled") == sp.INVERTED
    assert sp.data_kind("", "kmsMasterKeyId") == sp.KEY
    assert sp.data_kind("", "clientBroker") == sp.MODE
    assert sp.data_kind("", "encryptionInfo") == sp.CONTAINER
    assert sp.data_kind("", "encryptionStrategy") is None
    assert sp.leaf("a.b.c") == "c" and sp.leaf("c") == "c"
    assert sp.camel("PubliclyAccessible") == "publiclyAccessible" and sp.camel("") == ""


@pytest.mark.parametrize(
    ("value", "public", "block_off", "flag_off", "mode_off"),
    [
        (True, True, False, False, False),
        (False, False, True, True, False),
        ("true", True, False, False, False),
        (" ENABLED ", True, False, False, False),
        ("False", False, True, True, False),
        ("DISABLED", False, False, False, True),
        (" none", False, False, False, True),
        ("PLAINTEXT", False, False, False, True),
        ("TLS", False, False, False, False),
        (None, False, False, False, False),
        (0, False, False, False, False),
    ],
)
def test_value_readers(value: Any, public: bool, block_off: bool, flag_off: bool, mode_off: bool) -> None:
    assert sp.public_flag(value) is public
    assert sp.block_off(value) is block_off
    assert sp.flag_off(value) is flag_off
    assert sp.mode_off(value) is mode_off


def test_walkers() -> None:
    props = {"routes": [{"cidrBlock": "10.0.0.0/8"}, {"other": 1}, {"cidrBlock": None}], "top": {"x": 1}}
    assert list(sp.values(props, "routes.cidrBlock")) == [("routes[0].cidrBlock", "10.0.0.0/8")]
    assert list(sp.values(props, "top.x")) == [("top.x", 1)]
    assert list(sp.values(props, "top.x.y")) == []
    assert list(sp.values(props, "missing")) == []
    # Every step expands a list, the first and the last alike (readers/paths.py walks for both readers).
    assert list(sp.values({"a": [{"b": 1}, {"b": [2, 3]}]}, "a.b")) == [
        ("a[0].b", 1),
        ("a[1].b[0]", 2),
        ("a[1].b[1]", 3),
    ]
    nested = {"enabled": False, "inner": {"keyId": "k"}, "list": [{"type": "NONE"}], "flat": ["a", "b"], "null": None}
    assert list(sp.walk_object(nested, "c")) == [
        ("c.enabled", "enabled", False),
        ("c.inner.keyId", "keyId", "k"),
        ("c.list[0].type", "type", "NONE"),
        ("c.flat", "flat", ["a", "b"]),
    ]
    assert list(sp.walk_object("scalar", "c")) == []
    template = json.dumps(
        {"Resources": {"A": {"Properties": {"Outer": {"Inner": [{"Cidr": "x"}], "Flat": ["p", "q"]}}}, "B": "odd"}}
    )
    assert list(sp.template_properties("aws:cloudformation/stack:Stack", {"templateBody": template})) == [
        ("templateBody.Resources.A.Properties.Outer.Inner[0].Cidr", "outer.inner.cidr", "x"),
        ("templateBody.Resources.A.Properties.Outer.Flat", "outer.flat", ["p", "q"]),
    ]
    assert list(sp.template_properties("aws:cloudformation/stack:Stack", {"templateBody": "[]"})) == []
    state = json.dumps({"PubliclyAccessible": True})
    assert list(sp.template_properties("aws:cloudcontrol/resource:Resource", {"desiredState": state})) == [
        ("desiredState.PubliclyAccessible", "publiclyAccessible", True)
    ]


def test_messages_name_the_value_and_the_fix() -> None:
    db = "aws:neptune/clusterInstance:ClusterInstance"
    assert resource_messages("public-data-endpoint", Res(db, "n", {"publiclyAccessible": "true"})) == [
        "n: publiclyAccessible is 'true': the data service gets a public endpoint on the internet. Fix: set it to "
        "false and reach it from inside the VPC (VPN, peering, PrivateLink)."
    ]
    ap = "aws:s3/accessPoint:AccessPoint"
    assert resource_messages(
        "public-data-endpoint", Res(ap, "a", {"publicAccessBlockConfiguration": {"blockPublicPolicy": "false"}})
    ) == [
        "a: publicAccessBlockConfiguration.blockPublicPolicy is 'false': a block on public access is turned off. "
        "Fix: set it to true (or remove it)."
    ]
    msk = "aws:msk/cluster:Cluster"
    ok = {"brokerNodeGroupInfo": {"connectivityInfo": {"publicAccess": {"type": "disabled"}}}}
    unset = {"brokerNodeGroupInfo": {"connectivityInfo": {"publicAccess": {}}}}
    assert flagged("public-data-endpoint", [Res(msk, "ok", ok), Res(msk, "unset", unset)]) == set()
    sub = "aws:ec2/subnet:Subnet"
    assert resource_messages("public-exposure-review", Res(sub, "s", {"mapPublicIpOnLaunch": True})) == [
        "s: mapPublicIpOnLaunch is True: it gets a public address on the internet. Review: use private subnets (NAT "
        "or VPC endpoints for egress) unless it is meant to be public."
    ]
    mail = "aws:mailmanager/ingressPoint:IngressPoint"
    assert resource_messages(
        "public-exposure-review",
        Res(mail, "m", {"networkConfiguration": {"publicNetworkConfiguration": {"ipType": "IPV4"}}}),
    ) == [
        "m: networkConfiguration.publicNetworkConfiguration is set: it takes traffic from the internet. Review: use "
        "a VPC network configuration unless it is meant to be public."
    ]
    elb = "aws:elb/loadBalancer:LoadBalancer"
    msgs = resource_messages(
        "public-exposure-review", Res(elb, "e", {"internal": False, "listeners": [{"lbPort": 80}, {"lbPort": 443}, {}]})
    )
    assert msgs == [
        "e: internal is False: the load balancer is internet-facing (listeners on port 80, 443). Review: set "
        "internal=True unless it is meant to be a public front end."
    ]
    ws = "aws:sagemaker/workforce:Workforce"
    msgs = resource_messages(
        "public-exposure-review", Res(ws, "w", {"sourceIpConfig": {"cidrs": ["0.0.0.0/0", "10.0.0.0/8"]}})
    )
    assert msgs == [
        "w: sourceIpConfig.cidrs admits 0.0.0.0/0, 10.0.0.0/8, which together reach the internet. Fix: list only the "
        "networks that need it, if this is not meant to be public."
    ]
    share = "aws:storagegateway/smbFileShare:SmbFileShare"
    assert resource_messages(
        "encryption-not-disabled", Res(share, "s", {"kmsKeyArn": "alias/aws/s3", "kmsEncrypted": True})
    ) == [
        "s: kmsKeyArn is 'alias/aws/s3', an AWS-managed key alias (alias/aws/...), not a customer-managed key. Fix: "
        "name a customer-managed KMS key, whose key policy the account controls."
    ]
    ws_ = "aws:workspaces/workspace:Workspace"
    assert resource_messages("encryption-not-disabled", Res(ws_, "w", {"rootVolumeEncryptionEnabled": False})) == [
        "w: rootVolumeEncryptionEnabled is False: encryption is turned off. Fix: set it to true (or remove it)."
    ]
    emr = "aws:emr/securityConfiguration:SecurityConfiguration"
    if emr in BY_ID["GC-SEC-172"].resource_types:
        assert flagged("encryption-not-disabled", [Res(emr, "e", {})]) == set()


def test_containers_judge_every_field() -> None:
    fh = "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream"
    rs = [
        Res(fh, "off", {"serverSideEncryption": {"enabled": False}}),
        Res(
            fh,
            "aws-key",
            {
                "serverSideEncryption": {
                    "enabled": True,
                    "keyType": "CUSTOMER_MANAGED_CMK",
                    "keyArn": "alias/aws/firehose",
                }
            },
        ),
        Res(fh, "on", {"serverSideEncryption": {"enabled": True, "keyType": "AWS_OWNED_CMK"}}),
    ]
    assert flagged("encryption-not-disabled", rs) == {"off", "aws-key"}
    msk = "aws:msk/cluster:Cluster"
    plain = {"encryptionInfo": {"encryptionInTransit": {"clientBroker": "PLAINTEXT", "inCluster": True}}}
    assert resource_messages("encryption-not-disabled", Res(msk, "m", plain)) == [
        "m: encryptionInfo.encryptionInTransit.clientBroker is 'PLAINTEXT': no encryption. Fix: choose an encrypting "
        "mode (a KMS one where offered)."
    ]
    # An SQS-managed-SSE flag off inside a settings object beside a customer-managed key is SSE-KMS.
    box = {"settings": {"sqsManagedSseEnabled": False, "kmsKeyId": KEY_ARN}}
    out = encryption_off.findings(
        sp.CONTAINER, "settings", "settings", box["settings"], box, {"requireCustomerManagedKeys": True}
    )
    assert out == []
    lone = {"sqsManagedSseEnabled": False}
    out = encryption_off.findings(sp.CONTAINER, "settings", "settings", lone, {}, {"requireCustomerManagedKeys": True})
    assert out == [
        "settings.sqsManagedSseEnabled is False: encryption is turned off. Fix: set it to true (or remove it)."
    ]
    with_alias = {"sqsManagedSseEnabled": False, "kmsKeyId": "alias/aws/sqs"}
    out = encryption_off.findings(sp.CONTAINER, "s", "s", with_alias, {}, {"requireCustomerManagedKeys": False})
    assert out == ["s.sqsManagedSseEnabled is False: encryption is turned off. Fix: set it to true (or remove it)."]
    # A list of settings objects, element by element.
    s3v = "aws:s3/vectorsVectorBucket:VectorsVectorBucket"
    listed = {"encryptionConfigurations": [{"sseType": "AES256"}, {"sseType": "aws:kms", "kmsKeyArn": "alias/aws/s3"}]}
    if s3v in BY_ID["GC-SEC-172"].resource_types:
        msgs = resource_messages("encryption-not-disabled", Res(s3v, "v", listed))
        assert msgs and "encryptionConfigurations[1].kmsKeyArn" in msgs[0]
