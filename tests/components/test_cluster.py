"""GpuCluster under recording mocks, the platform composition, and the cluster spec's rules through parse_platform."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpucloud.components.cluster import GpuCluster, GpuClusterConfig, kubeconfig_json
from gpucloud.plan import SECRET, Plan, ResourceRecord, run_callable, run_program
from gpucloud.spec import ClusterSpec, SpecError, parse_platform

ROOT = Path(__file__).resolve().parents[2]
TAGS = {"CostCenter": "ml", "Team": "platform", "Project": "gpucloud", "Env": "dev"}
AZS = {"us-east-1a": "subnet-0a1b2c3d4e5f60001", "us-east-1b": "subnet-0a1b2c3d4e5f60002"}
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
CLUSTER = "aws:eks/cluster:Cluster"
ADDON = "aws:eks/addon:Addon"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
KEY = "aws:kms/key:Key"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
ROLE = "aws:iam/role:Role"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def plan_cluster(name: str = "eks", environment: str = "dev", cluster_name: str = "gpu-test", **cluster: Any) -> Plan:
    spec = ClusterSpec.model_validate({"kubernetesVersion": "1.34", **cluster})
    config = GpuClusterConfig(
        region="us-east-1", tags=TAGS, cluster_name=cluster_name, environment=environment, cluster=spec
    )
    return run_callable(
        lambda: GpuCluster(
            name,
            config,
            vpc_id="vpc-0a1b2c3d4e5f60789",
            vpc_cidr="10.0.0.0/16",
            subnet_ids_by_az=AZS,
            efa_security_group_id="sg-0123456789abcdef0",
        ),
        preview=True,
    )


def only(plan: Plan, type_: str) -> ResourceRecord:
    found = plan.of_type(type_)
    assert len(found) == 1, [r.name for r in found]
    return found[0]


@pytest.fixture(scope="module")
def dev() -> Plan:
    return plan_cluster()


def test_resources(dev: Plan) -> None:
    assert Counter(r.type for r in dev) == {
        "gpucloud:cluster:GpuCluster": 1,
        KEY: 1,
        "aws:kms/alias:Alias": 1,
        LOG_GROUP: 1,
        ROLE: 3,
        ATTACH: 5,
        "aws:iam/rolePolicy:RolePolicy": 1,
        CLUSTER: 1,
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider": 1,
        "aws:iam/instanceProfile:InstanceProfile": 1,
        "aws:ec2/securityGroup:SecurityGroup": 1,
        INGRESS: 3,
        EGRESS: 2,
        ADDON: 5,
        LT: 1,
        NODE_GROUP: 1,
        "pulumi:providers:kubernetes": 1,
    }


def test_private_endpoint_encryption_logs_access(dev: Plan) -> None:
    cluster = only(dev, CLUSTER)
    assert cluster.get("name") == "gpu-test"
    assert cluster.get("version") == "1.34"
    assert cluster.get("vpcConfig.endpointPrivateAccess") is True
    assert cluster.get("vpcConfig.endpointPublicAccess") is False
    assert "publicAccessCidrs" not in cluster.get("vpcConfig")
    assert cluster.get("vpcConfig.subnetIds") == list(AZS.values())
    assert cluster.get("encryptionConfig.resources") == ["secrets"]
    assert cluster.property_dependencies["encryptionConfig"] == [only(dev, KEY).urn]
    assert cluster.get("enabledClusterLogTypes") == ["api", "audit", "authenticator"]
    assert cluster.get("accessConfig") == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    assert cluster.get("upgradePolicy") == {"supportType": "STANDARD"}
    assert cluster.get("bootstrapSelfManagedAddons") is False
    assert cluster.get("deletionProtection") is False
    log_group = only(dev, LOG_GROUP)
    assert log_group.get("name") == "/aws/eks/gpu-test/cluster"
    assert log_group.get("retentionInDays") == 90.0
    assert log_group.property_dependencies["kmsKeyId"] == [only(dev, KEY).urn]
    # The log group exists before the cluster, or EKS creates an unencrypted one first.
    assert log_group.urn in cluster.dependencies


def test_created_key(dev: Plan) -> None:
    key = only(dev, KEY)
    assert key.get("enableKeyRotation") is True
    assert key.get("deletionWindowInDays") == 30.0
    assert only(dev, "aws:kms/alias:Alias").get("name") == "alias/gpu-test-eks"
    statements = json.loads(key.get("policy"))["Statement"]
    assert [s["Sid"] for s in statements] == [
        "AccountAdministersThroughIam",
        "CloudWatchLogsEncryptsThisAccountsLogGroups",
        "AutoScalingUsesKeyForNodeVolumes",
        "AutoScalingGrantsForAttachedVolumes",
    ]
    assert all(s["Principal"] not in ("*", {"AWS": "*"}) for s in statements)
    assert statements[2]["Principal"] == {
        "AWS": "arn:aws:iam::123456789012:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
    }
    # The cluster role's KMS permissions name this key (its ARN is known only after creation).
    assert dev.find("aws:iam/rolePolicy:RolePolicy", "eks-cluster-kms").property_dependencies["policy"] == [key.urn]
    assert dev.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole") == []


def test_given_key() -> None:
    plan = plan_cluster(kmsKeyArn=KEY_ARN)
    assert plan.of_type(KEY) == [] and plan.of_type("aws:kms/alias:Alias") == []
    assert only(plan, CLUSTER).get("encryptionConfig.provider.keyArn") == KEY_ARN
    assert only(plan, LOG_GROUP).get("kmsKeyId") == KEY_ARN
    assert only(plan, LT).get("blockDeviceMappings.0.ebs.kmsKeyId") == KEY_ARN
    kms_policy = json.loads(plan.find("aws:iam/rolePolicy:RolePolicy", "eks-cluster-kms").get("policy"))
    assert kms_policy["Statement"] == [
        {
            "Effect": "Allow",
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
            "Resource": KEY_ARN,
        }
    ]


def test_autoscaling_service_linked_role_toggle() -> None:
    plan = plan_cluster(createAutoscalingServiceLinkedRole=True)
    slr = only(plan, "aws:iam/serviceLinkedRole:ServiceLinkedRole")
    assert slr.get("awsServiceName") == "autoscaling.amazonaws.com"
    assert slr.urn in only(plan, KEY).dependencies


def test_public_endpoint_with_cidrs() -> None:
    plan = plan_cluster(endpointPublicAccess=True, publicAccessCidrs=["203.0.113.0/24"])
    vpc_config = only(plan, CLUSTER).get("vpcConfig")
    assert vpc_config["endpointPublicAccess"] is True
    assert vpc_config["endpointPrivateAccess"] is True
    assert vpc_config["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_prod_access_and_upgrade_policy() -> None:
    admin = "arn:aws:iam::123456789012:role/platform-admin"
    plan = plan_cluster(environment="prod", adminPrincipalArns=[admin], logTypes=["audit", "authenticator"])
    cluster = only(plan, CLUSTER)
    assert cluster.get("accessConfig.bootstrapClusterCreatorAdminPermissions") is False
    assert cluster.get("upgradePolicy.supportType") == "EXTENDED"
    assert cluster.get("deletionProtection") is True
    assert cluster.get("enabledClusterLogTypes") == ["audit", "authenticator"]
    entry = only(plan, "aws:eks/accessEntry:AccessEntry")
    assert (entry.name, entry.get("principalArn"), entry.get("type"), entry.get("clusterName")) == (
        "eks-admin-platform-admin",
        admin,
        "STANDARD",
        "gpu-test",
    )
    assoc = only(plan, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert assoc.get("policyArn") == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    assert assoc.get("accessScope") == {"type": "cluster"}
    assert assoc.get("principalArn") == admin
    assert entry.urn in assoc.dependencies


def test_no_admins_no_access_entries(dev: Plan) -> None:
    assert (
        dev.of_type("aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation") == []
    )


def test_roles_and_policies(dev: Plan) -> None:
    trust = {r.name: json.loads(r.get("assumeRolePolicy"))["Statement"][0] for r in dev.of_type(ROLE)}
    assert {n: (t["Principal"]["Service"], t["Action"]) for n, t in trust.items()} == {
        "eks-cluster-role": ("eks.amazonaws.com", ["sts:AssumeRole", "sts:TagSession"]),
        "eks-node-role": ("ec2.amazonaws.com", ["sts:AssumeRole"]),
        "eks-vpc-cni-role": ("pods.eks.amazonaws.com", ["sts:AssumeRole", "sts:TagSession"]),
    }
    roles = {r.urn: r.name for r in dev.of_type(ROLE)}
    attached = sorted((roles[a.property_dependencies["role"][0]], a.get("policyArn")) for a in dev.of_type(ATTACH))
    assert attached == [
        ("eks-cluster-role", "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"),
        ("eks-node-role", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"),
        ("eks-node-role", "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"),
        ("eks-node-role", "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"),
        ("eks-vpc-cni-role", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"),
    ]
    profile = only(dev, "aws:iam/instanceProfile:InstanceProfile")
    assert profile.property_dependencies["role"] == [dev.find(ROLE, "eks-node-role").urn]


def test_oidc_provider(dev: Plan) -> None:
    oidc = only(dev, "aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.get("clientIdLists") == ["sts.amazonaws.com"]
    assert "thumbprintLists" not in oidc.inputs
    assert oidc.property_dependencies["url"] == [only(dev, CLUSTER).urn]


def test_addons_default_versions_and_order(dev: Plan) -> None:
    addons = {r.get("addonName"): r for r in dev.of_type(ADDON)}
    assert sorted(addons) == [
        "coredns",
        "eks-node-monitoring-agent",
        "eks-pod-identity-agent",
        "kube-proxy",
        "vpc-cni",
    ]
    # Every add-on pinned to the versions table's build for 1.34 (gpucloud/versions/eks.json).
    assert {k: a.get("addonVersion") for k, a in addons.items()} == {
        "coredns": "v1.13.2-eksbuild.7",
        "eks-node-monitoring-agent": "v1.6.1-eksbuild.1",
        "eks-pod-identity-agent": "v1.3.9-eksbuild.1",
        "kube-proxy": "v1.34.6-eksbuild.13",
        "vpc-cni": "v1.20.1-eksbuild.3",
    }
    for addon in addons.values():
        assert addon.get("resolveConflictsOnCreate") == "OVERWRITE"
        assert addon.get("resolveConflictsOnUpdate") == "OVERWRITE"
        assert addon.get("clusterName") == "gpu-test"
    cni = addons["vpc-cni"]
    assert [a["serviceAccount"] for a in cni.get("podIdentityAssociations")] == ["aws-node"]
    assert cni.property_dependencies["podIdentityAssociations"] == [dev.find(ROLE, "eks-vpc-cni-role").urn]
    assert addons["eks-pod-identity-agent"].urn in cni.dependencies
    node_group = only(dev, NODE_GROUP)
    for before in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent"):
        assert addons[before].urn in node_group.dependencies
    for after in ("coredns", "eks-node-monitoring-agent"):
        assert node_group.urn in addons[after].dependencies


def test_addon_versions_pinned_by_the_spec_or_the_table_of_the_minor() -> None:
    plan = plan_cluster(kubernetesVersion="1.35", addonVersions={"vpc-cni": "v1.20.4-eksbuild.2"})
    versions = {r.get("addonName"): r.get("addonVersion") for r in plan.of_type(ADDON)}
    assert versions == {
        "vpc-cni": "v1.20.4-eksbuild.2",
        "coredns": "v1.14.2-eksbuild.4",
        "kube-proxy": "v1.35.3-eksbuild.13",
        "eks-pod-identity-agent": "v1.3.9-eksbuild.1",
        "eks-node-monitoring-agent": "v1.6.1-eksbuild.1",
    }


def test_default_and_latest_are_not_pins() -> None:
    issues = dict(issues_for(addonVersions={"coredns": "latest", "vpc-cni": "default"}))
    assert "pin an exact build such as v1.20.1-eksbuild.3" in issues["gpucloud:platform.cluster.addonVersions"]


def test_system_node_group_pins_kubelet_minor_and_ami_release() -> None:
    default = only(plan_cluster(kubernetesVersion="1.35"), NODE_GROUP)
    assert (default.get("version"), default.get("releaseVersion")) == ("1.35", "1.35.6-20260714")
    pinned = only(plan_cluster(kubernetesVersion="1.35", amiReleases={"al2023": "1.35.5-20260601"}), NODE_GROUP)
    assert (pinned.get("version"), pinned.get("releaseVersion")) == ("1.35", "1.35.5-20260601")
    # Nodes one minor behind the control plane (mid-upgrade) boot the table's release of their own minor.
    behind = only(plan_cluster(kubernetesVersion="1.36", systemNodeGroup={"kubernetesVersion": "1.35"}), NODE_GROUP)
    assert (behind.get("version"), behind.get("releaseVersion")) == ("1.35", "1.35.6-20260714")


def test_bad_ami_release_is_named() -> None:
    issues = dict(issues_for(amiReleases={"al2023": "v20260714"}))
    assert (
        "not an al2023 AMI release version; releases look like 1.35.6-20260714"
        in (issues["gpucloud:platform.cluster.amiReleases"])
    )


def test_system_node_group_and_launch_template(dev: Plan) -> None:
    lt = only(dev, LT)
    assert lt.get("metadataOptions") == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1.0,
        "instanceMetadataTags": "disabled",
    }
    assert lt.get("blockDeviceMappings") == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 50.0,
                "volumeType": "gp3",
                "encrypted": "true",
                "kmsKeyId": lt.get("blockDeviceMappings.0.ebs.kmsKeyId"),
                "deleteOnTermination": "true",
            },
        }
    ]
    assert lt.property_dependencies["blockDeviceMappings"] == [only(dev, KEY).urn]
    assert sorted(t["resourceType"] for t in lt.get("tagSpecifications")) == ["instance", "volume"]
    for spec in lt.get("tagSpecifications"):
        assert {k: spec["tags"][k] for k in TAGS} == TAGS
    node_sg = dev.find("aws:ec2/securityGroup:SecurityGroup", "eks-node-sg").urn
    assert node_sg in lt.property_dependencies["vpcSecurityGroupIds"]
    assert only(dev, CLUSTER).urn in lt.property_dependencies["vpcSecurityGroupIds"]

    ng = only(dev, NODE_GROUP)
    assert ng.get("amiType") == "AL2023_x86_64_STANDARD"
    assert ng.get("capacityType") == "ON_DEMAND"
    assert ng.get("instanceTypes") == ["m7i.xlarge"]
    assert ng.get("scalingConfig") == {"minSize": 2.0, "desiredSize": 2.0, "maxSize": 4.0}
    assert ng.get("subnetIds") == list(AZS.values())
    assert "taints" not in ng.inputs
    assert ng.ignore_changes == ["scalingConfig.desiredSize"]
    assert ng.property_dependencies["launchTemplate"] == [lt.urn]


def test_node_security_group_rules(dev: Plan) -> None:
    node_sg = dev.find("aws:ec2/securityGroup:SecurityGroup", "eks-node-sg")
    assert node_sg.get("tags")["karpenter.sh/discovery"] == "gpu-test"
    rules = {r.name: r for r in dev.of_type(INGRESS, EGRESS)}
    assert all(r.get("description") for r in rules.values())
    assert rules["eks-node-self-in"].property_dependencies["referencedSecurityGroupId"] == [node_sg.urn]
    assert rules["eks-node-https-out"].get("cidrIpv4") == "0.0.0.0/0"
    assert (rules["eks-node-https-out"].get("fromPort"), rules["eks-node-https-out"].get("toPort")) == (443.0, 443.0)
    assert rules["eks-node-vpc-out"].get("cidrIpv4") == "10.0.0.0/16"
    assert not any(r.get("cidrIpv4") == "0.0.0.0/0" for r in dev.of_type(INGRESS))


def test_kubeconfig_secret_and_provider(dev: Plan) -> None:
    provider = only(dev, "pulumi:providers:kubernetes")
    assert provider.name == "eks-k8s"
    assert provider.get("kubeconfig") == SECRET
    config = json.loads(kubeconfig_json("gpu-test", "https://x.eks.amazonaws.com", "Q0E=", "us-east-1"))
    assert config["clusters"][0]["cluster"] == {
        "server": "https://x.eks.amazonaws.com",
        "certificate-authority-data": "Q0E=",
    }
    assert config["users"][0]["user"]["exec"]["command"] == "aws"
    assert config["users"][0]["user"]["exec"]["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "gpu-test",
        "--region",
        "us-east-1",
        "--output",
        "json",
    ]


def test_two_clusters_in_one_program_do_not_collide() -> None:
    def program() -> None:
        for name in ("blue", "green"):
            GpuCluster(
                name,
                GpuClusterConfig(
                    region="us-east-1",
                    tags=TAGS,
                    cluster_name=f"gpu-{name}",
                    environment="dev",
                    cluster=ClusterSpec(kubernetes_version="1.34"),
                ),
                vpc_id="vpc-0a1b2c3d",
                vpc_cidr="10.0.0.0/16",
                subnet_ids_by_az=AZS,
            )

    plan = run_callable(program)
    urns = [r.urn for r in plan]
    assert len(urns) == len(set(urns)) == 2 * len(plan_cluster())
    assert sorted(r.get("name") for r in plan.of_type(CLUSTER)) == ["gpu-blue", "gpu-green"]
    assert sorted(r.get("name") for r in plan.of_type(LOG_GROUP)) == [
        "/aws/eks/gpu-blue/cluster",
        "/aws/eks/gpu-green/cluster",
    ]
    assert sorted(r.get("name") for r in plan.of_type("aws:kms/alias:Alias")) == [
        "alias/gpu-blue-eks",
        "alias/gpu-green-eks",
    ]


# --- the stacks: network + cluster composed by the platform --------------------------------------------------------


@pytest.mark.parametrize(("stack", "nats", "endpoints"), [("dev", 1, 1), ("staging", 1, 13), ("prod", 3, 13)])
def test_stacks_compose_network_and_cluster(stack: str, nats: int, endpoints: int) -> None:
    plan = run_program(ROOT, stack)
    assert plan.warnings == []
    assert len(plan.of_type("aws:ec2/natGateway:NatGateway")) == nats
    assert len(plan.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")) == endpoints
    cluster = only(plan, CLUSTER)
    assert cluster.get("vpcConfig.endpointPublicAccess") is False
    assert cluster.get("encryptionConfig.resources") == ["secrets"]
    assert "audit" in cluster.get("enabledClusterLogTypes")
    # The cluster's five add-ons, the FSx CSI driver every shipped stack's storage adds, the EBS CSI driver for
    # Prometheus' volume (every shipped stack runs kube-prometheus-stack), and Container Insights where the
    # stack's addons section turns it on (prod).
    expected = {
        "vpc-cni",
        "coredns",
        "kube-proxy",
        "eks-pod-identity-agent",
        "eks-node-monitoring-agent",
        "aws-fsx-csi-driver",
        "aws-ebs-csi-driver",
    }
    if stack == "prod":
        expected.add("amazon-cloudwatch-observability")
    assert {r.get("addonName") for r in plan.of_type(ADDON)} == expected
    assert len(plan.of_type(NODE_GROUP)) >= 1
    efa_sg = next(r for r in plan.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-efa-sg"))
    self_rules = [
        r.type
        for r in plan.of_type(INGRESS, EGRESS)
        if r.property_dependencies.get("referencedSecurityGroupId") == [efa_sg.urn]
        and r.property_dependencies.get("securityGroupId") == [efa_sg.urn]
    ]
    assert sorted(self_rules) == [EGRESS, INGRESS]
    assert set(plan.outputs) >= {
        "clusterName",
        "kubeconfig",
        "oidcProviderArn",
        "oidcProviderUrl",
        "nodeRoleArn",
        "nodeRoleName",
        "nodeSecurityGroupId",
        "clusterSecurityGroupId",
        "efaSecurityGroupId",
        "vpcId",
        "privateSubnetIds",
        "privateSubnetIdsByAz",
        "kmsKeyArn",
        "kubernetesVersion",
    }
    assert plan.outputs["kubernetesVersion"] == "1.35"
    if stack == "prod":
        assert len(plan.of_type("aws:eks/accessEntry:AccessEntry")) == 1


def test_platform_builds_cluster_handle() -> None:
    from gpucloud.components.platform import build

    spec = parse_platform(yaml.safe_load((ROOT / "stacks/Pulumi.dev.yaml").read_text())["config"]["gpucloud:platform"])
    captured: dict[str, Any] = {}
    run_callable(lambda: captured.setdefault("platform", build(spec)), region="us-west-2")
    handle = captured["platform"].cluster
    assert handle is not None
    assert handle.kubernetes_version == "1.35"
    assert list(handle.subnet_ids_by_az) == ["us-west-2a", "us-west-2b"]
    assert handle.k8s_provider is captured["platform"].components["cluster"].k8s_provider
    assert handle.vpc_cidr == "10.20.0.0/16"


# --- bad spec values through parse_platform ------------------------------------------------------------------------


def base_spec() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]["gpucloud:platform"]
    return copy.deepcopy(data)


def issues_for(environment: str | None = None, **cluster: Any) -> list[tuple[str, str]]:
    data = base_spec()
    data["cluster"] = {"kubernetesVersion": "1.34", **cluster}
    if environment:
        data["environment"] = environment
    with pytest.raises(SpecError) as err:
        parse_platform(data)
    return [(i.path, i.message) for i in err.value.issues]


def test_unsupported_kubernetes_version() -> None:
    assert issues_for(kubernetesVersion="1.27") == [
        (
            "gpucloud:platform.cluster.kubernetesVersion",
            "Kubernetes '1.27' is not in EKS standard or extended support; use one of "
            "['1.32', '1.33', '1.34', '1.35', '1.36'] (quote it in YAML: \"1.35\")",
        )
    ]


def test_unquoted_version_is_read_as_its_string() -> None:
    data = base_spec()
    data["cluster"] = {"kubernetesVersion": 1.34}
    assert parse_platform(data).cluster.kubernetes_version == "1.34"


def test_public_endpoint_without_cidrs() -> None:
    assert issues_for(endpointPublicAccess=True) == [
        (
            "gpucloud:platform.cluster.publicAccessCidrs",
            "a public endpoint needs an explicit CIDR allow-list; list your office/VPN CIDRs or set "
            "endpointPublicAccess: false",
        )
    ]


def test_public_endpoint_open_to_the_world() -> None:
    assert issues_for(endpointPublicAccess=True, publicAccessCidrs=["203.0.113.0/24", "0.0.0.0/0"]) == [
        (
            "gpucloud:platform.cluster.publicAccessCidrs[1]",
            "0.0.0.0/0 opens the API to the internet; list specific CIDRs",
        )
    ]


def test_audit_logs_required() -> None:
    assert issues_for(logTypes=["api"]) == [
        (
            "gpucloud:platform.cluster.logTypes",
            "must include ['audit', 'authenticator'] (who did what, and who logged in)",
        )
    ]


def test_prod_needs_admins_and_key_in_region() -> None:
    issues = issues_for(environment="prod", kmsKeyArn=KEY_ARN.replace("us-east-1", "us-west-2"))
    assert issues == [
        ("gpucloud:platform.cluster.kmsKeyArn", "the key is in us-west-2; EKS needs a key in us-east-1"),
        (
            "gpucloud:platform.cluster.adminPrincipalArns",
            "prod clusters do not grant the creator admin; list the IAM roles that administer the cluster",
        ),
    ]


def test_bad_values_in_cluster_fields() -> None:
    issues = dict(
        issues_for(
            kmsKeyArn="alias/eks",
            adminPrincipalArns=["platform-admin"],
            addonVersions={"vpc-cni": "1.20"},
            systemNodeGroup={"instanceType": "p5.48xlarge"},
        )
    )
    assert set(issues) == {
        "gpucloud:platform.cluster.kmsKeyArn",
        "gpucloud:platform.cluster.adminPrincipalArns",
        "gpucloud:platform.cluster.addonVersions",
        "gpucloud:platform.cluster.systemNodeGroup.instanceType",
    }
    assert "not a KMS key ARN" in issues["gpucloud:platform.cluster.kmsKeyArn"]
    assert "system nodes are CPU-only" in issues["gpucloud:platform.cluster.systemNodeGroup.instanceType"]
