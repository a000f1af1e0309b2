"""Security guardrails: passing and failing fixtures with the exact resources flagged, implicit defaults,
string booleans and unknown values."""

import base64
import gzip
import json

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import UNKNOWN, Res, flagged, remediate, resource_messages, stack_flagged, stack_messages

CLUSTER = "aws:eks/cluster:Cluster"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
BUCKET = "aws:s3/bucket:Bucket"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
BPOL = "aws:s3/bucketPolicy:BucketPolicy"
FLAGS = {"blockPublicAcls": True, "blockPublicPolicy": True, "ignorePublicAcls": True, "restrictPublicBuckets": True}


def test_eks_endpoint_private():
    clusters = [
        Res(CLUSTER, "private", {"vpcConfig": {"endpointPrivateAccess": True, "endpointPublicAccess": False}}),
        Res(CLUSTER, "implicit-public", {"vpcConfig": {"endpointPrivateAccess": True}}),
        Res(
            CLUSTER,
            "world",
            {"vpcConfig": {"endpointPrivateAccess": True, "endpointPublicAccess": True, "publicAccessCidrs": ["::/0"]}},
        ),
        Res(
            CLUSTER,
            "restricted",
            {
                "vpcConfig": {
                    "endpointPrivateAccess": True,
                    "endpointPublicAccess": True,
                    "publicAccessCidrs": ["203.0.113.0/24"],
                }
            },
        ),
        Res(CLUSTER, "no-vpc-config", {}),
    ]
    assert flagged("eks-endpoint-private", clusters) == {"implicit-public", "world", "restricted", "no-vpc-config"}
    dev = {"allowRestrictedPublicAccess": True}
    assert flagged("eks-endpoint-private", clusters, dev) == {"implicit-public", "world", "no-vpc-config"}
    with pytest.raises(UnknownValueError):
        resource_messages("eks-endpoint-private", Res(CLUSTER, "u", {"vpcConfig": UNKNOWN}))


def test_eks_secrets_cmk_presence_is_enough_for_a_computed_key():
    ok = {"encryptionConfig": {"resources": ["secrets"], "provider": {"keyArn": UNKNOWN}}}
    clusters = [
        Res(CLUSTER, "cmk", ok),
        Res(CLUSTER, "no-key", {"encryptionConfig": {"resources": ["secrets"], "provider": {}}}),
        Res(CLUSTER, "missing", {}),
    ]
    assert flagged("eks-secrets-cmk", clusters) == {"no-key", "missing"}
    with pytest.raises(UnknownValueError):
        resource_messages("eks-secrets-cmk", Res(CLUSTER, "u", {"encryptionConfig": UNKNOWN}))


def test_eks_control_plane_logging():
    clusters = [
        Res(CLUSTER, "all", {"enabledClusterLogTypes": ["api", "audit", "authenticator"]}),
        Res(CLUSTER, "api-only", {"enabledClusterLogTypes": ["api"]}),
        Res(CLUSTER, "unset", {}),
    ]
    assert flagged("eks-control-plane-logging", clusters) == {"api-only", "unset"}
    with pytest.raises(UnknownValueError):
        resource_messages("eks-control-plane-logging", Res(CLUSTER, "u", {"enabledClusterLogTypes": [UNKNOWN]}))


def test_imdsv2_on_templates_and_instances():
    resources = [
        Res(LT, "required", {"metadataOptions": {"httpTokens": "required"}}),
        Res(LT, "disabled", {"metadataOptions": {"httpEndpoint": "disabled"}}),
        Res(LT, "optional", {"metadataOptions": {"httpTokens": "optional"}}),
        Res(LT, "missing-block", {}),
        Res(INSTANCE, "instance-v1", {"instanceType": "m7i.large"}),
    ]
    assert flagged("lt-imdsv2", resources) == {"optional", "missing-block", "instance-v1"}
    with pytest.raises(UnknownValueError):
        resource_messages("lt-imdsv2", Res(LT, "u", {"metadataOptions": {"httpTokens": UNKNOWN}}))


def test_imdsv2_remediation_forces_required_tokens_and_keeps_the_rest():
    fixed = remediate(
        "lt-imdsv2", Res(LT, "lt", {"metadataOptions": {"httpPutResponseHopLimit": 1.0}, "instanceType": "g6e.xlarge"})
    )
    assert fixed == {
        "instanceType": "g6e.xlarge",
        "metadataOptions": {"httpPutResponseHopLimit": 1.0, "httpTokens": "required", "httpEndpoint": "enabled"},
    }
    assert remediate("lt-imdsv2", Res(LT, "ok", {"metadataOptions": {"httpTokens": "required"}})) is None


