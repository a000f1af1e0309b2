"""GC-SEC-029 vpc-flow-logs: every VPC the stack creates has a flow log.

A VPC's ID is unknown at preview, so a FlowLog is matched to its VPC the way the engine records the link: the
FlowLog's ``vpcId`` input depends on the VPC (``propertyDependencies``, by URN, which also holds when the ID
passes through ``apply``). A literal ``vpcId`` can only name a VPC created elsewhere. A FlowLog whose ``vpcId``
is computed from something that is not a VPC of this stack cannot be placed: the VPCs it might cover are
reported as undecided, never passed. Field names from the pulumi-aws 7.51 input type ``aws.ec2.FlowLogArgs``
(``vpc_id``; ``subnet_id`` / ``eni_id`` / ``transit_gateway_id`` logs cover less than the VPC and do not count).
"""

from __future__ import annotations

from typing import Any

from ..base import Config, EnforcementLevel, Guardrail, Severity, StackReport, UnknownValueError, get, has, unknown
from ..stack import linked, of_type

VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"


def _computed(props: Any, key: str) -> bool:
    try:
        get(props, key)
    except UnknownValueError:
        return True
    return False


def validate(args: Any, report: StackReport, cfg: Config) -> None:
    vpcs = of_type(args.resources, VPC)
    if not vpcs:
        return
    covered: set[str] = set()
    unplaced: list[str] = []
    for fl in of_type(args.resources, FLOW_LOG):
        if not has(fl.props, "vpcId"):
            continue
        deps = linked(fl, "vpcId", VPC)
        covered.update(d.urn for d in deps)
        if not deps and _computed(fl.props, "vpcId"):
            unplaced.append(fl.name)
    missing = [v for v in vpcs if v.urn not in covered]
    if unplaced and missing:
        raise unknown(
            "vpcId",
            f"flow logs {sorted(unplaced)} take vpcId from a computed value not linked to a VPC, so whether VPCs "
            f"{sorted(v.name for v in missing)} have flow logs cannot be decided at preview",
        )
    for v in missing:
        report(
            v.urn,
            "has no aws.ec2.FlowLog: network traffic to and from the GPU fleet is not recorded. Fix: add "
            "aws.ec2.FlowLog(vpc_id=vpc.id, traffic_type='ALL', log_destination=...).",
        )


GUARDRAIL = Guardrail(
    id="GC-SEC-029",
    name="vpc-flow-logs",
    description="Every VPC must have a VPC-level flow log.",
    category="security",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Add aws.ec2.FlowLog with vpc_id=vpc.id and trafficType ALL to a CloudWatch log group or S3.",
    references=("CKV2_AWS_11", "AWS-0178", "SH EC2.6"),
    kind="stack",
    validate=validate,
)
