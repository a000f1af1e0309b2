"""gpucloud.fleet.settings: the node settings of each launch path, Karpenter's documented defaults applied."""

from __future__ import annotations

import base64

from gpucloud.fleet import types as T
from gpucloud.fleet.settings import (
    KARPENTER_V1_DEFAULT,
    KARPENTER_V1BETA1_DEFAULT,
    KARPENTER_VOLUME_DEFAULT,
    NodeSettings,
    Volume,
    node_settings,
)
from gpucloud.fleet.values import UNKNOWN


def settings(type_: str, inputs: dict[str, object]) -> NodeSettings:
    s = node_settings(type_, inputs)
    assert s is not None
    return s


def test_launch_template_settings() -> None:
    s = settings(
        T.LAUNCH_TEMPLATE,
        {
            "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled", "httpPutResponseHopLimit": 2.0},
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": UNKNOWN}},
                {"deviceName": "/dev/sdb", "virtualName": "ephemeral0"},
                {"deviceName": "/dev/sdc", "ebs": UNKNOWN},
            ],
            "networkInterfaces": [{"associatePublicIpAddress": "false"}, {"associatePublicIpAddress": UNKNOWN}],
            "userData": base64.b64encode(b"#!/bin/bash\necho hi").decode(),
        },
    )
    assert (s.metadata_path, s.has_metadata_options) == ("metadataOptions", True)
    assert (s.tokens, s.endpoint, s.hop_limit, s.hop_limit_raw, s.metadata_default) == (
        "required",
        "enabled",
        2,
        2.0,
        "",
    )
    # An instance-store mapping has no EBS settings; an unknown ebs block is undecided.
    assert s.volumes == (
        Volume("blockDeviceMappings[0].ebs", True, "true", kms_key=True),
        Volume("blockDeviceMappings[2].ebs", None, unknown=True),
    )
    assert s.public_ips == (("networkInterfaces[0].associatePublicIpAddress", False),)
    assert s.unknown == {"public_ip": "networkInterfaces[1].associatePublicIpAddress"}
    assert (s.user_data, s.user_data_known) == ("#!/bin/bash\necho hi", True)


def test_unset_and_unknown_metadata_on_a_template() -> None:
    s = settings(T.LAUNCH_TEMPLATE, {})
    assert (s.tokens, s.endpoint, s.hop_limit, s.hop_limit_raw, s.volumes, s.public_ips) == (
        None,
        None,
        None,
        None,
        (),
        (),
    )
    assert (s.user_data, s.user_data_known, s.unknown) == (None, True, {})
    u = settings(
        T.LAUNCH_TEMPLATE,
        {
            "metadataOptions": {"httpTokens": UNKNOWN, "httpEndpoint": UNKNOWN, "httpPutResponseHopLimit": UNKNOWN},
            "userData": UNKNOWN,
        },
    )
    assert (u.tokens, u.endpoint, u.hop_limit) == (None, None, None)
    assert u.unknown == {
        "tokens": "metadataOptions.httpTokens",
        "endpoint": "metadataOptions.httpEndpoint",
        "hop_limit": "metadataOptions.httpPutResponseHopLimit",
        "user_data": "userData",
    }
    assert (u.user_data, u.user_data_known) == (None, False)


def test_instance_spot_request_and_launch_configuration_settings() -> None:
    for type_ in (T.INSTANCE, T.SPOT_INSTANCE_REQUEST, T.LAUNCH_CONFIGURATION):
        s = settings(
            type_,
            {
                "metadataOptions": {"httpTokens": "optional", "httpPutResponseHopLimit": 1.0},
                "ebsBlockDevices": [{"encrypted": False}, {"encrypted": True, "kmsKeyId": ""}],
                "associatePublicIpAddress": True,
                "userDataBase64": base64.b64encode(b"echo b64").decode(),
            },
        )
        # The root volume is there even when unset (the AMI's).
        assert s.volumes == (
            Volume("rootBlockDevice", None),
            Volume("ebsBlockDevices[0]", False, False),
            Volume("ebsBlockDevices[1]", True, True),
        ), type_
        assert (s.tokens, s.hop_limit, s.public_ips) == ("optional", 1, (("associatePublicIpAddress", True),))
        assert s.user_data == "echo b64"
    plain = settings(T.INSTANCE, {"userData": "echo plain", "rootBlockDevice": {"encrypted": True, "kmsKeyId": "k"}})
    assert plain.user_data == "echo plain" and plain.volumes == (Volume("rootBlockDevice", True, True, kms_key=True),)
    unknown = settings(T.INSTANCE, {"associatePublicIpAddress": UNKNOWN, "userDataBase64": UNKNOWN})
    assert unknown.unknown == {"public_ip": "associatePublicIpAddress", "user_data": "userDataBase64"}


def test_spot_fleet_launch_specifications() -> None:
    s = settings(
        T.SPOT_FLEET_REQUEST,
        {
            "launchSpecifications": [
                {
                    "rootBlockDevices": [{"encrypted": True, "kmsKeyId": "k"}],
                    "ebsBlockDevices": [{"encrypted": False}],
                    "associatePublicIpAddress": False,
                    "userData": "first",
                },
                {"associatePublicIpAddress": True, "userData": "second"},
            ]
        },
    )
    assert (s.metadata_path, s.has_metadata_options, s.tokens) == ("launchSpecifications", False, None)
    assert s.volumes == (
        Volume("launchSpecifications[0].rootBlockDevices[0]", True, True, kms_key=True),
        Volume("launchSpecifications[0].ebsBlockDevices[0]", False, False),
        Volume("launchSpecifications[1].rootBlockDevices", None),
    )
    assert s.public_ips == (
        ("launchSpecifications[0].associatePublicIpAddress", False),
        ("launchSpecifications[1].associatePublicIpAddress", True),
    )
    assert s.user_data == "first"
    templates = settings(T.SPOT_FLEET_REQUEST, {"launchTemplateConfigs": [{}]})
    assert (templates.has_metadata_options, templates.volumes, templates.user_data) == (True, (), None)


