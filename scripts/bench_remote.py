"""Plan time of an EKS cluster with a GPU managed node group written with pulumi_eks (expanded by
gpucloud.plan.remote) against the same resources written with raw pulumi_aws (docs/performance.md).

Both run in one warm interpreter (imports and rendered charts paid once), each as `gpucloud plan` does it: the
program under the mock runtime, then conformance, cost and the prod guardrail pack. Prints a JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ASSUME_EC2 = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}}],
    }
)
SUBNETS = ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002", "subnet-0a1b2c3d4e5f60003"]
VPC = "vpc-0a1b2c3d4e5f60000"


def with_pulumi_eks() -> None:
    import pulumi_aws as aws
    import pulumi_eks as eks

    role = aws.iam.Role("gpu-node", assume_role_policy=ASSUME_EC2)
    cluster = eks.Cluster(
        "gpu",
        vpc_id=VPC,
        private_subnet_ids=SUBNETS,
        skip_default_node_group=True,
        authentication_mode="API",
        instance_roles=[],
    )
    # As its URN: a resource reference as input waits on the runtime fix of issue 26 item 1.
    eks.ManagedNodeGroup(
        "gpu-ng",
        cluster=cluster.urn,  # type: ignore[arg-type]
        node_role_arn=role.arn,
        instance_types=["g6e.12xlarge"],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=1, max_size=4),
        operating_system="AL2023",
        gpu=True,
    )


def with_raw_pulumi_aws() -> None:
    """The same resources pulumi-eks registers for the program above, written by hand."""
    import pulumi_aws as aws
    import pulumi_kubernetes as k8s

    eks_role = aws.iam.Role(
        "gpu-eksRole-role",
        assume_role_policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Action": ["sts:AssumeRole", "sts:TagSession"],
                        "Effect": "Allow",
                        "Principal": {"Service": ["eks.amazonaws.com"]},
                    }
                ],
            }
        ),
    )
    aws.iam.RolePolicyAttachment(
        "gpu-eksRole-4b490823", role=eks_role.name, policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
    )
    cluster_sg = aws.ec2.SecurityGroup("gpu-eksClusterSecurityGroup", vpc_id=VPC, revoke_rules_on_delete=True)
    rule = aws.ec2.SecurityGroupRule
    rule(
        "gpu-eksClusterInternetEgressRule",
        type="egress",
        from_port=0,
        to_port=0,
        protocol="-1",
        cidr_blocks=["0.0.0.0/0"],
        security_group_id=cluster_sg.id,
    )
    cluster = aws.eks.Cluster(
        "gpu-eksCluster",
        role_arn=eks_role.arn,
        vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=SUBNETS, security_group_ids=[cluster_sg.id]),
        access_config=aws.eks.ClusterAccessConfigArgs(authentication_mode="API"),
    )
    for addon in ("kube-proxy", "vpc-cni"):
        aws.eks.Addon(f"gpu-{addon}", cluster_name=cluster.name, addon_name=addon, preserve=True)
    k8s.Provider("gpu-eks-k8s", kubeconfig=cluster.endpoint)
    node_sg = aws.ec2.SecurityGroup("gpu-nodeSecurityGroup", vpc_id=VPC, revoke_rules_on_delete=True)
    rule(
        "gpu-eksNodeIngressRule",
        type="ingress",
        from_port=0,
        to_port=0,
        protocol="-1",
        security_group_id=node_sg.id,
        self=True,
    )
    for name, lo, hi in (
        ("gpu-eksNodeClusterIngressRule", 1025, 65535),
        ("gpu-eksExtApiServerClusterIngressRule", 443, 443),
    ):
        rule(
            name,
            type="ingress",
            from_port=lo,
            to_port=hi,
            protocol="tcp",
            security_group_id=node_sg.id,
            source_security_group_id=cluster_sg.id,
        )
    rule(
        "gpu-eksNodeInternetEgressRule",
        type="egress",
        from_port=0,
        to_port=0,
        protocol="-1",
        cidr_blocks=["0.0.0.0/0"],
        security_group_id=node_sg.id,
    )
    rule(
        "gpu-eksClusterIngressRule",
        type="ingress",
        from_port=443,
        to_port=443,
        protocol="tcp",
        security_group_id=cluster_sg.id,
        source_security_group_id=node_sg.id,
    )
    node_role = aws.iam.Role("gpu-node", assume_role_policy=ASSUME_EC2)
    aws.eks.NodeGroup(
        "gpu-ng",
        cluster_name=cluster.name,
        node_role_arn=node_role.arn,
        subnet_ids=SUBNETS,
        instance_types=["g6e.12xlarge"],
        ami_type="AL2023_x86_64_NVIDIA",
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=1, max_size=4),
    )


def _plan(program: Any) -> tuple[float, float, int]:
    from gpucloud.plan import run_callable
    from gpucloud.report.pipeline import build_report

    prod = json.loads((ROOT / "policies/configs/prod.json").read_text())
    wall, cpu = time.perf_counter(), time.process_time()
    plan = run_callable(program, project="bench", stack="prod")
    report = build_report(plan, policy_config=prod)
    assert any(i["instance_type"] == "g6e.12xlarge" for i in report["cost"]["items"])
    return time.perf_counter() - wall, time.process_time() - cpu, len(plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for program in (with_pulumi_eks, with_raw_pulumi_aws):
        _plan(program)  # warm: imports, schemas
    for label, program in (("pulumi_eks", with_pulumi_eks), ("raw pulumi_aws", with_raw_pulumi_aws)):
        runs = [_plan(program) for _ in range(args.runs)]
        out[label] = {
            "resources": runs[0][2],
            "wall_s_median": round(statistics.median(r[0] for r in runs), 3),
            "wall_s_min": round(min(r[0] for r in runs), 3),
            "cpu_s_median": round(statistics.median(r[1] for r in runs), 3),
        }
    out["ratio_wall_median"] = round(out["pulumi_eks"]["wall_s_median"] / out["raw pulumi_aws"]["wall_s_median"], 2)
    out["ratio_cpu_median"] = round(out["pulumi_eks"]["cpu_s_median"] / out["raw pulumi_aws"]["cpu_s_median"], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
