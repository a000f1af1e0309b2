"""IMDS, public-IP and EBS rules on the launch paths beyond templates and instances: launch configurations,
spot instance requests and Spot Fleet launch specifications."""

from gpucloud.guard.harness import Res, flagged, resource_messages

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