def test_ec2nodeclass_v1_defaults() -> None:
    s = settings(T.EC2_NODE_CLASS, {"spec": {"amiSelectorTerms": [{"alias": "AL2023@latest"}]}})
    assert (s.metadata_path, s.tokens, s.endpoint, s.hop_limit, s.hop_limit_raw, s.metadata_default) == (
        "spec.metadataOptions",
        "required",
        "enabled",
        1,
        None,
        KARPENTER_V1_DEFAULT,
    )
    assert s.volumes == (Volume("spec.blockDeviceMappings", True, default=KARPENTER_VOLUME_DEFAULT),)
    assert (s.public_ips, s.user_data, s.unknown) == ((), None, {})


def test_ec2nodeclass_v1beta1_defaults_field_by_field() -> None:
    partial = settings(
        T.EC2_NODE_CLASS_V1BETA1,
        {"spec": {"amiFamily": "Bottlerocket", "metadataOptions": {"httpTokens": "optional"}}},
    )
    assert (partial.tokens, partial.hop_limit, partial.metadata_default) == ("optional", 2, KARPENTER_V1BETA1_DEFAULT)
    assert partial.volumes[0].encrypted is True
    stated = settings(
        T.EC2_NODE_CLASS_V1BETA1,
        {
            "spec": {
                "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1, "httpEndpoint": "disabled"}
            }
        },
    )
    assert (stated.tokens, stated.endpoint, stated.hop_limit, stated.metadata_default) == (
        "required",
        "disabled",
        1,
        "",
    )
    # No AMI family known: Karpenter's default mapping cannot be told, so encryption is not known.
    assert stated.volumes == (Volume("spec.blockDeviceMappings", None, default=KARPENTER_VOLUME_DEFAULT),)


def test_ec2nodeclass_stated_volumes_public_ip_user_data_and_unknowns() -> None:
    s = settings(
        T.EC2_NODE_CLASS,
        {
            "spec": {
                "amiFamily": "Custom",
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "kmsKeyID": "arn:k"}},
                    {"deviceName": "/dev/xvdb", "ebs": {"encrypted": False, "kmsKeyId": "not the v1 spelling"}},
                ],
                "associatePublicIPAddress": True,
                "userData": "echo plain",
                "metadataOptions": {"httpTokens": UNKNOWN, "httpPutResponseHopLimit": UNKNOWN},
            }
        },
    )
    assert s.volumes == (
        Volume("spec.blockDeviceMappings[0].ebs", True, True, kms_key=True),
        Volume("spec.blockDeviceMappings[1].ebs", False, False),
    )
    assert (s.public_ips, s.user_data) == ((("spec.associatePublicIPAddress", True),), "echo plain")
    # An unknown field is not filled by a default.
    assert (s.tokens, s.hop_limit, s.endpoint) == (None, None, "enabled")
    assert s.unknown == {
        "tokens": "spec.metadataOptions.httpTokens",
        "hop_limit": "spec.metadataOptions.httpPutResponseHopLimit",
    }
    u = settings(T.EC2_NODE_CLASS, {"spec": {"blockDeviceMappings": UNKNOWN, "userData": UNKNOWN}})
    assert u.volumes == (Volume("spec.blockDeviceMappings", None, unknown=True),)
    assert (u.user_data, u.user_data_known, u.unknown) == (None, False, {"user_data": "spec.userData"})


def test_types_that_describe_no_nodes() -> None:
    assert node_settings(T.NODE_GROUP, {}) is None and node_settings(T.SUBNET, {}) is None


def test_nodeadm_user_data_gives_the_al2023_imds_default_and_a_computed_ami_is_named() -> None:
    from gpucloud.fleet import types as T
    from gpucloud.fleet.settings import AL2023_AMI_DEFAULT, node_settings
    from gpucloud.plan.model import UNKNOWN

    nodeadm = "Content-Type: application/node.eks.aws\n\nkind: NodeConfig\n"
    s = node_settings(T.LAUNCH_TEMPLATE, {"userData": nodeadm, "imageId": UNKNOWN})
    assert s is not None
    assert (s.tokens, s.metadata_default, s.image_unknown) == ("required", AL2023_AMI_DEFAULT, "imageId")
    plain = node_settings(T.INSTANCE, {"ami": UNKNOWN})
    assert plain is not None and (plain.tokens, plain.metadata_default, plain.image_unknown) == (None, "", "ami")
    stated = node_settings(
        T.LAUNCH_CONFIGURATION, {"imageId": "ami-1", "userData": nodeadm, "metadataOptions": {"httpTokens": "optional"}}
    )
    assert stated is not None and (stated.tokens, stated.image_unknown) == ("optional", "")
    # A node class names no AMI input of its own: nothing to flag as computed.
    nc = node_settings(T.EC2_NODE_CLASS, {"spec": {}})
    assert nc is not None and nc.image_unknown == ""
