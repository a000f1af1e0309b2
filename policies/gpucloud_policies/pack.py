"""The pack as gpucloud's library sees it (gpucloud.guard.packs): the registry plus the priced plan as an argument."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import Policy

from . import k8s, registry
from .base import PACK_NAME, UNDECIDED_MARK, Guardrail


class GuardrailPack:
    PACK_NAME = PACK_NAME
    # The prefix of a fail-closed violation message, so the library can list it as undecided.
    UNDECIDED_MARK = UNDECIDED_MARK
    # Policy names a config may still carry, each with where its entry goes now (gpucloud.guard.config).
    RETIRED = registry.RETIRED

    @property
    def GUARDRAILS(self) -> tuple[Guardrail, ...]:
        return registry.GUARDRAILS

    @staticmethod
    def by_name() -> dict[str, Guardrail]:
        return registry.by_name()

    @staticmethod
    def initial_config() -> dict[str, Any]:
        return registry.initial_config()

    @staticmethod
    def policies(cost: Mapping[str, Any] | None = None) -> list[Policy]:
        """The policy objects; with ``cost`` (the plan's priced cost section) the guardrails that need the priced
        plan read it instead of pricing the resources themselves, as they do inside the Pulumi CLI."""
        shared = registry.policies()
        if cost is None:
            return shared
        return [
            g.with_cost(cost).policy() if g.bind_cost is not None else p
            for g, p in zip(registry.GUARDRAILS, shared, strict=True)
        ]

    @staticmethod
    @contextlib.contextmanager
    def derived_objects(objects: list[tuple[str, str, Mapping[str, Any]]] | None) -> Iterator[None]:
        """Objects rendered from Helm charts (owner URN, chart source, manifest) visible to the Kubernetes
        policies for one evaluation; outside it (the Pulumi CLI) they report chart Releases as undecided."""
        token = k8s.set_derived(objects)
        try:
            yield
        finally:
            k8s.reset_derived(token)


PACK = GuardrailPack()
