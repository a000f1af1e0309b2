"""The platform exports each checkpointed pool's drain grace, and gives it to its own acceptance pods."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpucloud.plan import Plan, run_program

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prod() -> Plan:
    return run_program(ROOT, "prod")


def test_prod_exports_the_drain_grace_of_its_checkpointed_pools(prod: Plan) -> None:
    # writeSeconds 90 + the 30 s margin on both training pools; infer-l40s declares no checkpoint model.
    assert prod.outputs["poolDrainGraceSeconds"] == {"train-h100": 120, "train-h200": 120}


def test_prod_acceptance_pods_take_their_pools_drain_grace(prod: Plan) -> None:
    diag = prod.find("kubernetes:batch/v1:Job", "gpucloud-prod-train-h100-dcgm-diag-job")
    assert diag.get("spec.template.spec.terminationGracePeriodSeconds") == 120
    nccl = next(r for r in prod if r.type.endswith(":MPIJob") and r.name == "gpucloud-prod-train-h100-nccl-mpijob")
    assert nccl.get("spec.mpiReplicaSpecs.Worker.template.spec.terminationGracePeriodSeconds") == 120
    infer = prod.find("kubernetes:batch/v1:Job", "gpucloud-prod-infer-l40s-dcgm-diag-job")
    assert infer.get("spec.template.spec.terminationGracePeriodSeconds") is None


def test_a_platform_without_checkpointed_pools_exports_an_empty_map() -> None:
    assert run_program(ROOT, "dev").outputs["poolDrainGraceSeconds"] == {}
