"""Inventory-driven reading: the property paths the surface inventory (gpucloud.surface) lists for a type, walked
through the engine's view of a resource, and what a value at each path means.

The inventory lists, per type and surface, the Pulumi (camelCase) property paths that carry the surface, through
nested input types (``brokerNodeGroupInfo.connectivityInfo.publicAccess``); a step may hold one object or a list
of them (``routes.cidrBlock``), so the walker takes either at every step. What a value means is decided from the
property's own name, the same way for every type (``publiclyAccessible`` true is a public endpoint on a database,
a broker or a graph alike), so a provider upgrade that adds a type with such a property is read without a line
of code here; a path whose name says nothing certain is left unclaimed, and its type stays in the scope table with
the reason (see ``unclaimed_reason``). A guardrail claims a type only when it judges every path the inventory lists
for it on its surface (``claimed``): "read" in the coverage table means every listed path is read.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from gpucloud import surface

from .base import UnknownValueError, get, is_list, items, keys, unknown
from .readers import paths

# ---------------------------------------------------------------------------------------------------------
# Walking a path.


def values(props: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(concrete path, value) for every value at a dotted inventory path, walked by readers/paths.py (a list at any
    step element by element: ``routes[1].cidrBlock``). Absent or null steps yield nothing; an unknown value raises
    UnknownValueError, as the engine's proxy does, so the pack's ``unknowns`` rule applies."""
    for where, value in paths.values(props, path):
        if value is paths.UNKNOWN:
            raise unknown(where or path)
        yield where, value


def leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def walk_object(value: Any, where: str, skip_unknown: Any = lambda _name: False) -> Iterator[tuple[str, str, Any]]:
    """(path, property name, value) of every scalar or list-of-scalars inside an object (for container paths
    such as ``encryptionConfiguration``, whose inner names the classifier did not single out). An unknown value
    raises, unless ``skip_unknown(name)`` says an unknown there decides nothing (a computed key ARN is a key the
    program creates)."""
    if isinstance(value, Mapping):
        for k in keys(value):
            try:
                v = get(value, k)
            except UnknownValueError:
                if skip_unknown(k):
                    continue
                raise
            if isinstance(v, Mapping) or (is_list(v) and any(isinstance(x, Mapping) for x in items(v))):
                for i, x in enumerate([v] if isinstance(v, Mapping) else items(v)):
                    yield from walk_object(
                        x,
                        skip_unknown=skip_unknown,
                        where=f"{where}.{k}" if isinstance(v, Mapping) else f"{where}.{k}[{i}]",
                    )
            elif v is not None:
                yield f"{where}.{k}", k, v


# ---------------------------------------------------------------------------------------------------------
# Claims: which types a guardrail reads, derived from the inventory and a kind function.

Kind = str | None


def claimed(surface_id: str, kind_of: Any, judged: frozenset[str]) -> frozenset[str]:
    """Types of the inventory whose every ``surface_id`` path has a kind (``kind_of(token, path)``) and at least
    one path a kind in ``judged``: the types whose surface a guardrail judging those kinds reads whole."""
    out = set()
    for token, surfaces in surface.types().items():
        paths = surfaces.get(surface_id) or []
        kinds = [kind_of(token, p) for p in paths]
        if paths and all(k is not None for k in kinds) and any(k in judged for k in kinds):
            out.add(token)
    return frozenset(out)


# The guardrails that read the inventory's paths for every type (they leave a type another guardrail names to it).
INVENTORY_DRIVEN = frozenset({"GC-SEC-170", "GC-SEC-171", "GC-SEC-172"})


def narrowed(guardrails: tuple[Any, ...]) -> tuple[Any, ...]:
    """The registry's guardrails with each inventory-driven one reading only the types that no other guardrail of
    its surfaces names exactly (a type is judged once; a dedicated guardrail knows its type better)."""
    out = []
    for g in guardrails:
        if g.id in INVENTORY_DRIVEN:
            others = [o for o in guardrails if o.id not in INVENTORY_DRIVEN and o.surfaces & g.surfaces]
            # Exact tokens only: a pattern such as "kubernetes:*:Service" reads a surface, it reviews no type.
            named = {t for o in others for t in o.read_types if "*" not in t}
            g = replace(g, resource_types=frozenset(t for t in g.resource_types if t not in named))
        out.append(g)
    return tuple(out)


@functools.cache
def paths_of(token: str, surface_id: str) -> tuple[str, ...]:
    return tuple(surface.types().get(token, {}).get(surface_id) or ())


# ---------------------------------------------------------------------------------------------------------
# Network: what a value at a network path means (from the property name, and for CIDRs the path's context).

