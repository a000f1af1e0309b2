"""gpucloud guardrails pack: builds the PolicyPack and nothing else (PolicyPack(...) serves forever).

Run with `pulumi preview --policy-pack policies --policy-pack-config policies/configs/<env>.json`.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from gpucloud.policies.gpucloud_policies import PACK_NAME, by_name, initial_config, policies

guardrails = by_name()

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=policies(),
    # Each entry carries its policy's own level: the SDK sends an entry without one as level 0 (ADVISORY) and the
    # CLI applies that over the policy's level (ReconcilePolicyPackConfig), which made every configurable
    # mandatory policy advisory under `pulumi preview` (tests/guard/test_online.py).
    initial_config={
        name: {"enforcementLevel": guardrails[name].enforcement, **config} for name, config in initial_config().items()
    },
    description="gpucloud guardrails: GPU type, cost, security and reliability policies for GPU fleets on AWS.",
)
