"""The node settings one describing resource gives its instances, on every launch path: IMDS (tokens, endpoint,
hop limit), EBS volumes (encryption and key), public IPs and user data, with the documented defaults of the
path applied where the resource leaves a field unset.

Paths: launch templates, launch configurations, EC2 instances, spot instance requests, Spot Fleet launch
specifications and Karpenter EC2NodeClass v1 and v1beta1. The guardrails on launch settings read this, so one
reading judges every path; the pools (gpucloud.fleet.build) carry the same fields per pool.

Defaults modelled, each from its source:

- EC2NodeClass v1 ``spec.metadataOptions``: httpEndpoint enabled, httpTokens required, httpPutResponseHopLimit
  1, also field by field when the block is given in part (karpenter-provider-aws v1.12.1,
  charts/karpenter-crd/templates/karpenter.k8s.aws_ec2nodeclasses.yaml, vendored under
  /work/shared/upstream/charts/karpenter-crd-1.12.1 with provenance in its PROVENANCE.md).
- EC2NodeClass v1beta1 ``spec.metadataOptions``: httpTokens required, httpPutResponseHopLimit **2**
  (karpenter-provider-aws pkg/apis/v1beta1/ec2nodeclass.go, ``+kubebuilder:default`` on MetadataOptions and
  its fields, commit 9c4c3c3b113cf2c3f7659ff7734e7cdcfe67976d).
- EC2NodeClass without ``spec.blockDeviceMappings``: Karpenter's AMI-family default mapping, an encrypted 20Gi
  gp3 volume without a KMS key of its own (karpenter-provider-aws pkg/providers/amifamily/resolver.go
  ``DefaultEBS``; the AL2, AL2023 and Bottlerocket families' ``DefaultBlockDeviceMappings`` return it). The
  ``Custom`` family has no default mapping (the AMI's own decides), so its encryption is not known.
- A template, instance, spot request or launch configuration whose user data is a nodeadm ``NodeConfig``
  runs an AL2023 AMI (nodeadm is AL2023's node initialisation; EKS user guide, "Upgrade from Amazon Linux 2 to
  Amazon Linux 2023"), and AL2023 AMIs are registered with ImdsSupport v2.0, "IMDSv2 enabled by default"
  (EKS's AL2023 announcement, awslabs/amazon-eks-ami#1696): an instance launched from one without httpTokens
  gets ``required`` (EC2 API reference, LaunchTemplateInstanceMetadataOptionsRequest.HttpTokens: "If the value of
  ImdsSupport for the AMI for your instance is v2.0, the default is required").
- Everything else: no default is assumed. EC2's own IMDS default depends on the AMI's ImdsSupport and the
  account's instance-metadata defaults, neither visible in a plan, so an unset httpTokens on a template or
  instance stays unset (``tokens`` None) and the reader decides what that means; ``image_unknown`` names the
  AMI input when the AMI itself is computed at preview, so a reader can tell "the default is optional" from
  "the AMI that decides the default is not known yet".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from gpucloud.fleet import types as T
from gpucloud.fleet.values import decode_user_data, flag, is_unknown, known, mappings, number, obj, text

KARPENTER_V1_DEFAULT: Final = "Karpenter v1 EC2NodeClass default"
KARPENTER_V1BETA1_DEFAULT: Final = "Karpenter v1beta1 EC2NodeClass default"
KARPENTER_VOLUME_DEFAULT: Final = "Karpenter's default block device mapping"
AL2023_AMI_DEFAULT: Final = "the AL2023 AMI's default (ImdsSupport v2.0)"
# The AMI input of each path that names one.
_IMAGE_INPUT: Final = {
    T.LAUNCH_TEMPLATE: "imageId",
    T.LAUNCH_CONFIGURATION: "imageId",
    T.INSTANCE: "ami",
    T.SPOT_INSTANCE_REQUEST: "ami",
}
# (httpTokens, httpEndpoint, httpPutResponseHopLimit) per EC2NodeClass version, from the sources above.
_NODE_CLASS_IMDS: Final = {
    T.EC2_NODE_CLASS: ("required", "enabled", 1, KARPENTER_V1_DEFAULT),
    T.EC2_NODE_CLASS_V1BETA1: ("required", "enabled", 2, KARPENTER_V1BETA1_DEFAULT),
}
# AMI families whose Karpenter default mapping is DefaultEBS (encrypted); "Custom" and Windows differ.
_DEFAULT_EBS_FAMILIES: Final = frozenset({"al2", "al2023", "bottlerocket"})


@dataclass(frozen=True)
class Volume:
    """One EBS volume a launch path creates."""

    path: str  # input path of the volume's settings ("blockDeviceMappings[0].ebs")
    encrypted: bool | None  # None: unset (the account's EBS default decides) or unknown
    encrypted_raw: Any = None  # what the input says, for messages
    kms_key: bool = False  # a key is given (an unknown ARN of a key created alongside counts)
    default: str = ""  # the documented default the volume comes from; "" when written out
    unknown: bool = False  # ``encrypted`` is unknown at preview


@dataclass(frozen=True)
class NodeSettings:
    """What one resource says about its nodes, documented defaults applied."""

    type: str
    metadata_path: str = "metadataOptions"  # where the metadata options are written
    has_metadata_options: bool = True  # False: the path has no metadata options at all (Spot Fleet specs)
    tokens: str | None = None  # effective httpTokens; None when unset without a documented default
    endpoint: str | None = None
    hop_limit: int | None = None  # effective httpPutResponseHopLimit; None when unset without a default
    hop_limit_raw: Any = None
    metadata_default: str = ""  # the default that filled tokens / hop limit, "" when all written out
    volumes: tuple[Volume, ...] = ()
    public_ips: tuple[tuple[str, bool], ...] = ()  # (input path, value) of every stated public-IP flag
    user_data: str | None = None  # decoded
    user_data_known: bool = True
    # Input paths of values unknown at preview, per field ("tokens", "hop_limit", "public_ip", "user_data").
    unknown: dict[str, str] = field(default_factory=dict)
    image_unknown: str = ""  # the AMI input when the AMI is computed at preview ("imageId", "ami")


def _metadata(md: Mapping[str, Any], where: str, unknown: dict[str, str]) -> tuple[str | None, str | None, Any]:
    tokens, endpoint, hops = md.get("httpTokens"), md.get("httpEndpoint"), md.get("httpPutResponseHopLimit")
    for name, key, value in (
        ("tokens", "httpTokens", tokens),
        ("endpoint", "httpEndpoint", endpoint),
        ("hop_limit", "httpPutResponseHopLimit", hops),
    ):
        if is_unknown(value):
            unknown[name] = f"{where}.{key}"
    return text(tokens), text(endpoint), hops if known(hops) else None


def _hop(value: Any) -> int | None:
    n = number(value)
    return int(n) if n is not None else None


def _volume(path: str, ebs: Any, key: str) -> Volume:
    if is_unknown(ebs):
        return Volume(path, None, unknown=True)
    ebs = obj(ebs)
    raw = ebs.get("encrypted")
    return Volume(
        path=path,
        encrypted=flag(raw),
        encrypted_raw=raw,
        kms_key=ebs.get(key) not in (None, ""),
        unknown=is_unknown(raw),
    )


def _user_data(raw: Any, unknown: dict[str, str], where: str, plain: bool = False) -> tuple[str | None, bool]:
    if raw is None:
        return None, True
    if not known(raw):
        unknown["user_data"] = where
        return None, False
    return (str(raw) if plain else decode_user_data(raw)), True


def _public(value: Any, path: str, unknown: dict[str, str]) -> tuple[tuple[str, bool], ...]:
    if is_unknown(value):
        unknown.setdefault("public_ip", path)
    found = flag(value)
    return ((path, found),) if found is not None else ()


def node_settings(type_: str, inputs: Mapping[str, Any]) -> NodeSettings | None:
    """The settings a resource of ``type_`` gives its nodes; None for a type that describes no nodes."""
    found = _node_settings(type_, inputs)
    if found is None or type_ not in _IMAGE_INPUT:
        return found
    image = _IMAGE_INPUT[type_]
    image_unknown = image if is_unknown(inputs.get(image)) else ""
    if found.tokens is None and "tokens" not in found.unknown and _nodeadm(found.user_data):
        return replace(found, tokens="required", metadata_default=AL2023_AMI_DEFAULT, image_unknown=image_unknown)
    return replace(found, image_unknown=image_unknown) if image_unknown else found


def _nodeadm(user_data: str | None) -> bool:
    """User data that configures nodeadm, which only AL2023 AMIs run (its MIME part type or its object kind)."""
    if not user_data:
        return False
    return "application/node.eks.aws" in user_data or "kind: NodeConfig" in user_data


def _node_settings(type_: str, inputs: Mapping[str, Any]) -> NodeSettings | None:
    unknown: dict[str, str] = {}
    if type_ in T.EC2_NODE_CLASSES:
        return _node_class(type_, inputs, unknown)
    if type_ == T.LAUNCH_TEMPLATE:
        md = obj(inputs.get("metadataOptions"))
        tokens, endpoint, hops = _metadata(md, "metadataOptions", unknown)
        volumes: tuple[Volume, ...] = tuple(
            _volume(f"blockDeviceMappings[{i}].ebs", m.get("ebs"), "kmsKeyId")
            for i, m in enumerate(mappings(inputs.get("blockDeviceMappings")))
            if m.get("ebs") is not None
        )
        ips = tuple(
            ip
            for i, ni in enumerate(mappings(inputs.get("networkInterfaces")))
            for ip in _public(
                ni.get("associatePublicIpAddress"), f"networkInterfaces[{i}].associatePublicIpAddress", unknown
            )
        )
        data, data_known = _user_data(inputs.get("userData"), unknown, "userData")
        return NodeSettings(
            type_,
            "metadataOptions",
            True,
            tokens,
            endpoint,
            _hop(hops),
            hops,
            "",
            volumes,
            ips,
            data,
            data_known,
            unknown,
        )
    if type_ in (T.INSTANCE, T.SPOT_INSTANCE_REQUEST, T.LAUNCH_CONFIGURATION):
        md = obj(inputs.get("metadataOptions"))
        tokens, endpoint, hops = _metadata(md, "metadataOptions", unknown)
        # The root volume is always there: unset, it is the AMI's, encrypted only if the account says so.
        volumes = (_volume("rootBlockDevice", inputs.get("rootBlockDevice"), "kmsKeyId"),)
        volumes += tuple(
            _volume(f"ebsBlockDevices[{i}]", d, "kmsKeyId")
            for i, d in enumerate(mappings(inputs.get("ebsBlockDevices")))
        )
        ips = _public(inputs.get("associatePublicIpAddress"), "associatePublicIpAddress", unknown)
        key = "userData" if "userData" in inputs else "userDataBase64"
        data, data_known = _user_data(inputs.get(key), unknown, key)
        return NodeSettings(
            type_,
            "metadataOptions",
            True,
            tokens,
            endpoint,
            _hop(hops),
            hops,
            "",
            volumes,
            ips,
            data,
            data_known,
            unknown,
        )
    if type_ == T.SPOT_FLEET_REQUEST:
        sf_volumes: tuple[Volume, ...] = ()
        sf_ips: tuple[tuple[str, bool], ...] = ()
        data, data_known = None, True
        for i, ls in enumerate(mappings(inputs.get("launchSpecifications"))):
            base = f"launchSpecifications[{i}]"
            for key in ("rootBlockDevices", "ebsBlockDevices"):
                sf_volumes += tuple(
                    _volume(f"{base}.{key}[{j}]", d, "kmsKeyId") for j, d in enumerate(mappings(ls.get(key)))
                )
            if not mappings(ls.get("rootBlockDevices")):
                # No root device stated: the AMI's root volume, encrypted only if the account says so.
                sf_volumes += (Volume(f"{base}.rootBlockDevices", None),)
            sf_ips += _public(ls.get("associatePublicIpAddress"), f"{base}.associatePublicIpAddress", unknown)
            if i == 0:
                data, data_known = _user_data(ls.get("userData"), unknown, f"{base}.userData")
        return NodeSettings(
            type_,
            "launchSpecifications",
            not mappings(inputs.get("launchSpecifications")),
            volumes=sf_volumes,
            public_ips=sf_ips,
            user_data=data,
            user_data_known=data_known,
            unknown=unknown,
        )
    return None


def _node_class(type_: str, inputs: Mapping[str, Any], unknown: dict[str, str]) -> NodeSettings:
    spec = obj(inputs.get("spec"))
    d_tokens, d_endpoint, d_hops, source = _NODE_CLASS_IMDS[type_]
    raw_md = spec.get("metadataOptions")
    md = obj(raw_md)
    tokens, endpoint, hops = _metadata(md, "spec.metadataOptions", unknown)
    filled = ("tokens" not in unknown and tokens is None) or ("hop_limit" not in unknown and hops is None)
    hop_limit = _hop(hops) if hops is not None else (None if "hop_limit" in unknown else d_hops)
    settings_tokens = tokens if tokens is not None else (None if "tokens" in unknown else d_tokens)
    settings_endpoint = endpoint if endpoint is not None else (None if "endpoint" in unknown else d_endpoint)
    raw_maps = spec.get("blockDeviceMappings")
    if is_unknown(raw_maps):
        volumes: tuple[Volume, ...] = (Volume("spec.blockDeviceMappings", None, unknown=True),)
    elif raw_maps is None:
        family = _family(spec)
        encrypted = True if family in _DEFAULT_EBS_FAMILIES else None
        volumes = (Volume("spec.blockDeviceMappings", encrypted, default=KARPENTER_VOLUME_DEFAULT),)
    else:
        volumes = tuple(
            _volume(f"spec.blockDeviceMappings[{i}].ebs", m.get("ebs"), "kmsKeyID")
            for i, m in enumerate(mappings(raw_maps))
        )
    ips = _public(spec.get("associatePublicIPAddress"), "spec.associatePublicIPAddress", unknown)
    # EC2NodeClass userData is plain text that Karpenter merges with its own bootstrap.
    data, data_known = _user_data(spec.get("userData"), unknown, "spec.userData", plain=True)
    return NodeSettings(
        type_,
        "spec.metadataOptions",
        True,
        settings_tokens,
        settings_endpoint,
        hop_limit,
        hops,
        source if filled else "",
        volumes,
        ips,
        data,
        data_known,
        unknown,
    )


def _family(spec: Mapping[str, Any]) -> str:
    """The AMI family: v1's alias (``al2023@latest``) or amiFamily, lower-cased; "" when not known."""
    for term in mappings(spec.get("amiSelectorTerms")):
        alias = text(term.get("alias"))
        if alias:
            return alias.partition("@")[0].lower()
    return (text(spec.get("amiFamily")) or "").lower()
