"""Reachability: the union of the sources a rule admits, measured against the public address space.

The pack's one notion of "the world": the union of every CIDR a field admits (IPv4 and IPv6, through the stdlib
``ipaddress`` module, prefix-list entries included by the caller) covering at least ``threshold`` of the public
IPv4 or IPv6 space. ``0.0.0.0/1`` + ``128.0.0.0/1`` is the world like ``0.0.0.0/0``; so is ``::/0``. Every
CIDR-bearing field a guardrail reads (security groups and their rules, NACLs, EKS public-access CIDRs, Service
source ranges, ``aws:SourceIp`` conditions) goes through ``Reach``.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# The default share of the public space from which a union is "the world": 0.01 is about a /7 of IPv4.
DEFAULT_SHARE = 0.01

# Address space that is not the public internet (RFC 6890 special-purpose registries, as ipaddress knows them).
_V4_SPECIAL = (
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/3",
)
# IPv6: only global unicast (2000::/3) is routed on the internet; documentation space is not.
_V6_PUBLIC = ("2000::/3",)
_V6_SPECIAL = ("2001:db8::/32",)
ALL_V4 = ipaddress.ip_network("0.0.0.0/0")
ALL_V6 = ipaddress.ip_network("::/0")


def exclude(space: Iterable[Network], holes: Iterable[Network | str]) -> list[Network]:
    """``space`` with every hole cut out (CIDR blocks either nest or are disjoint)."""
    nets = list(space)
    for hole in holes:
        h = ipaddress.ip_network(hole) if isinstance(hole, str) else hole
        out: list[Network] = []
        for n in nets:
            if n.version == h.version and h.subnet_of(n):  # type: ignore[arg-type]
                out.extend(n.address_exclude(h))  # type: ignore[arg-type]
            elif not (n.version == h.version and n.subnet_of(h)):  # type: ignore[arg-type]
                out.append(n)
        nets = out
    return nets


def intersect(nets: Iterable[Network], other: Network) -> list[Network]:
    """The parts of ``nets`` inside ``other``."""
    out: list[Network] = []
    for n in nets:
        if n.version != other.version:
            continue
        if n.subnet_of(other):  # type: ignore[arg-type]
            out.append(n)
        elif other.subnet_of(n):  # type: ignore[arg-type]
            out.append(other)
    return out


@functools.cache
def public_space(version: int) -> tuple[Network, ...]:
    if version == 4:
        return tuple(exclude([ALL_V4], _V4_SPECIAL))
    return tuple(exclude([ipaddress.ip_network(n) for n in _V6_PUBLIC], _V6_SPECIAL))


def parse(cidr: str) -> Network | None:
    """A CIDR (host bits allowed, as AWS normalises them) or a bare address; None when it is neither."""
    try:
        return ipaddress.ip_network(cidr.strip(), strict=False)
    except ValueError:
        return None


def public_share(networks: Iterable[Network], version: int) -> float:
    """Share (0..1) of the public address space of one IP version that the networks cover together."""
    union = list(ipaddress.collapse_addresses(n for n in networks if n.version == version))  # type: ignore[type-var]
    space = public_space(version)
    total = sum(p.num_addresses for p in space)
    covered = 0
    for n in union:
        for p in space:
            # Two CIDR blocks either nest or are disjoint: their intersection is the smaller one.
            if n.subnet_of(p):  # type: ignore[arg-type]
                covered += n.num_addresses
            elif p.subnet_of(n):  # type: ignore[arg-type]
                covered += p.num_addresses
    return covered / total


def is_world(networks: Iterable[Network], threshold: float = DEFAULT_SHARE) -> bool:
    nets = list(networks)
    return any(public_share(nets, v) >= threshold for v in (4, 6))


def covers_everything(networks: Iterable[Network]) -> bool:
    """The union is all of IPv4 (0.0.0.0/0) or all of IPv6 (::/0), however it is split."""
    nets = list(networks)
    for whole in (ALL_V4, ALL_V6):
        union = list(ipaddress.collapse_addresses(n for n in nets if n.version == whole.version))  # type: ignore[type-var]
        if union == [whole]:
            return True
    return False


@dataclass
class Reach:
    """The sources one field (or several fields judged together) admits."""

    sources: list[str] = field(default_factory=list)  # as written, for messages
    networks: list[Network] = field(default_factory=list)
    unparsable: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, cidrs: Iterable[str], names: Iterable[str] = ()) -> Reach:
        r = cls()
        r.add(cidrs)
        r.sources += list(names)
        return r

    def add(self, cidrs: Iterable[str], networks: Iterable[Network] = ()) -> Reach:
        for c in cidrs:
            if not isinstance(c, str) or not c.strip():
                continue
            self.sources.append(c.strip())
            n = parse(c)
            if n is None:
                self.unparsable.append(c.strip())
            else:
                self.networks.append(n)
        self.networks += list(networks)
        return self

    def __or__(self, other: Reach) -> Reach:
        return Reach(
            list(dict.fromkeys([*self.sources, *other.sources])),
            [*self.networks, *other.networks],
            [*self.unparsable, *other.unparsable],
        )

    def is_world(self, threshold: float = DEFAULT_SHARE, *, unparsable_is_world: bool = False) -> bool:
        """The union reaches the internet; an unparsable source counts as the world only where the caller says
        a typo must not read as safe (the service would reject it otherwise)."""
        if unparsable_is_world and self.unparsable:
            return True
        return is_world(self.networks, threshold)


def split(values: Iterable[str]) -> list[str]:
    """Comma-separated lists (annotations, some inputs) as separate CIDRs."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]