PUBLIC_FLAG = "public-flag"  # true (or "ENABLED") gives the resource a public endpoint or address
BLOCK_FLAG = "block-flag"  # false turns off a block on public access
PUBLIC_ACCESS = "public-access-object"  # an object whose ``type`` says how brokers are reached from the internet
INTERNAL = "internal"  # false or unset: an internet-facing load balancer
PRESENCE = "public-network"  # present: the resource takes traffic from the internet
ALLOW_CIDRS = "allow-cidrs"  # sources admitted in: the world when reach.py says so
# A network access document whose rule sets say who may connect (OpenSearch Serverless network policies:
# ``[{"Rules": [...], "AllowFromPublic": true | false, "SourceVPCEs": [...]}]``); public when a rule set allows it.
PUBLIC_DOC = "public-document"
# Paths read and decided not to be exposure by themselves (their reasons in NOT_EXPOSURE).
CONTEXT = "context"
# An infrastructure template's body (CloudFormation ``templateBody``, Cloud Control ``desiredState``): every
# property of every resource in it is judged by its name like a property of a pulumi-aws type.
TEMPLATE = "template"
_TEMPLATE_PATHS = frozenset({"templateBody", "desiredState"})

# Data services made reachable from the internet: certain and unwanted (GC-SEC-170).
_DATA_ENDPOINT_FLAGS = frozenset({"publiclyAccessible", "publicConnectivity"})
# Compute given a public address, services meant to face the web: a matter of design (GC-SEC-171).
_ADDRESS_FLAGS = frozenset({"mapPublicIpOnLaunch", "assignPublicIp", "createPublicIp", "isPubliclyAccessible"})
_BLOCK_FLAGS = frozenset(
    {
        "blockPublicAcls",
        "blockPublicPolicy",
        "ignorePublicAcls",
        "restrictPublicBuckets",
        "blockPublicSecurityGroupRules",
    }
)
# A CIDR-bearing property is a source allow-list only where its path says it admits traffic in: an allow or
# white list, a source-IP configuration, a public port's sources, a Service's source ranges, an ingress peer.
_ALLOW_CONTEXT = re.compile(r"(?i)allowlist|whitelist|sourceipconfig|portinfos|sourceranges|ingress\.from")
_CIDR_LEAF = re.compile(r"(?i)^(?:cidrs?|ipv6cidrs|cidrallowlists|cidrlistaliases|loadbalancersourceranges)$")

# Why a network path, read, is not exposure by itself.
NOT_EXPOSURE: dict[str, str] = {
    "address-space": "it sets the address space of a network, route or attachment, not who may connect",
    "egress": "it admits outbound traffic; exposure is inbound",
    "listeners": "listener ports of a load balancer are exposure only with its scheme, judged on `internal`",
}
_ADDRESS_SPACE = re.compile(
    r"(?i)^(?:cidrBlock|ipv6CidrBlock|ipv4CidrBlock|assignGeneratedIpv6CidrBlock|ipv6CidrBlockNetworkBorderGroup|"
    r"destinationCidrBlock|destinationIpv6CidrBlock)$"
)


def network_kind(token: str, path: str) -> Kind:
    if path in _TEMPLATE_PATHS and token.startswith(("aws:cloudformation/", "aws:cloudcontrol/")):
        return TEMPLATE
    name = leaf(path)
    if name in _DATA_ENDPOINT_FLAGS or name in _ADDRESS_FLAGS:
        return PUBLIC_FLAG
    if name in _BLOCK_FLAGS:
        return BLOCK_FLAG
    if name == "publicAccess":
        return PUBLIC_ACCESS
    if name == "internal":
        return INTERNAL
    if name == "publicNetworkConfiguration":
        return PRESENCE
    if name == "policy":
        return PUBLIC_DOC
    if name == "permittedPublicSecurityGroupRuleRanges":
        return CONTEXT  # the ports the EMR block still lets open to the world: exceptions to the block flag
    if name == "listeners" and token.startswith(("aws:elb/", "aws:lb/", "aws:alb/")):
        return CONTEXT
    if _CIDR_LEAF.match(name) and _ALLOW_CONTEXT.search(path):
        return ALLOW_CIDRS
    if re.search(r"(?i)egress", path) or token.endswith("EgressRule:SecurityGroupEgressRule"):
        return CONTEXT
    if _ADDRESS_SPACE.match(name) and token.startswith(("aws:ec2/subnet:", "aws:ec2/defaultSubnet:")):
        return CONTEXT
    return None


def is_data_endpoint(path: str) -> bool:
    return leaf(path) in _DATA_ENDPOINT_FLAGS


def public_flag(value: Any) -> bool:
    """True, "true" or "ENABLED" (ECS and EventBridge spell assignPublicIp as an enum)."""
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in ("true", "enabled")


