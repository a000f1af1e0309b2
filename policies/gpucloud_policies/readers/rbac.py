"""Kubernetes RBAC: which roles grant everything, which bindings admit unauthenticated requests.

Semantics from the Kubernetes RBAC reference (kubernetes.io/docs/reference/access-authn-authz/rbac/): a
PolicyRule grants each of its ``verbs`` on each of its ``resources`` in each of its ``apiGroups``, ``*`` meaning
all; a rule with verbs ``*`` on resources ``*`` in apiGroups ``*`` is what the ``cluster-admin`` ClusterRole
holds. ``system:anonymous`` is the user and ``system:unauthenticated`` the group of every request without
credentials (authentication reference, "Anonymous requests"). Of the default bindings, Kubernetes itself binds
only ``system:public-info-viewer`` (read-only /healthz, /livez, /readyz, /version) to ``system:unauthenticated``
(RBAC reference, "Discovery roles"), so a binding of that role admits nothing new.

Which surface-inventory types carry RBAC and at which paths is the inventory's (``rbac_types``); a ``*List``
is read through its items, a ``*Patch`` like the kind it patches.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpucloud import surface

from ..base import get, items, maps, strings, text

GROUP = "kubernetes:rbac.authorization.k8s.io/"
ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
PUBLIC_INFO_ROLE = "system:public-info-viewer"
CLUSTER_ADMIN = "cluster-admin"
ROLE_KINDS = frozenset({"Role", "ClusterRole"})
BINDING_KINDS = frozenset({"RoleBinding", "ClusterRoleBinding"})


def base_kind(kind: str) -> str:
    """``ClusterRolePatch`` -> ``ClusterRole``; a List is read through its items."""
    return kind.removesuffix("Patch")


@functools.cache
def rbac_types(paths: frozenset[str]) -> frozenset[str]:
    """RBAC types of the inventory whose iam paths (a List's with ``items.`` dropped) are all in ``paths``."""
    out = set()
    for token, found in surface.types().items():
        carried = [p.removeprefix("items.") for p in found.get("iam", [])]
        if token.startswith(GROUP) and carried and set(carried) <= paths:
            out.add(token)
    return frozenset(out)


def wildcard_rules(role: Any) -> list[int]:
    """Indexes of the rules granting every verb on every resource of every API group (cluster-admin's rule)."""
    return [
        i
        for i, rule in enumerate(maps(get(role, "rules")))
        if "*" in strings(get(rule, "verbs"))
        and "*" in strings(get(rule, "resources"))
        and "*" in strings(get(rule, "apiGroups"))
    ]


@dataclass(frozen=True)
class Subject:
    kind: str
    name: str


def subjects(binding: Any) -> list[Subject]:
    return [Subject(text(get(s, "kind")), text(get(s, "name"))) for s in items(get(binding, "subjects")) if s]


def anonymous(binding: Any) -> list[Subject]:
    """The subjects that are every request without credentials."""
    return [
        s
        for s in subjects(binding)
        if (s.kind == "User" and s.name == ANONYMOUS_USER) or (s.kind == "Group" and s.name == UNAUTHENTICATED_GROUP)
    ]


def role_ref(binding: Any) -> tuple[str, str]:
    ref = get(binding, "roleRef")
    return (text(get(ref, "kind")), text(get(ref, "name"))) if isinstance(ref, Mapping) else ("", "")
