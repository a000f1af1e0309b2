"""The shared semantic readers (policies/gpucloud_policies/readers) and the guardrails built on them."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from gpucloud.guard.harness import UNKNOWN, Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import k8s
from gpucloud.policies.gpucloud_policies.readers import keys, principals, reach, secrets
from gpucloud.policies.gpucloud_policies.security import nacl_world_ingress as nacl

# --- reachability ----------------------------------------------------------------------------------------


def test_reach_unions_and_shares():
    assert reach.Reach.of(["0.0.0.0/1", "128.0.0.0/1"]).is_world()
    assert reach.Reach.of(["::/1", "8000::/1"]).is_world()
    assert reach.covers_everything([reach.parse("0.0.0.0/1"), reach.parse("128.0.0.0/1")])  # type: ignore[list-item]
    assert not reach.covers_everything([reach.parse("0.0.0.0/1")])  # type: ignore[list-item]
    assert not reach.Reach.of(["10.0.0.0/8", "192.168.0.0/16", "198.51.100.0/24"]).is_world()
    # A typo reads as the world only where the caller says so.
    assert not reach.Reach.of(["10.0.0.0/33"]).is_world()
    assert reach.Reach.of(["10.0.0.0/33"]).is_world(unparsable_is_world=True)
    assert reach.split(["10.0.0.0/8, 172.16.0.0/12"]) == ["10.0.0.0/8", "172.16.0.0/12"]


def _acl(*rules):
    return Res(
        nacl.NACL,
        "acl",
        {"ingress": [dict(zip(("ruleNo", "action", "protocol", "fromPort", "toPort", "cidrBlock"), r)) for r in rules]},
    )


def test_nacl_first_match_wins_per_address():
    world_ssh = _acl((100.0, "allow", "tcp", 22.0, 22.0, "0.0.0.0/0"))
    deny_first = _acl((50.0, "deny", "-1", 0.0, 0.0, "0.0.0.0/0"), (100.0, "allow", "tcp", 22.0, 22.0, "0.0.0.0/0"))
    deny_after = _acl((50.0, "allow", "-1", 0.0, 0.0, "0.0.0.0/0"), (100.0, "deny", "tcp", 22.0, 22.0, "0.0.0.0/0"))
    half_denied = _acl(
        (50.0, "deny", "tcp", 22.0, 22.0, "0.0.0.0/1"), (60.0, "allow", "tcp", 0.0, 65535.0, "0.0.0.0/0")
    )
    https_only = _acl((100.0, "allow", "tcp", 443.0, 443.0, "0.0.0.0/0"))
    assert stack_flagged("nacl-no-world-admin-ports", [world_ssh]) == {"acl"}
    assert stack_flagged("nacl-no-world-admin-ports", [deny_first]) == set()
    assert stack_flagged("nacl-no-world-admin-ports", [deny_after]) == {"acl"}
    # Half of the internet is still far over the 1 % threshold.
    assert stack_flagged("nacl-no-world-admin-ports", [half_denied]) == {"acl"}
    assert stack_flagged("nacl-no-world-admin-ports", [https_only]) == set()
    [(_, message)] = stack_messages("nacl-no-world-admin-ports", [world_ssh])
    assert "network ACL ingress rule(s) 100 admit the internet (0.0.0.0/0) to port 22 (SSH)" in message


def test_nacl_rule_resources_join_their_acl_and_skip_egress():
    acl = Res(nacl.NACL, "acl", {})
    rules = [
        Res(
            nacl.NACL_RULE,
            f"r{i}",
            {
                "networkAclId": UNKNOWN,
                "ruleNumber": float(100 + i),
                "egress": False,
                "protocol": "tcp",
                "ruleAction": "allow",
                "cidrBlock": c,
                "fromPort": 3389.0,
                "toPort": 3389.0,
            },
            {"networkAclId": ["acl"]},
        )
        for i, c in enumerate(("0.0.0.0/1", "128.0.0.0/1"))
    ]
    egress = Res(
        nacl.NACL_RULE,
        "out",
        {
            "networkAclId": UNKNOWN,
            "ruleNumber": 100.0,
            "egress": True,
            "protocol": "-1",
            "ruleAction": "allow",
            "cidrBlock": "0.0.0.0/0",
        },
        {"networkAclId": ["acl"]},
    )
    assert stack_flagged("nacl-no-world-admin-ports", [acl, *rules]) == {"r0"}
    assert stack_flagged("nacl-no-world-admin-ports", [acl, rules[0], egress]) == {"r0"}
    assert stack_flagged("nacl-no-world-admin-ports", [acl, egress]) == set()


def test_eks_public_cidrs_are_a_union():
    def cluster(cidrs):
        vpc = {"endpointPrivateAccess": True, "endpointPublicAccess": True, "publicAccessCidrs": cidrs}
        return Res("aws:eks/cluster:Cluster", "c", {"vpcConfig": vpc})

    allow = {"allowRestrictedPublicAccess": True}
    assert flagged("eks-endpoint-private", [cluster(["0.0.0.0/1", "128.0.0.0/1"])], allow) == {"c"}
    assert flagged("eks-endpoint-private", [cluster(["198.51.100.0/24"])], allow) == set()
    assert flagged("eks-endpoint-private", [cluster(["not-a-cidr"])], allow) == {"c"}


# --- principals --------------------------------------------------------------------------------------------


def st(**kw):
    return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", **kw}]}


@pytest.mark.parametrize(
    ("condition", "public"),
    [
        (None, True),
        ({"Bool": {"aws:SecureTransport": "true"}}, True),
        ({"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}}, True),
        ({"StringEquals": {"aws:SourceAccount": "123456789012"}}, False),
        ({"ArnLike": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:*"}}, False),
        ({"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:*:*"}}, True),
        ({"StringEqualsIfExists": {"aws:PrincipalOrgID": "o-abc"}}, True),
        ({"StringNotEquals": {"aws:PrincipalOrgID": "o-abc"}}, True),
        ({"ForAllValues:StringEquals": {"aws:PrincipalOrgID": "o-abc"}}, True),
        ({"StringEquals": {"aws:principalorgid": "o-abc"}}, False),
        ({"StringLike": {"aws:PrincipalOrgID": "*"}}, True),
        ({"StringEquals": {"aws:SourceVpce": "${aws:SourceVpce}"}}, True),
        ({"StringLike": {"aws:userid": "AROAEXAMPLE:*"}}, True),
        ({"IpAddress": {"aws:SourceIp": ["0.0.0.0/1", "128.0.0.0/1"]}}, True),
        ({"IpAddress": {"aws:SourceIp": "198.51.100.0/24"}}, False),
        ({"StringEquals": {"kms:CallerAccount": "123456789012"}}, False),
    ],
)
def test_which_conditions_restrict_a_public_principal(condition, public):
    doc = st(Principal="*", **({"Condition": condition} if condition else {}))
    assert bool(principals.public_statements(doc)) is public


def test_public_principal_forms():
    assert principals.principal_is_public("*")
    assert principals.principal_is_public({"AWS": ["arn:aws:iam::1:root", "*"]})
    assert not principals.principal_is_public({"Service": "*"})
    assert not principals.principal_is_public({"AWS": "arn:aws:iam::123456789012:root"})
    assert [f.index for f in principals.public_statements(st(NotPrincipal={"AWS": "arn:aws:iam::1:root"}))] == [0]
    deny = {"Statement": [{"Effect": "Deny", "Principal": "*", "Action": "*"}]}
    assert principals.public_statements(deny) == []


def test_web_identity_trust_needs_sub():
    provider = "oidc.eks.us-east-1.amazonaws.com/id/ABC"
    arn = f"arn:aws:iam::123456789012:oidc-provider/{provider}"

    def trust(condition):
        return {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": condition,
                }
            ]
        }

    aud_only = trust({"StringEquals": {f"{provider}:aud": "sts.amazonaws.com"}})
    [finding] = principals.public_statements(aud_only)
    assert f"without a '{provider}:sub' condition" in finding.why
    assert principals.public_statements(trust({"StringLike": {f"{provider}:sub": "system:serviceaccount:*"}}))
    assert not principals.public_statements(trust({"StringEquals": {f"{provider}:sub": "system:serviceaccount:ml:a"}}))
    assert not principals.public_statements(trust({"StringLike": {f"{provider}:sub": "system:serviceaccount:ml:*"}}))


def test_resource_policy_guardrail():
    public = json.dumps(st(Principal={"AWS": "*"}, Resource="*"))
    scoped = json.dumps(st(Principal="*", Resource="*", Condition={"StringEquals": {"aws:SourceAccount": "1"}}))
    rs = [
        Res("aws:sqs/queuePolicy:QueuePolicy", "q", {"policy": public}),
        Res("aws:sns/topic:Topic", "t", {"policy": scoped}),
        Res("aws:kms/key:Key", "k", {"policy": public}),
        Res("aws:glacier/vault:Vault", "v", {"accessPolicy": public}),
        Res("aws:lambda/permission:Permission", "p", {"principal": "*", "action": "lambda:InvokeFunction"}),
        Res("aws:lambda/permission:Permission", "p-scoped", {"principal": "*", "sourceAccount": "1"}),
        Res("aws:lambda/layerVersionPermission:LayerVersionPermission", "l", {"principal": "*", "organizationId": "o"}),
    ]
    assert flagged("resource-policy-no-public-principal", rs) == {"q", "k", "v", "p"}
    [message] = resource_messages("resource-policy-no-public-principal", rs[0])
    assert message.startswith(
        "q: policy Statement[0] allows Principal '*' without a condition: the resource is public."
    )


# --- keys ----------------------------------------------------------------------------------------------------


def test_aws_managed_aliases_are_not_customer_managed():
    assert keys.aws_managed("alias/aws/s3")
    assert keys.aws_managed("arn:aws:kms:us-east-1:123456789012:alias/aws/ebs")
    assert not keys.aws_managed("alias/platform-data")
    assert not keys.aws_managed("arn:aws:kms:us-east-1:123456789012:key/0a1b")
    assert keys.customer_managed({"k": UNKNOWN}, "k")  # a computed key ARN is the program's own key
    assert not keys.customer_managed({"k": "alias/aws/s3"}, "k")
    assert not keys.customer_managed({}, "k")
    fs = Res("aws:efs/fileSystem:FileSystem", "fs", {"encrypted": True, "kmsKeyId": "alias/aws/elasticfilesystem"})
    [message] = resource_messages("efs-encrypted-cmk", fs)
    assert "kmsKeyId is 'alias/aws/elasticfilesystem', an AWS-managed key alias" in message


# --- secrets -----------------------------------------------------------------------------------------------


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


GH = "ghp_" + "Zq8xK2mN4pR7sT1vW3yB5dF6hJ9kL0cA2eG4"
# 64 characters of key body and more: gitleaks' private-key rule wants them (a header alone is no key).
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\nKs14IReLcYgADhoXk56ZzXI=\n"


@pytest.mark.parametrize(
    ("value", "what", "layer"),
    [
        (f"export T={GH}", "a GitHub token", "as written"),
        (b64(b64(f"export T={GH}")), "a GitHub token", "base64 > base64"),
        ("AKIA" + "QX7KD2NMP3RT4VW5", "an AWS access key ID", "as written"),
        ("glpat-" + "x7Kq2NmP9rT4vW1yZ3bC", "a GitLab token", "as written"),
        ("sk_live_" + "51Hx9KqL2mN4pR7sT1vW3yB5", "a Stripe key", "as written"),
        ("AIza" + "SyD3x9KqL2mN4pR7sT1vW3yB5dF6hJ9kL0c", "a Google API key", "as written"),
        ("npm_" + "x7Kq2NmP9rT4vW1yZ3bC5dF6hJ9kL0cA2eG4", "an npm token", "as written"),
        (
            f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{KEY_BODY}-----END ENCRYPTED PRIVATE KEY-----",
            "a private key",
            "as written",
        ),
        (
            "echo " + b64(f"-----BEGIN EC PRIVATE KEY-----\n{KEY_BODY}-----END EC PRIVATE KEY-----\n") + " | base64 -d",
            "a private key",
            "embedded base64",
        ),
    ],
)
def test_token_formats_through_layers(value, what, layer):
    found = secrets.tokens(value)
    assert [(f.what, f.layer) for f in found][:1] == [(what, layer)]


def test_gzip_mime_and_cloud_init_are_decoded():
    gz = base64.b64encode(gzip.compress(f"T={GH}".encode(), mtime=0)).decode()
    assert [f.layer for f in secrets.tokens(gz)] == ["base64 > gzip"]
    cc = f"#cloud-config\nwrite_files:\n- path: /etc/a.env\n  encoding: gzip+base64\n  content: {gz}\n"
    assert secrets.tokens(cc)[0].layer == "write_files[0] /etc/a.env"
    mime = (
        'Content-Type: multipart/mixed; boundary="B"\nMIME-Version: 1.0\n\n--B\nContent-Type: text/x-shellscript\n'
        f"Content-Transfer-Encoding: base64\n\n{b64('echo ' + GH)}\n--B--\n"
    )
    assert secrets.tokens(mime)[0].layer == "MIME part 1"


def test_high_entropy_is_only_a_warning():
    [finding] = secrets.scan("DB_PASSWORD=Zx9kQ2mP7vL4nR8sT1wY")
    assert (finding.what, finding.token) == ("a high-entropy value assigned to DB_PASSWORD", False)
    assert secrets.scan("DB_PASSWORD=changemechangeme") == []
    assert secrets.scan("token = fh.read().strip()") == []
    assert secrets.scan("API_KEY=${API_KEY_FROM_SSM}") == []
    assert secrets.entropy("aaaa") == 0.0


def test_plaintext_secrets_in_env_configmaps_and_services():
    dep = {
        "metadata": {"name": "api", "namespace": "ml"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "a:1",
                            "env": [
                                {"name": "STRIPE", "value": "sk_live_" + "51Hx9KqL2mN4pR7sT1vW3yB5"},
                                {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                            ],
                        }
                    ]
                }
            }
        },
    }
    rs = [
        Res("kubernetes:apps/v1:Deployment", "api", dep),
        Res(
            "kubernetes:core/v1:ConfigMap",
            "cm",
            {
                "metadata": {"name": "cm"},
                "data": {"id": f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}-----END RSA PRIVATE KEY-----"},
            },
        ),
        Res("aws:ssm/parameter:Parameter", "plain", {"type": "String", "value": GH}),
        Res("aws:ssm/parameter:Parameter", "secure", {"type": "SecureString", "value": GH}),
        Res("aws:lambda/function:Function", "fn", {"environment": {"variables": {"T": GH}}}),
        Res(
            "aws:ecs/taskDefinition:TaskDefinition",
            "task",
            {"containerDefinitions": json.dumps([{"environment": [{"name": "T", "value": GH}]}])},
        ),
    ]
    assert stack_flagged("no-plaintext-secrets", rs) == {"api", "cm", "plain", "fn", "task"}


# --- the pod-spec finder ------------------------------------------------------------------------------------


def kobj(kind, body):
    return k8s.KObject("urn:x", kind, "ml", "x", body)


def test_finder_shapes():
    step = {"templates": [{"name": "a", "metadata": {"annotations": {"k": "v"}}, "container": {"image": "i:1"}}]}
    [wf] = k8s.pods(kobj("Workflow", {"spec": step}))
    assert (wf.path, wf.spec["containers"], dict(wf.annotations)) == (
        "spec.templates[0]",
        [{"image": "i:1"}],
        {"k": "v"},
    )
    tekton = k8s.pods(kobj("Task", {"spec": {"steps": [{"name": "b", "image": "i:2"}]}}))
    assert [p.spec["containers"][0]["image"] for p in tekton] == ["i:2"]
    spark = {
        "spec": {"image": "s:1", "driver": {"securityContext": {"privileged": True}}, "executor": {"hostNetwork": True}}
    }
    found = k8s.pods(kobj("SparkApplication", spark))
    assert [(p.path, p.spec.get("hostNetwork")) for p in found] == [("spec.driver", None), ("spec.executor", True)]
    # A driver of another kind (the GPU operator's ClusterPolicy) is not a pod.
    assert k8s.pods(kobj("ClusterPolicy", {"spec": {"driver": {"image": "driver", "securityContext": {}}}})) == []


def test_objects_inside_objects():
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ops\nspec:\n  hostPID: true\n  containers: []\n"
    )
    cm = Res(
        "kubernetes:core/v1:ConfigMap",
        "cm",
        {"metadata": {"name": "cm", "namespace": "ops"}, "data": {"p.yaml": manifest, "x": "a: b"}},
    )
    lst = Res(
        "kubernetes:apps/v1:DaemonSetList",
        "dl",
        {"items": [{"metadata": {"name": "d", "namespace": "ops"}, "spec": {}}]},
    )
    [(_, message)] = stack_messages("k8s-pod-security", [cm])
    assert message.startswith("cm: Pod ops/p (from ConfigMap ops/cm data.p.yaml) breaks the baseline")
    assert stack_flagged("k8s-pod-security", [lst]) == set()
    lst.props["items"][0]["spec"] = {"template": {"spec": {"hostNetwork": True, "containers": []}}}
    [(_, message)] = stack_messages("k8s-pod-security", [lst])
    assert message.startswith("dl: DaemonSet ops/d (from DaemonSetList default/dl items[0]) breaks the baseline")
    assert stack_flagged("k8s-pod-security", [cm]) == {"cm"}


def test_apparmor_annotation():
    def dep(profile):
        meta = {"annotations": {"container.apparmor.security.beta.kubernetes.io/main": profile}}
        body = {
            "metadata": {"name": "d"},
            "spec": {"template": {"metadata": meta, "spec": {"containers": [{"name": "main", "image": "a:1"}]}}},
        }
        return Res("kubernetes:apps/v1:Deployment", "d", body)

    assert stack_flagged("k8s-pod-security", [dep("unconfined")]) == {"d"}
    assert stack_flagged("k8s-pod-security", [dep("runtime/default")]) == set()
    assert stack_flagged("k8s-pod-security", [dep("localhost/gpu-profile")]) == set()


def test_image_references():
    assert k8s.image_repository("nginx") == "docker.io/library/nginx"
    assert k8s.image_repository("bitnami/redis:7") == "docker.io/bitnami/redis"
    assert k8s.image_repository("localhost:5000/a/b:1@sha256:" + "a" * 64) == "localhost:5000/a/b"
    assert k8s.image_repository("public.ecr.aws/x/y:1.2") == "public.ecr.aws/x/y"
    assert k8s.image_digest("a/b@sha256:" + "c" * 64) == "sha256:" + "c" * 64
    assert k8s.image_digest("a/b:1") is None


def test_unmatched_exemptions_warn_for_namespaces_the_plan_uses():
    ds = {
        "metadata": {"name": "shipper", "namespace": "logging"},
        "spec": {"template": {"spec": {"hostPID": True, "containers": [{"name": "c", "image": "evil/miner:1"}]}}},
    }
    rs = [Res("kubernetes:apps/v1:DaemonSet", "shipper", ds)]
    entries = [
        {"namespace": "logging", "name": "shipper", "images": ["public.ecr.aws/x/fluent-bit"], "reason": "logs"},
        {"namespace": "elsewhere", "name": "never", "images": ["a"], "reason": "another program's daemon"},
    ]
    assert stack_flagged("k8s-pod-security", rs, {"exemptions": entries}) == {"shipper"}
    [(name, message)] = stack_messages("k8s-pod-security-exemptions", rs)
    assert name == "shipper"
    assert "exemption logging/shipper (images ['public.ecr.aws/x/fluent-bit']) is taken by a workload" in message
