"""Which guarded surfaces a resource type's inputs carry, from the property names of its SDK input types.

A surface is found where a property's Pulumi name says what it holds (``instanceType``, ``associatePublicIpAddress``,
``kmsKeyId``, ``userData``), searched through every nested input type; a Kubernetes kind carries a pod spec when
its inputs reach ``core/v1`` ``PodSpec``. The name rules are deliberately wide: a false surface only costs one
line of triage in the scope table, a missed one is a type nobody judges. What names cannot say is in the
reviewed override table (overrides.json).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from .sdk import InputClass, ResourceType, Sdk

# Surface id -> what it means; the order is the docs table's.
SURFACES: dict[str, str] = {
    "compute": "starts compute: instance types, instance requirements, counts, capacity targets",
    "network": "network exposure: public IPs and endpoints, publicly-accessible flags, CIDRs, listeners",
    "principal": "principal-bearing documents: resource policies, trust policies, permission principals",
    "iam": "IAM grants: identity policies and their attachments, Kubernetes RBAC rules and bindings",
    "data": "data at rest: encryption settings and key fields",
    "secrets": "secrets: user data, environment, parameters, passwords, connection strings",
    "pods": "pod specs: containers, security context, host namespaces, volumes",
}

# Paths kept per surface in the inventory (enough to say where; the rules find them all).
MAX_PATHS = 12
MAX_DEPTH = 8

_INSTANCE_TYPE = re.compile(r"^(?:instanceTypes?|instanceRequirements|instanceClass|nodeType|\w+InstanceTypes?)$")
_CAPACITY = re.compile(
    r"^(?:desiredCapacity|desiredSize|maxSize|minSize|instanceCount|initialInstanceCount|\w+InstanceCount|"
    r"targetCapacity|\w+TargetCapacity|maxVcpus|minVcpus|desiredVcpus|nodeCount|numberOfNodes)$"
)
# "public" and "cidr" at a camelCase word boundary (``vpcIdRestriction`` holds c-I-d-R, not a CIDR).
_NETWORK = re.compile(
    r"^public|Public|^cidr|Cidr|CIDR|^(?:internal|scheme|loadBalancerSourceRanges|externalIPs|externalIps|"
    r"sourceRanges|listeners?|ingress)$"
)
# Public *key material* and public-marketplace prices or ARNs are not network exposure.
_NOT_NETWORK = re.compile(
    r"(?i)public(?:signing)?keys?(?:id|endpoint)?$|publiccertificate$|workforcetaskprice|publichubcontent"
)
_PRINCIPAL = re.compile(r"^(?:policy|assumeRolePolicy|accessPolic(?:y|ies)|resourcePolicy|keyPolicy|principals?)$")
_IAM = re.compile(r"^(?:managedPolicyArns?|inlinePolic(?:y|ies)|policyArns?|permissionsBoundary)$")
_IAM_DOCUMENT = re.compile(r"^(?:policy|policyDocument)$")
_DATA = re.compile(r"(?i:kms|encrypt)|^sse|Sse[A-Z]")
# Named after encryption but holding no protection setting: an encryption context (metadata bound to KMS calls),
# a data-key reuse period, a TLS port number, a selection of which encrypted objects to replicate.
_NOT_DATA = re.compile(r"(?i)encryptioncontext|reuseperiod|encryptionport$|encryptedobjects$")
_SECRETS = re.compile(
    r"^(?:userData|userDataBase64|environment|environmentVariables|variables|parameters|secretString|"
    r"secretBinary)$|(?i:password|connectionstring|privatekey|authtoken|accesstoken|apitoken)"
)
_VALUE_NAMES = frozenset({"value", "values", "staticValue", "staticValues", "parameterValue", "defaultValue"})
_RBAC = re.compile(r"^(?:rules|roleRef|subjects|aggregationRule)$")

# A policy document typed as an object (pulumi-aws accepts the JSON string or this input type, named unqualified
# from other modules): one document, judged as a whole, never walked into.
DOCUMENT = "PolicyDocumentArgs"
POD_SPEC = frozenset({("pulumi_kubernetes/core/v1", "PodSpecArgs"), ("pulumi_kubernetes/core/v1", "PodSpecPatchArgs")})
# Object metadata and status are not inputs a guardrail judges surfaces on (labels, annotations, conditions).
_SKIP = frozenset({"metadata", "status", "tags", "tagsAll"})


def _leaf_surfaces(token: str, name: str, nested: bool) -> list[str]:
    found = []
    if _INSTANCE_TYPE.match(name) or _CAPACITY.match(name):
        found.append("compute")
    if _NETWORK.search(name) and not _NOT_NETWORK.search(name):
        found.append("network")
    iam_module = token.startswith("aws:iam/")
    if not nested and (_IAM.match(name) or (iam_module and _IAM_DOCUMENT.match(name))):
        found.append("iam")
    elif not nested and _PRINCIPAL.match(name):
        found.append("principal")
    if token.startswith("kubernetes:rbac.authorization.k8s.io/") and _RBAC.match(name):
        found.append("iam")
    if _DATA.search(name) and not _NOT_DATA.search(name):
        found.append("data")
    if _SECRETS.search(name):
        found.append("secrets")
    return found


def _named_values(cls: InputClass | None) -> bool:
    """An input type of name/value entries (``{name, value}``, ``{parameterName, parameterValue}``): a map
    written as a list, whose values may be anything."""
    names = {p.name for p in cls.props if not p.refs and not p.numeric} if cls is not None else set()
    return bool(names & _VALUE_NAMES) and bool(names & {"name", "key", "parameterName"})


def classify(sdk: Sdk, resource: ResourceType) -> dict[str, list[str]]:
    """{surface: [property paths]} for one resource type (paths sorted, at most MAX_PATHS each)."""
    classes = sdk.classes

    @cache
    def walk(key: tuple[str, str], depth: int) -> tuple[tuple[str, str], ...]:
        cls: InputClass | None = classes.get(key)
        if cls is None or depth > MAX_DEPTH:
            return ()
        out: list[tuple[str, str]] = []
        for prop in cls.props:
            if prop.name in _SKIP:
                continue
            if any(r in POD_SPEC for r in prop.refs):
                out.append(("pods", prop.name))
                continue
            # A property holding an object is a container: its name says what it groups (``encryptionConfig``),
            # so it counts only when nothing inside it does.
            refs = [r for r in prop.refs if r[1] != DOCUMENT and r in classes]
            inner = [(s, f"{prop.name}.{p}") for r in refs if r != key for s, p in walk(r, depth + 1)]
            out.extend(inner)
            if not inner:
                found = _leaf_surfaces(resource.token, prop.name, bool(refs))
                # Secret material is text: a boolean or a number holds none (``manageMasterUserPassword``,
                # ``passwordLength``), nor does an object whose every field was searched and none is a secret
                # (``passwordPolicy``, WAF's ``passwordField``: which request field holds the user's password),
                # unless it is a name/value list (CodeBuild ``environmentVariables``, DB ``parameters``).
                no_text = prop.numeric or (refs and not any(_named_values(classes.get(r)) for r in refs))
                out.extend((s, prop.name) for s in found if not (s == "secrets" and no_text))
        return tuple(out)

    found: dict[str, set[str]] = {}
    if resource.args is not None:
        for surface, path in walk(resource.args, 0):
            found.setdefault(surface, set()).add(path)
    return {s: sorted(found[s], key=lambda p: (p.count("."), p))[:MAX_PATHS] for s in SURFACES if s in found}


def apply_overrides(
    token: str, surfaces: dict[str, list[str]], overrides: Iterable[dict[str, object]]
) -> dict[str, list[str]]:
    """The reviewed override table: surfaces names cannot show (``add``) or that they show wrongly (``remove``)."""
    out = {k: list(v) for k, v in surfaces.items()}
    for entry in overrides:
        tokens = entry.get("tokens")
        if not isinstance(tokens, list) or token not in tokens:
            continue
        for surface in entry.get("remove") or []:  # type: ignore[attr-defined]
            out.pop(str(surface), None)
        # One property a name rule put in a surface by mistake (``tokenValidityUnits.accessToken`` is a unit).
        for surface, paths in (entry.get("removePaths") or {}).items():  # type: ignore[attr-defined]
            kept = [p for p in out.get(surface, []) if p not in paths]
            if kept:
                out[surface] = kept
            else:
                out.pop(surface, None)
        add = entry.get("add") or {}
        for surface, paths in add.items():  # type: ignore[attr-defined]
            merged = sorted({*out.get(surface, []), *paths}, key=lambda p: (p.count("."), p))[:MAX_PATHS]
            out[surface] = merged
    return {s: out[s] for s in SURFACES if s in out}


Classifier = Callable[[Sdk, ResourceType], dict[str, list[str]]]