def allows_public(value: Any) -> bool:
    """A network access document (a JSON string or its parsed form) with a rule set whose ``AllowFromPublic`` is
    true: the collections and dashboards it names take connections from the internet (Amazon OpenSearch
    Serverless developer guide, "Network access": public access is AllowFromPublic true). An encryption or data
    policy has no such key and is not exposure."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    if isinstance(value, dict):
        if public_flag(value.get("AllowFromPublic")):
            return True
        return any(allows_public(v) for v in value.values() if isinstance(v, (dict, list)))
    if isinstance(value, list):
        return any(allows_public(v) for v in value)
    return False


def block_off(value: Any) -> bool:
    if isinstance(value, bool):
        return not value
    return isinstance(value, str) and value.strip().lower() == "false"


# ---------------------------------------------------------------------------------------------------------
# Data at rest: what a value at a data path means.

KEY = "key"  # names a KMS key: an alias/aws/... is AWS-managed
FLAG = "flag"  # false turns encryption off
INVERTED = "inverted"  # true turns encryption off (``encryptionDisabled``)
MODE = "mode"  # an enum: NONE / DISABLED / PLAINTEXT turn encryption off
CONTAINER = "container"  # an object of such settings (``enabled``, ``keyId``, ``type``), judged field by field

_KEY_NAME = re.compile(
    r"(?i)^(?:\w*kms\w*(?:key|keyid|keyarn|keyidentifier)|kmsarn|\w*encryptionkey(?:id|arn)?|volumeencryptionkey|"
    r"keyid|keyarn|kmsmasterkeyid|sseawskmskeyid|awskmskey(?:id|arn))$"
)
_FLAG_NAME = re.compile(
    r"(?i)^(?:encrypted|storageencrypted|\w*encryptionenabled|cachedataencrypted|enableintercontainertrafficencryption"
    r"|encryptpassword|requireencryption|transitencryption|intransitencryption|returnconnectionpasswordencrypted"
    r"|\w*managedsseenabled|enabled)$"
)
_MODE_NAME = re.compile(
    r"(?i)^(?:encryptiontype|\w*encryptionmode|encryptionoption|\w*ssealgorithm|ssetype|\w*encryptiontype|"
    r"encryptionalgorithm|clientbroker|type|keytype)$"
)
_CONTAINER_NAME = re.compile(
    r"(?i)^(?:\w*encryption(?:configuration|configurations|config|options|info|settings|specification)?|"
    r"servicesideencryption|serversideencryption|encryptatrest|nodetonodeencryption|encryptionintransit|"
    r"ssekms|ssespecification|sseconfiguration)$"
)
# The spellings of "no encryption" in AWS encryption enums: Kinesis EncryptionType NONE, Glue encryption modes
# DISABLED, MSK ClientBroker / MSK Connect encryption type PLAINTEXT, AS2 encryption algorithm NONE.
OFF_MODES = frozenset({"NONE", "DISABLED", "PLAINTEXT"})
# Booleans about the kind of key, not about encryption: ``kmsEncrypted`` false means S3-managed keys (Storage
# Gateway), still encrypted; reading them as "off" would be false.
_KEY_CHOICE = re.compile(r"(?i)^(?:kmsencrypted|sses3s?|\w*servicerole|enableminimumencryptionconfiguration)$")
# A service-managed encryption flag turned off beside a KMS key means KMS encryption instead (SQS: SSE-SQS or
# SSE-KMS), not none.
_MANAGED_SSE = re.compile(r"(?i)managedsse")


def data_kind(token: str, path: str) -> Kind:
    name = leaf(path)
    if _KEY_CHOICE.match(name):
        return CONTEXT
    if name.lower().endswith("encryptiondisabled"):
        return INVERTED
    if _KEY_NAME.match(name):
        return KEY
    if _FLAG_NAME.match(name):
        return FLAG
    if _MODE_NAME.match(name):
        return MODE
    if _CONTAINER_NAME.match(name):
        return CONTAINER
    return None


def mode_off(value: Any) -> bool:
    return isinstance(value, str) and value.strip().upper() in OFF_MODES


def managed_sse(name: str) -> bool:
    return bool(_MANAGED_SSE.search(name))


def flag_off(value: Any) -> bool:
    if isinstance(value, bool):
        return not value
    return isinstance(value, str) and value.strip().lower() == "false"


# ---------------------------------------------------------------------------------------------------------
# Infrastructure templates: CloudFormation names properties in PascalCase (``PubliclyAccessible``), the same
# properties pulumi-aws names in camelCase, so a template's resources are judged by the same name rules.


def camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def template_properties(token: str, props: Any) -> Iterator[tuple[str, str, Any]]:
    """(path, camelCase property path inside the resource, value) of every property of every resource in the
    template a CloudFormation stack or stack set carries, or of the one resource a Cloud Control desired state
    is; an unknown body raises (undecided)."""
    from .services import parse_template  # services imports nothing of this module; imported late to stay a leaf

    if token.startswith("aws:cloudcontrol/"):
        body = parse_template(get(props, "desiredState"))
        yield from _template_walk(body, "desiredState", "")
        return
    template = parse_template(get(props, "templateBody"))
    resources = template.get("Resources")
    if not isinstance(resources, Mapping):
        return
    for logical, res in resources.items():
        properties = res.get("Properties") if isinstance(res, Mapping) else None
        yield from _template_walk(properties, f"templateBody.Resources.{logical}.Properties", "")


def _template_walk(node: Any, where: str, inner: str) -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            name = camel(str(k))
            yield from _template_walk(v, f"{where}.{k}", f"{inner}.{name}" if inner else name)
    elif isinstance(node, list) and any(isinstance(x, Mapping | list) for x in node):
        for i, x in enumerate(node):
            yield from _template_walk(x, f"{where}[{i}]", inner)
    elif inner:
        yield where, inner, node
