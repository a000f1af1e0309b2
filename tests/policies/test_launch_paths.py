"""IMDS, public-IP and EBS rules on the launch paths beyond templates and instances: launch configurations,
spot instance requests and Spot Fleet launch specifications."""

import pytest
from pulumi_policy.proxy import UnknownValueError

from gpucloud.guard.harness import Res, flagged, remediate, resource_messages

LC = "aws:ec2/launchConfiguration:LaunchConfiguration"
SIR = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
SFR = "aws:ec2/spotFleetRequest:SpotFleetRequest"


def test_imdsv2_on_launch_configurations_and_spot_paths():
    resources = [
        Res(LC, "lc-v1", {"metadataOptions": {"httpTokens": "optional"}}),
        Res(LC, "lc-v2", {"metadataOptions": {"httpTokens": "required"}}),
        Res(SIR, "sir-unset", {}),
        Res(SFR, "sfr-specs", {"launchSpecifications": [{"instanceType": "g6e.xlarge"}]}),
        Res(SFR, "sfr-templates", {"launchTemplateConfigs": [{"overrides": []}]}),
    ]
    assert flagged("lt-imdsv2", resources) == {"lc-v1", "sir-unset", "sfr-specs"}
    assert resource_messages("lt-imdsv2", resources[3]) == [
        "sfr-specs: launchSpecifications cannot require IMDSv2 (they have no metadata options), so the instances "
        "accept IMDSv1. Fix: use launchTemplateConfigs with a template that sets httpTokens 'required'."
    ]


def test_public_ip_on_launch_configurations_and_spot_paths():
    resources = [
        Res(LC, "lc-public", {"associatePublicIpAddress": True}),
        Res(LC, "lc-private", {"associatePublicIpAddress": False}),
        Res(SIR, "sir-public", {"associatePublicIpAddress": "true"}),
        Res(SFR, "sfr-public", {"launchSpecifications": [{}, {"associatePublicIpAddress": True}]}),
        Res(SFR, "sfr-private", {"launchSpecifications": [{"associatePublicIpAddress": False}]}),
    ]
    assert flagged("lt-no-public-ip", resources) == {"lc-public", "sir-public", "sfr-public"}
    assert resource_messages("lt-no-public-ip", resources[3]) == [
        "sfr-public: launchSpecifications[1].associatePublicIpAddress is true. Fix: use private subnets."
    ]


def test_ebs_encryption_on_launch_configurations_and_spot_paths():
    key = {"encrypted": True, "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/k"}
    resources = [
        Res(LC, "lc-plain", {"rootBlockDevice": {"encrypted": False}}),
        Res(LC, "lc-encrypted", {"rootBlockDevice": {"encrypted": True}}),
        Res(SIR, "sir-cmk", {"rootBlockDevice": key}),
        Res(SIR, "sir-data-plain", {"rootBlockDevice": key, "ebsBlockDevices": [{"encrypted": False}]}),
        Res(SFR, "sfr-no-root", {"launchSpecifications": [{}]}),
        Res(SFR, "sfr-cmk", {"launchSpecifications": [{"rootBlockDevices": [key], "ebsBlockDevices": [key]}]}),
        Res(SFR, "sfr-data-plain", {"launchSpecifications": [{"rootBlockDevices": [key], "ebsBlockDevices": [{}]}]}),
    ]
    assert flagged("lt-ebs-encrypted", resources) == {
        "lc-plain",
        "lc-encrypted",
        "sir-data-plain",
        "sfr-no-root",
        "sfr-data-plain",
    }
    assert resource_messages("lt-ebs-encrypted", resources[1]) == [
        "lc-encrypted: rootBlockDevice.kmsKeyId cannot be set on a launch configuration, so the volume uses the "
        "AWS-managed key. Fix: move to a launch template with kms_key_id."
    ]
    assert resource_messages("lt-ebs-encrypted", resources[1], {"requireKmsKey": False}) == []
    assert resource_messages("lt-ebs-encrypted", resources[4])[0].startswith(
        "sfr-no-root: launchSpecifications[0].rootBlockDevices.encrypted is unset"
    )


# ---- Karpenter EC2NodeClass v1 and v1beta1 (settings from gpucloud.fleet.settings) -----------------------------

NC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NC_BETA = "kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def nodeclass(type_: str, name: str, **spec: object) -> Res:
    return Res(type_, name, {"apiVersion": type_.split(":")[1], "kind": "EC2NodeClass", "spec": spec})


def test_imdsv2_on_ec2nodeclasses_with_karpenters_defaults():
    resources = [
        nodeclass(NC, "v1-unset"),
        nodeclass(NC, "v1-partial", metadataOptions={"httpPutResponseHopLimit": 1}),
        nodeclass(NC, "v1-optional", metadataOptions={"httpTokens": "optional"}),
        nodeclass(NC, "v1-off", metadataOptions={"httpTokens": "optional", "httpEndpoint": "disabled"}),
        nodeclass(NC_BETA, "beta-unset"),
        nodeclass(NC_BETA, "beta-optional", metadataOptions={"httpTokens": "optional"}),
    ]
    assert flagged("lt-imdsv2", resources) == {"v1-optional", "beta-optional"}
    assert resource_messages("lt-imdsv2", resources[2]) == [
        "v1-optional: spec.metadataOptions.httpTokens is optional: IMDSv1 lets any SSRF read the node role's "
        "credentials. Fix: set metadata_options={'http_tokens': 'required', 'http_put_response_hop_limit': 1}."
    ]
    unknown_tokens = nodeclass(NC, "v1-unknown", metadataOptions={"httpTokens": UNKNOWN})
    with pytest.raises(UnknownValueError):
        resource_messages("lt-imdsv2", unknown_tokens)
    fixed = remediate("lt-imdsv2", resources[2])
    assert fixed["spec"]["metadataOptions"] == {"httpTokens": "required", "httpEndpoint": "enabled"}


