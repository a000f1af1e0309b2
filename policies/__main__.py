"""gpucloud guardrails pack: builds the PolicyPack and nothing else (PolicyPack(...) serves forever).

Run with `pulumi preview --policy-pack policies --policy-pack-config policies/configs/<env>.json`.
"""

from gpucloud_policies import PACK_NAME, initial_config, policies
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=policies(),
    initial_config=initial_config(),
    description="gpucloud guardrails: GPU type, cost, security and reliability policies for GPU fleets on AWS.",
)