def test_hop_limit_counts_unset_as_two_and_honours_exceptions():
    resources = [
        Res(LT, "one", {"metadataOptions": {"httpPutResponseHopLimit": 1.0}}),
        Res(LT, "two", {"metadataOptions": {"httpPutResponseHopLimit": 2.0}}),
        Res(LT, "unset", {"metadataOptions": {"httpTokens": "required"}}),
    ]
    assert flagged("lt-imds-hop-limit", resources) == {"two", "unset"}
    assert flagged("lt-imds-hop-limit", resources, {"exceptions": ["two"]}) == {"unset"}
    with pytest.raises(UnknownValueError):
        resource_messages("lt-imds-hop-limit", Res(LT, "u", {"metadataOptions": {"httpPutResponseHopLimit": UNKNOWN}}))


def test_ebs_encryption_normalises_string_booleans():
    def lt(name, ebs):
        return Res(LT, name, {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": ebs}]})

    resources = [
        lt("encrypted", {"encrypted": "true", "kmsKeyId": UNKNOWN}),
        lt("string-false", {"encrypted": "false", "kmsKeyId": "arn:aws:kms:us-east-1:1:key/x"}),
        lt("unset", {"volumeSize": 100.0}),
        lt("no-cmk", {"encrypted": "true"}),
        Res(LT, "no-mappings", {}),
        Res(INSTANCE, "instance-root-unencrypted", {"rootBlockDevice": {"encrypted": False}}),
        Res("aws:ebs/volume:Volume", "volume-ok", {"encrypted": True, "kmsKeyId": "k"}),
    ]
    assert flagged("lt-ebs-encrypted", resources) == {"string-false", "unset", "no-cmk", "instance-root-unencrypted"}
    assert flagged("lt-ebs-encrypted", resources, {"requireKmsKey": False}) == {
        "string-false",
        "unset",
        "instance-root-unencrypted",
    }
    with pytest.raises(UnknownValueError):
        resource_messages("lt-ebs-encrypted", lt("u", {"encrypted": UNKNOWN}))


def test_no_public_ip_string_booleans():
    resources = [
        Res(LT, "string-true", {"networkInterfaces": [{"associatePublicIpAddress": "true"}]}),
        Res(LT, "string-false", {"networkInterfaces": [{"associatePublicIpAddress": "false"}]}),
        Res(LT, "unset", {"networkInterfaces": [{"deviceIndex": 0.0}]}),
        Res(INSTANCE, "instance-public", {"associatePublicIpAddress": True}),
    ]
    assert flagged("lt-no-public-ip", resources) == {"string-true", "instance-public"}
    with pytest.raises(UnknownValueError):
        resource_messages(
            "lt-no-public-ip", Res(LT, "u", {"networkInterfaces": [{"associatePublicIpAddress": UNKNOWN}]})
        )


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEAn6/O8li+SX4m98LLYt/PKSzEmQ++ZBD7Loh9P13f4yQ92EF3\n"
    "yxR5MsXFu9PRsrYQA7/4UTPHiC4y2sAVCBg4C2yyBpUEtMQjyCESi6Y=\n-----END RSA PRIVATE KEY-----\n"
)


def test_no_secrets_in_user_data():
    def b64(s):
        return base64.b64encode(s.encode()).decode()

    gh = "ghp_" + "Zq8xK2mN4pR7sT1vW3yB5dF6hJ9kL0cA2eG4"
    cloud_config = (
        "#cloud-config\nwrite_files:\n- path: /etc/app.env\n  encoding: gz+b64\n  content: "
        + base64.b64encode(gzip.compress(f"TOKEN={gh}".encode())).decode()
        + "\n"
    )
    resources = [
        Res(LT, "clean", {"userData": b64("#!/bin/bash\necho hello\n")}),
        # gitleaks v8.30.1 aws.go's sample key ID; AWS's documented placeholder is allowlisted, as gitleaks does.
        Res(LT, "key", {"userData": b64("export AWS_ACCESS_KEY_ID=AKIALALEMEL33243OLIB\n")}),
        Res(LT, "example-key", {"userData": b64("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n")}),
        # privatekey.go's sample: a header, 64+ characters of body and the closing line; a header alone is no key.
        Res(LT, "pem", {"userData": b64(PEM)}),
        Res(LT, "pem-header-only", {"userData": b64("-----BEGIN RSA PRIVATE KEY-----\nabc\n")}),
        # Encoded twice, and gzip inside a cloud-init write_files entry: both decoded before matching.
        Res(LT, "twice", {"userData": b64(b64(f"export GH={gh}\n"))}),
        Res(LT, "cloud-init", {"userData": b64(cloud_config)}),
        # A high-entropy password alone is a warning (secrets-high-entropy), not this error.
        Res(LT, "entropy-only", {"userData": b64("DB_PASSWORD=Zx9kQ2mP7vL4nR8sT1wY\n")}),
        Res(
            INSTANCE, "plain-instance", {"userData": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ4kR8mN2p"}
        ),
        Res(LT, "no-user-data", {}),
    ]
    assert stack_flagged("lt-no-secrets-in-userdata", resources) == {
        "key",
        "pem",
        "twice",
        "cloud-init",
        "plain-instance",
    }
    # The documented placeholder is no token, but a high-entropy value of ACCESS_KEY_ID: only the advisory says so.
    assert stack_flagged("secrets-high-entropy", resources) == {"entropy-only", "example-key"}
    with pytest.raises(UnknownValueError):
        stack_flagged("lt-no-secrets-in-userdata", [Res(LT, "computed-user-data", {"userData": UNKNOWN})])


def test_world_ingress_passes_self_rules_and_flags_all_variants():
    resources = [
        Res(SG, "efa-self", {"ingress": [{"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "self": True}]}),
        Res(
            SG,
            "ssh-world",
            {"ingress": [{"protocol": "tcp", "fromPort": 22.0, "toPort": 22.0, "cidrBlocks": ["0.0.0.0/0"]}]},
        ),
        Res(
            SG,
            "vpc-only",
            {"ingress": [{"protocol": "tcp", "fromPort": 443.0, "toPort": 443.0, "cidrBlocks": ["10.0.0.0/16"]}]},
        ),
        Res(
            SG,
            "lb-https",
            {
                "tags": {"gpucloud.io/load-balancer": "true"},
                "ingress": [{"protocol": "tcp", "fromPort": 443.0, "toPort": 443.0, "ipv6CidrBlocks": ["::/0"]}],
            },
        ),
        Res(
            SG_RULE,
            "rule-world",
            {"type": "ingress", "protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "cidrBlocks": ["0.0.0.0/0"]},
        ),
        Res(SG_RULE, "egress-world", {"type": "egress", "protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}),
        Res(SG_RULE, "rule-self", {"type": "ingress", "protocol": "-1", "self": True}),
        Res(INGRESS, "v6-world", {"cidrIpv6": "::/0", "ipProtocol": "tcp", "fromPort": 22.0, "toPort": 22.0}),
        Res(INGRESS, "prefix-list", {"prefixListId": "pl-123", "ipProtocol": "tcp"}),
    ]
    assert stack_flagged("sg-no-world-ingress", resources) == {"ssh-world", "rule-world", "v6-world"}
    [(_name, message)] = [m for m in stack_messages("sg-no-world-ingress", resources) if m[0] == "rule-world"]
    assert message.startswith("rule-world: CRITICAL: ingress from the internet (0.0.0.0/0) on all protocols all ports")
    with pytest.raises(UnknownValueError):
        stack_messages("sg-no-world-ingress", [Res(SG, "u", {"ingress": [{"cidrBlocks": UNKNOWN}]})])


def test_fsx_persistent_cmk():
    fsx = "aws:fsx/lustreFileSystem:LustreFileSystem"
    resources = [
        Res(fsx, "persistent-cmk", {"deploymentType": "PERSISTENT_2", "kmsKeyId": UNKNOWN}),
        Res(fsx, "persistent-aws-key", {"deploymentType": "PERSISTENT_2"}),
        Res(fsx, "scratch", {"deploymentType": "SCRATCH_2"}),
        Res(fsx, "default-type", {}),
    ]
    assert flagged("fsx-persistent-cmk", resources) == {"persistent-aws-key"}
    with pytest.raises(UnknownValueError):
        resource_messages("fsx-persistent-cmk", Res(fsx, "u", {"deploymentType": UNKNOWN}))


def test_iam_no_admin_star():
    def doc(action, resource="*"):
        return json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": resource}]}
        )

    resources = [
        Res("aws:iam/policy:Policy", "star-star", {"policy": doc("*:*")}),
        Res("aws:iam/rolePolicy:RolePolicy", "star-list", {"policy": doc(["s3:GetObject", "*"])}),
        Res("aws:iam/policy:Policy", "scoped", {"policy": doc("s3:GetObject", "arn:aws:s3:::b/*")}),
        Res("aws:iam/policy:Policy", "star-on-one-bucket", {"policy": doc("*", "arn:aws:s3:::b")}),
        Res(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "admin-attach",
            {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"},
        ),
        Res("aws:iam/role:Role", "role-inline", {"inlinePolicies": [{"name": "x", "policy": doc("*")}]}),
        Res("aws:iam/policy:Policy", "not-json", {"policy": "{"}),
    ]
    assert flagged("iam-no-admin-star", resources) == {"star-star", "star-list", "admin-attach", "role-inline"}
    with pytest.raises(UnknownValueError):
        resource_messages("iam-no-admin-star", Res("aws:iam/policy:Policy", "u", {"policy": UNKNOWN}))


def _bucket_set(name, *, pab=FLAGS, sse=True, tls=True):
    out = [Res(BUCKET, name, {"bucket": f"{name}-bucket"})]
    if pab is not None:
        out.append(Res(PAB, f"{name}-pab", {"bucket": UNKNOWN, **pab}, deps={"bucket": [name]}))
    if sse:
        rule = {
            "applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": UNKNOWN},
            "bucketKeyEnabled": True,
        }
        out.append(Res(SSE, f"{name}-sse", {"bucket": UNKNOWN, "rules": [rule]}, deps={"bucket": [name]}))
    if tls:
        policy = {
            "Statement": [
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    # The objects as well as the bucket: a deny of the bucket ARN alone does not count.
                    "Resource": [f"arn:aws:s3:::{name}-bucket", f"arn:aws:s3:::{name}-bucket/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ]
        }
        out.append(
            Res(BPOL, f"{name}-policy", {"bucket": UNKNOWN, "policy": json.dumps(policy)}, deps={"bucket": [name]})
        )
    return out


def test_s3_public_access_block_matched_by_urn():
    resources = [
        *_bucket_set("good"),
        *_bucket_set("no-pab", pab=None),
        *_bucket_set("one-flag-off", pab={**FLAGS, "restrictPublicBuckets": False}),
        *_bucket_set("flag-missing", pab={k: v for k, v in FLAGS.items() if k != "ignorePublicAcls"}),
        # Matched by the literal bucket name when the child names it directly.
        Res(BUCKET, "literal", {"bucket": "literal-bucket"}),
        Res(PAB, "literal-pab", {"bucket": "literal-bucket", **FLAGS}),
    ]
    # A bucket without a block is blocked by S3's default for new buckets: only the explicit-block policy says so.
    assert stack_flagged("s3-public-access-blocked", resources) == {"one-flag-off", "flag-missing"}
    assert stack_flagged("s3-public-access-block-explicit", resources) == {"no-pab"}
    with pytest.raises(UnknownValueError):
        stack_flagged("s3-public-access-blocked", _bucket_set("u", pab={**FLAGS, "blockPublicAcls": UNKNOWN}))


def test_s3_sse_kms_and_tls_only():
    resources = [*_bucket_set("good"), *_bucket_set("no-sse", sse=False), *_bucket_set("no-tls", tls=False)]
    assert stack_flagged("s3-sse-kms", resources) == {"no-sse"}
    assert stack_flagged("s3-tls-only", resources) == {"no-tls"}
    computed = [Res(BUCKET, "b", {}), Res(BPOL, "p", {"bucket": UNKNOWN, "policy": UNKNOWN}, deps={"bucket": ["b"]})]
    with pytest.raises(UnknownValueError):
        stack_flagged("s3-tls-only", computed)


def test_s3_sse_kms_holds_access_log_targets_to_sse_s3():
    logging = "aws:s3/bucketLogging:BucketLogging"
    sse_s3 = {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}
    resources = [
        *_bucket_set("data"),
        # S3 log delivery cannot write SSE-KMS objects, so a log bucket with SSE-S3 passes ...
        Res(BUCKET, "logs", {"bucket": "logs-bucket"}),
        Res(SSE, "logs-sse", {"bucket": UNKNOWN, "rules": [sse_s3]}, deps={"bucket": ["logs"]}),
        Res(
            logging,
            "data-logging",
            {"bucket": UNKNOWN, "targetBucket": UNKNOWN},
            deps={"bucket": ["data"], "targetBucket": ["logs"]},
        ),
        # ... and one without default encryption fails, matched by the literal target name.
        Res(BUCKET, "bare-logs", {"bucket": "bare-logs-bucket"}),
        Res(
            logging, "other-logging", {"bucket": UNKNOWN, "targetBucket": "bare-logs-bucket"}, deps={"bucket": ["data"]}
        ),
    ]
    assert stack_flagged("s3-sse-kms", resources) == {"bare-logs"}