def test_hop_limit_on_ec2nodeclasses_and_stated_instance_limits():
    resources = [
        nodeclass(NC, "v1-unset"),
        nodeclass(NC, "v1-two", metadataOptions={"httpPutResponseHopLimit": 2}),
        nodeclass(NC_BETA, "beta-unset"),
        nodeclass(NC_BETA, "beta-one", metadataOptions={"httpPutResponseHopLimit": 1}),
        Res(SIR, "sir-unset", {}),
        Res(SIR, "sir-two", {"metadataOptions": {"httpPutResponseHopLimit": 2.0}}),
        Res(LC, "lc-one", {"metadataOptions": {"httpPutResponseHopLimit": 1.0}}),
        Res("aws:ec2/instance:Instance", "i-three", {"metadataOptions": {"httpPutResponseHopLimit": 3.0}}),
    ]
    assert flagged("lt-imds-hop-limit", resources) == {"v1-two", "beta-unset", "sir-two", "i-three"}
    assert resource_messages("lt-imds-hop-limit", resources[2]) == [
        "beta-unset: spec.metadataOptions.httpPutResponseHopLimit is unset (Karpenter v1beta1 EC2NodeClass "
        "default: 2), above 1: pods can read the node role's credentials. Fix: set http_put_response_hop_limit=1 "
        "and give pods Pod Identity / IRSA roles, or list this template under exceptions."
    ]
    assert flagged("lt-imds-hop-limit", resources, {"exceptions": ["v1-two", "beta-unset"]}) == {"sir-two", "i-three"}


def test_ebs_encryption_on_ec2nodeclasses():
    key = "arn:aws:kms:us-east-1:123456789012:key/k"
    resources = [
        nodeclass(NC, "default-al2023", amiSelectorTerms=[{"alias": "al2023@latest"}]),
        nodeclass(
            NC, "cmk", blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "kmsKeyID": key}}]
        ),
        nodeclass(NC, "plain", blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": False}}]),
        nodeclass(NC_BETA, "aws-key", blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": True}}]),
    ]
    assert flagged("lt-ebs-encrypted", resources) == {"default-al2023", "plain", "aws-key"}
    # Karpenter's default volume is encrypted: without the key requirement it passes.
    assert flagged("lt-ebs-encrypted", resources, {"requireKmsKey": False}) == {"plain"}
    assert resource_messages("lt-ebs-encrypted", resources[3]) == [
        "aws-key: spec.blockDeviceMappings[0].ebs.kmsKeyID is not set: the volume uses the AWS-managed key. Fix: "
        "set kms_key_id to the platform's KMS key."
    ]
    # The Custom family has no default mapping: whether the AMI's volumes are encrypted is not known.
    custom = nodeclass(NC, "custom", amiFamily="Custom", amiSelectorTerms=[{"id": "ami-1"}])
    with pytest.raises(UnknownValueError):
        resource_messages("lt-ebs-encrypted", custom, {"requireKmsKey": False})


def test_public_ip_on_ec2nodeclasses():
    resources = [
        nodeclass(NC, "v1-public", associatePublicIPAddress=True),
        nodeclass(NC, "v1-private", associatePublicIPAddress=False),
        nodeclass(NC_BETA, "beta-public", associatePublicIPAddress=True),
        nodeclass(NC_BETA, "beta-unset"),
    ]
    assert flagged("lt-no-public-ip", resources) == {"v1-public", "beta-public"}
    assert resource_messages("lt-no-public-ip", resources[0]) == [
        "v1-public: spec.associatePublicIPAddress is true: nodes get a public IP. Fix: set it to false and select "
        "private subnets."
    ]
    with pytest.raises(UnknownValueError):
        resource_messages("lt-no-public-ip", nodeclass(NC, "unknown", associatePublicIPAddress=UNKNOWN))


LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
NODEADM = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: application/node.eks.aws\n\n'
    "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n--B--\n"
)


def test_imdsv2_unset_follows_the_ami_default_where_the_plan_shows_it() -> None:
    import base64

    from gpucloud.plan.model import UNKNOWN

    resources = [
        # nodeadm runs only on AL2023, whose AMIs require IMDSv2 by default: compliant.
        Res(LT, "al2023-lt", {"imageId": "ami-0123", "userData": base64.b64encode(NODEADM.encode()).decode()}),
        # A literal AMI and no nodeadm: the AMI is not an AL2023 one as far as the plan shows; unset is optional.
        Res(LT, "literal-ami", {"imageId": "ami-0123"}),
        Res(INSTANCE, "literal-instance", {"ami": "ami-0123"}),
        # Stated values decide whatever the AMI.
        Res(LT, "al2023-optional", {"userData": NODEADM, "metadataOptions": {"httpTokens": "optional"}}),
    ]
    assert flagged("lt-imdsv2", resources) == {"literal-ami", "literal-instance", "al2023-optional"}
    # The AMI computed at preview (an SSM or get_ami lookup) decides the default: undecided, naming the input.
    for r in (Res(LT, "computed-lt", {"imageId": UNKNOWN}), Res(INSTANCE, "computed-instance", {"ami": UNKNOWN})):
        with pytest.raises(UnknownValueError) as caught:
            resource_messages("lt-imdsv2", r)
        assert "the AMI's default decides" in caught.value.message
    # ... unless the nodeadm user data already says the AMI is AL2023.
    assert flagged("lt-imdsv2", [Res(LT, "computed-al2023", {"imageId": UNKNOWN, "userData": NODEADM})]) == set()
