"""Change classification, replace semantics, disruption and data findings on hand-built plan resources."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpucloud.impact import ImpactConfigError, change_impact
from gpucloud.impact.changes import classify, leaf_diff
from gpucloud.plan.model import UNKNOWN

NG = "urn:pulumi:dev::p::aws:eks/nodeGroup:NodeGroup::train"
ROLE = "urn:pulumi:dev::p::aws:iam/role:Role::node-role"
BUCKET = "urn:pulumi:dev::p::aws:s3/bucket:Bucket::datasets"


def resource(urn: str, inputs: dict[str, Any], deps: tuple[str, ...] = ()) -> dict[str, Any]:
    type_, name = urn.split("::")[2], urn.split("::")[3]
    return {"urn": urn, "type": type_, "name": name, "custom": True, "dependencies": list(deps), "inputs": inputs}


def base() -> list[dict[str, Any]]:
    return [
        resource(ROLE, {"name": "node-role-1234567", "assumeRolePolicy": "{}"}),
        resource(
            NG,
            {
                "clusterName": "c",
                "nodeRoleArn": UNKNOWN,
                "subnetIds": ["subnet-1"],
                "instanceTypes": ["p4d.24xlarge"],
                "capacityType": "ON_DEMAND",
                "releaseVersion": "1.35.6-20260714",
                "scalingConfig": {"minSize": 0, "desiredSize": 3, "maxSize": 4},
            },
            deps=(ROLE,),
        ),
        resource(BUCKET, {"bucket": "impact-datasets-123456789012"}),
    ]


def impact(head: list[dict[str, Any]], config: dict[str, Any] | None = None) -> dict[str, Any]:
    return change_impact({"project": "p", "stack": "dev", "resources": base()}, head, config)


def by_name(ci: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in ci["changes"] if c["name"] == name)


def test_unchanged_plan_shows_zero_changes() -> None:
    ci = impact(base())
    assert ci["summary"] == {
        "create": 0, "update": 0, "replace": 0, "delete": 0, "unchanged": 3, "undecided": 0, "changes": 0,
    }  # fmt: skip
    assert ci["changes"] == [] and ci["disruption"]["pools"] == [] and ci["blocking"] == 0


def test_instance_type_change_replaces_the_node_group_and_drains_its_gpu_nodes() -> None:
    head = base()
    head[1]["inputs"]["instanceTypes"] = ["p5.48xlarge"]
    ci = impact(head)
    ng = by_name(ci, "train")
    assert ng["change"] == "replace"
    assert ng["forced_by"] == ["instanceTypes"]
    assert ng["paths"] == ["instanceTypes[0]"]
    assert ng["source"]["path"] == "internal/service/eks/node_group.go"
    [pool] = ci["disruption"]["pools"]
    assert (pool["name"], pool["action"], pool["nodes"], pool["gpus_per_node"]) == ("train", "replaced", 3, 8)
    # 3 p4d nodes x 8 A100s x (300 s checkpoint + 600 s restart) = 6 GPU-hours.
    assert pool["gpu_hours_at_risk"] == 6.0
    assert (ci["disruption"]["gpu_nodes"], ci["disruption"]["gpu_hours_at_risk"]) == (3, 6.0)
    assert ci["blocking"] == 0


def test_release_version_change_is_an_update_that_drains_the_pool() -> None:
    head = base()
    head[1]["inputs"]["releaseVersion"] = "1.35.7-20260801"
    ci = impact(head)
    ng = by_name(ci, "train")
    assert (ng["change"], ng["rolls"]) == ("update", ["releaseVersion"])
    [pool] = ci["disruption"]["pools"]
    assert (pool["action"], pool["gpu_nodes"]) == ("drained", 3)


def test_scaling_change_is_an_update_without_disruption() -> None:
    head = base()
    head[1]["inputs"]["scalingConfig"]["maxSize"] = 8
    ci = impact(head)
    assert by_name(ci, "train")["change"] == "update"
    assert ci["disruption"]["pools"] == []


def test_bucket_rename_is_data_replaced_and_blocks_unless_declared() -> None:
    head = base()
    head[2]["inputs"]["bucket"] = "impact-datasets-v2-123456789012"
    ci = impact(head)
    assert by_name(ci, "datasets")["forced_by"] == ["bucket"]
    [finding] = ci["data"]
    assert (finding["change"], finding["blocking"], ci["blocking"]) == ("replace", True, 1)
    assert "gpucloud:allowDataReplacement" in finding["message"]
    declared = impact(head, {"gpucloud:allowDataReplacement": ["datasets"]})
    assert (declared["data"][0]["declared"], declared["blocking"]) == (True, 0)
    by_urn = impact(head, {"gpucloud:allowDataReplacement": '["' + BUCKET + '"]'})  # stack config as JSON text
    assert by_urn["blocking"] == 0


def test_a_renamed_resource_is_a_delete_and_a_create() -> None:
    head = base()
    head[2] = resource(BUCKET.replace("datasets", "datasets-v2"), {"bucket": "impact-datasets-123456789012"})
    ci = impact(head)
    assert [(c["name"], c["change"]) for c in ci["changes"]] == [("datasets-v2", "create"), ("datasets", "delete")]
    assert [(d["name"], d["change"], d["blocking"]) for d in ci["data"]] == [("datasets", "delete", True)]


def test_a_type_without_semantics_is_undecided() -> None:
    # A type the table does not list (not in the shipped plans or the corpus).
    fleet = "urn:pulumi:dev::p::aws:gamelift/fleet:Fleet::jobs"
    [c] = classify([resource(fleet, {"name": "jobs"})], [resource(fleet, {"name": "jobs-v2"})])
    assert (c.change, c.forced_by) == ("update", [])
    assert c.undecided == "update or replace: undecided (no replace semantics for aws:gamelift/fleet:Fleet)"


def test_role_policy_change_is_an_update_and_a_rename_a_replace() -> None:
    head = base()
    head[0]["inputs"]["assumeRolePolicy"] = '{"Version": "2012-10-17"}'
    assert (by_name(impact(head), "node-role")["change"], impact(head)["summary"]["undecided"]) == ("update", 0)
    head[0]["inputs"]["name"] = "node-role-v2"
    assert by_name(impact(head), "node-role")["forced_by"] == ["name"]


def test_unknown_values_may_change_only_when_what_they_read_changes() -> None:
    head = base()
    head[0]["inputs"]["assumeRolePolicy"] = '{"Version": "2012-10-17"}'  # the role changes: its arn may too
    ci = impact(head)
    ng = by_name(ci, "train")
    [pool] = ci["disruption"]["pools"]
    assert (pool["action"], pool["gpu_hours_at_risk"], ci["disruption"]["gpu_nodes"]) == ("may be replaced", 6.0, 0)
    assert ng["may_change"] == ["nodeRoleArn"]
    assert ng["may_replace_by"] == ["nodeRoleArn"]  # nodeRoleArn forces a replace if its value changes
    assert ng["change"] == "update"  # not guessed as a replace
    head = base()
    head[1]["inputs"]["clusterName"] = UNKNOWN  # known before, unknown now
    assert by_name(impact(head), "train")["may_change"] == ["clusterName"]


def test_leaf_diff_names_each_changed_path() -> None:
    before = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    after = {"a": {"b": 2, "c": [1, 3]}, "e": "y"}
    assert list(leaf_diff(before, after)) == [("a.b", False), ("a.c[1]", False), ("d", False), ("e", False)]


@pytest.mark.parametrize(
    ("type_", "path", "expected"),
    [
        ("kubernetes:apps/v1:Deployment", "spec.selector.matchLabels.app", "replace"),
        ("kubernetes:apps/v1:Deployment", "spec.replicas", "update"),
        ("kubernetes:apps/v1:StatefulSet", "spec.volumeClaimTemplates", "replace"),
        ("kubernetes:batch/v1:Job", "spec.template.spec.containers", "replace"),
        ("kubernetes:core/v1:Service", "spec.clusterIP", "replace"),
        ("kubernetes:core/v1:PersistentVolumeClaim", "spec.resources.requests.storage", "replace"),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "metadata.name", "replace"),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "spec.cohort", "update"),
        ("aws:eks/addon:Addon", "addonVersion", "update"),
        ("aws:eks/addon:Addon", "addonName", "replace"),
        ("aws:ebs/volume:Volume", "size", "update"),
        ("aws:ebs/volume:Volume", "kmsKeyId", "replace"),
        # terraform-provider-aws ForceNew (internal/service/<svc>/<file>.go at the entry's commit).
        ("aws:autoscaling/group:Group", "name", "replace"),
        ("aws:autoscaling/group:Group", "initialLifecycleHooks.heartbeatTimeout", "replace"),
        ("aws:autoscaling/group:Group", "maxSize", "update"),
        ("aws:autoscaling/group:Group", "launchTemplate.version", "update"),
        ("aws:autoscaling/group:Group", "vpcZoneIdentifiers", "update"),
        ("aws:eks/cluster:Cluster", "roleArn", "replace"),
        ("aws:eks/cluster:Cluster", "kubernetesNetworkConfig.serviceIpv4Cidr", "replace"),
        ("aws:eks/cluster:Cluster", "version", "update"),
        ("aws:eks/cluster:Cluster", "vpcConfig.endpointPublicAccess", "update"),
        ("aws:ec2/vpc:Vpc", "cidrBlock", "replace"),
        ("aws:ec2/vpc:Vpc", "enableDnsHostnames", "update"),
        ("aws:ec2/securityGroupRule:SecurityGroupRule", "fromPort", "replace"),
        ("aws:ec2/securityGroupRule:SecurityGroupRule", "description", "update"),
        ("aws:iam/policy:Policy", "description", "replace"),
        ("aws:iam/policy:Policy", "policy", "update"),
        ("aws:iam/rolePolicy:RolePolicy", "policy", "update"),
        ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "policyArn", "replace"),
        ("aws:iam/instanceProfile:InstanceProfile", "role", "update"),
        ("aws:eks/accessEntry:AccessEntry", "principalArn", "replace"),
        ("aws:eks/accessEntry:AccessEntry", "kubernetesGroups", "update"),
        ("aws:ec2/natGateway:NatGateway", "subnetId", "replace"),
        ("aws:ec2/eip:Eip", "domain", "replace"),
        ("aws:ec2/internetGateway:InternetGateway", "vpcId", "update"),
        ("aws:ec2/routeTable:RouteTable", "vpcId", "replace"),
        ("aws:ec2/routeTableAssociation:RouteTableAssociation", "routeTableId", "update"),
        ("aws:cloudwatch/logGroup:LogGroup", "retentionInDays", "update"),
        ("aws:cloudwatch/eventRule:EventRule", "eventPattern", "update"),
        ("aws:cloudwatch/eventTarget:EventTarget", "rule", "replace"),
        ("aws:s3/bucketPolicy:BucketPolicy", "policy", "update"),
        ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "bucket", "replace"),
        ("aws:kms/alias:Alias", "targetKeyId", "update"),
        # Plugin Framework resources: RequiresReplace plan modifiers.
        ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "serviceAccount", "replace"),
        ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "roleArn", "update"),
        ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "securityGroupId", "replace"),
        # Shipped-plan types added from their terraform-provider-aws schemas: a ForceNew field, an in-place field.
        ("aws:ec2/route:Route", "destinationCidrBlock", "replace"),
        ("aws:ec2/route:Route", "natGatewayId", "update"),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "serviceName", "replace"),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", "routeTableIds", "update"),
        ("aws:ec2/flowLog:FlowLog", "trafficType", "replace"),
        ("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "vpcId", "replace"),
        ("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "revokeRulesOnDelete", "update"),
        ("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "accessScope.type", "replace"),
        ("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "url", "replace"),
        ("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "thumbprintLists", "update"),
        ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "dataRepositoryPath", "replace"),
        ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "importedFileChunkSize", "update"),
        ("aws:kms/grant:Grant", "operations", "replace"),
        ("aws:autoscaling/tag:Tag", "tag.key", "replace"),
        ("aws:autoscaling/tag:Tag", "tag.value", "update"),
        ("aws:s3/bucketVersioning:BucketVersioning", "versioningConfiguration.status", "update"),
        ("aws:s3/bucketVersioning:BucketVersioning", "bucket", "replace"),
        (
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "expectedBucketOwner",
            "replace",
        ),
        ("aws:s3/bucketLogging:BucketLogging", "targetPrefix", "update"),
        ("aws:s3/bucketOwnershipControls:BucketOwnershipControls", "rule.objectOwnership", "update"),
        ("aws:sqs/queue:Queue", "fifoQueue", "replace"),
        ("aws:sqs/queue:Queue", "messageRetentionSeconds", "update"),
        ("aws:sqs/queuePolicy:QueuePolicy", "policy", "update"),
        ("aws:sqs/queuePolicy:QueuePolicy", "queueUrl", "replace"),
        ("aws:lambda/permission:Permission", "function", "replace"),
        ("aws:sns/topic:Topic", "fifoTopic", "replace"),
        ("aws:sns/topic:Topic", "kmsMasterKeyId", "update"),
        ("aws:sns/topicSubscription:TopicSubscription", "topic", "replace"),
        ("aws:sns/topicSubscription:TopicSubscription", "filterPolicy", "update"),
        ("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "securityGroupId", "replace"),
        ("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "description", "update"),
        ("aws:budgets/budget:Budget", "name", "replace"),
        ("aws:budgets/budget:Budget", "limitAmount", "update"),
        ("aws:costexplorer/anomalyMonitor:AnomalyMonitor", "monitorSpecification", "replace"),
        ("aws:costexplorer/anomalyMonitor:AnomalyMonitor", "name", "update"),
        ("aws:costexplorer/anomalySubscription:AnomalySubscription", "frequency", "update"),
        ("aws:bcmdata/export:Export", "export.dataQueries.tableConfigurations", "replace"),
        ("aws:bcmdata/export:Export", "export.dataQueries.queryStatement", "update"),
        ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "bucket", "replace"),
        ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "rules.status", "update"),
        # The last shipped type and corpus types: a ForceNew field (renamed ones under their Pulumi name), an
        # in-place field.
        ("aws:lambda/function:Function", "name", "replace"),
        ("aws:lambda/function:Function", "packageType", "replace"),
        ("aws:lambda/function:Function", "memorySize", "update"),
        ("aws:lambda/function:Function", "runtime", "update"),
        ("aws:ecr/repository:Repository", "name", "replace"),
        ("aws:ecr/repository:Repository", "encryptionConfigurations.kmsKey", "replace"),
        ("aws:ecr/repository:Repository", "imageTagMutability", "update"),
        ("aws:ecr/repositoryPolicy:RepositoryPolicy", "repository", "replace"),
        ("aws:ecr/repositoryPolicy:RepositoryPolicy", "policy", "update"),
        ("aws:ecr/lifecyclePolicy:LifecyclePolicy", "policy", "replace"),
        ("aws:secretsmanager/secret:Secret", "name", "replace"),
        ("aws:secretsmanager/secret:Secret", "kmsKeyId", "update"),
        ("aws:secretsmanager/secretVersion:SecretVersion", "secretString", "replace"),
        ("aws:secretsmanager/secretVersion:SecretVersion", "versionStages", "update"),
        ("aws:ssm/parameter:Parameter", "name", "replace"),
        ("aws:ssm/parameter:Parameter", "value", "update"),
        ("aws:cloudwatch/logStream:LogStream", "logGroupName", "replace"),
        ("aws:cloudwatch/logMetricFilter:LogMetricFilter", "name", "replace"),
        ("aws:cloudwatch/logMetricFilter:LogMetricFilter", "pattern", "update"),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", "name", "replace"),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", "threshold", "update"),
        ("aws:iam/group:Group", "name", "update"),
        ("aws:iam/user:User", "name", "update"),
        ("aws:iam/accessKey:AccessKey", "user", "replace"),
        ("aws:iam/accessKey:AccessKey", "status", "update"),
        ("aws:ec2/mainRouteTableAssociation:MainRouteTableAssociation", "routeTableId", "update"),
        ("aws:eks/fargateProfile:FargateProfile", "podExecutionRoleArn", "replace"),
        ("aws:eks/fargateProfile:FargateProfile", "selectors.namespace", "replace"),
        ("aws:ecs/cluster:Cluster", "name", "replace"),
        ("aws:ecs/cluster:Cluster", "configuration.executeCommandConfiguration.logging", "update"),
        ("aws:ecs/clusterCapacityProviders:ClusterCapacityProviders", "clusterName", "replace"),
        ("aws:ecs/clusterCapacityProviders:ClusterCapacityProviders", "capacityProviders", "update"),
        ("aws:ecs/capacityProvider:CapacityProvider", "name", "replace"),
        ("aws:ecs/capacityProvider:CapacityProvider", "autoScalingGroupProvider.autoScalingGroupArn", "replace"),
        ("aws:lb/listener:Listener", "loadBalancerArn", "replace"),
        ("aws:lb/listener:Listener", "port", "update"),
    ],
)
def test_replace_semantics_per_type(type_: str, path: str, expected: str) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    inputs: dict[str, Any] = {}
    node = inputs
    *parents, leaf = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = "before"
    after = copy.deepcopy(inputs)
    node = after
    for p in parents:
        node = node[p]
    node[leaf] = "after"
    [c] = classify([resource(urn, inputs)], [resource(urn, after)])
    assert (c.change, c.undecided) == (expected, None)


@pytest.mark.parametrize(
    ("type_", "before", "after", "forced_by"),
    [
        # Renamed inputs: pulumi-aws calls TF function_name `function` and topic_arn `topic`.
        ("aws:lambda/permission:Permission", {"function": "relay", "principal": "events.amazonaws.com"},
         {"function": "relay-v2", "principal": "events.amazonaws.com"}, ["function"]),
        ("aws:sns/topicSubscription:TopicSubscription", {"topic": "arn:a", "protocol": "email"},
         {"topic": "arn:b", "protocol": "sqs"}, ["protocol", "topic"]),
        # A nested ForceNew field of a single-item block, beside an in-place field of the same block.
        ("aws:autoscaling/tag:Tag", {"tag": {"key": "a", "value": "1"}}, {"tag": {"key": "b", "value": "2"}},
         ["tag.key"]),
        ("aws:ec2/flowLog:FlowLog", {"vpcId": "vpc-1", "tags": {"Env": "dev"}},
         {"vpcId": "vpc-2", "tags": {"Env": "prod"}}, ["vpcId"]),
    ],
)  # fmt: skip
def test_a_force_new_field_names_what_forces_the_replace(
    type_: str, before: dict[str, Any], after: dict[str, Any], forced_by: list[str]
) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    [c] = classify([resource(urn, before)], [resource(urn, after)])
    assert (c.change, c.forced_by, c.undecided) == ("replace", forced_by, None)


def test_a_force_new_field_of_the_asg_and_the_eks_cluster_names_what_forces_the_replace() -> None:
    asg = "urn:pulumi:dev::p::aws:autoscaling/group:Group::gpu-asg"
    before: dict[str, Any] = {
        "name": "gpu-asg",
        "maxSize": 4,
        "initialLifecycleHooks": [{"name": "drain", "heartbeatTimeout": 300}],
    }
    after = copy.deepcopy(before)
    after["initialLifecycleHooks"][0]["heartbeatTimeout"] = 600
    after["maxSize"] = 8
    [c] = classify([resource(asg, before)], [resource(asg, after)])
    # The hook block's own ForceNew counts the hooks only; the nested heartbeatTimeout is ForceNew itself.
    assert (c.change, c.forced_by) == ("replace", ["initialLifecycleHooks.heartbeatTimeout"])
    assert c.paths == ["initialLifecycleHooks[0].heartbeatTimeout", "maxSize"]
    assert c.source is not None and c.source["path"] == "internal/service/autoscaling/group.go"
    cluster = "urn:pulumi:dev::p::aws:eks/cluster:Cluster::gpu"
    before = {"name": "gpu", "roleArn": "arn:aws:iam::1:role/a", "version": "1.34"}
    [c] = classify([resource(cluster, before)], [resource(cluster, {**before, "version": "1.35"})])
    assert (c.change, c.forced_by, c.undecided) == ("update", [], None)
    [c] = classify([resource(cluster, before)], [resource(cluster, {**before, "roleArn": "arn:aws:iam::1:role/b"})])
    assert (c.change, c.forced_by) == ("replace", ["roleArn"])


def test_eks_cluster_encryption_change_quotes_the_providers_condition() -> None:
    cluster = "urn:pulumi:dev::p::aws:eks/cluster:Cluster::gpu"
    before = {"name": "gpu", "encryptionConfig": {"resources": ["secrets"]}}
    [c] = classify([resource(cluster, before)], [resource(cluster, {"name": "gpu", "encryptionConfig": {}})])
    assert c.change == "update"
    assert c.replace_if == [
        "encryptionConfig: replaced when encryption is removed (CustomizeDiff ForceNewIfChange: envelope encryption "
        "cannot be disabled)"
    ]


def test_vpc_endpoint_private_dns_change_quotes_the_providers_condition() -> None:
    endpoint = "urn:pulumi:dev::p::aws:ec2/vpcEndpoint:VpcEndpoint::s3"
    before = {"vpcId": "vpc-1", "serviceName": "com.amazonaws.us-west-2.s3", "privateDnsEnabled": False}
    [c] = classify([resource(endpoint, before)], [resource(endpoint, {**before, "privateDnsEnabled": True})])
    assert (c.change, c.forced_by) == ("update", [])
    assert c.replace_if == [
        "privateDnsEnabled: replaced when it changes on an endpoint whose vpcEndpointType is not Interface "
        "(CustomizeDiff ForceNew)"
    ]


def test_a_change_inside_a_force_new_block_is_an_update_that_quotes_the_block_condition() -> None:
    # The ECS capacity provider's autoScalingGroupProvider block is ForceNew as a block only: the SDK counts its
    # items, so a managedScaling change inside it is sent with UpdateCapacityProvider.
    urn = "urn:pulumi:dev::p::aws:ecs/capacityProvider:CapacityProvider::gpu"
    before: dict[str, Any] = {
        "name": "gpu",
        "autoScalingGroupProvider": {"autoScalingGroupArn": "arn:asg", "managedScaling": {"targetCapacity": 80}},
    }
    after = copy.deepcopy(before)
    after["autoScalingGroupProvider"]["managedScaling"]["targetCapacity"] = 100
    [c] = classify([resource(urn, before)], [resource(urn, after)])
    assert (c.change, c.forced_by, c.undecided) == ("update", [], None)
    assert len(c.replace_if) == 1 and c.replace_if[0].startswith(
        "autoScalingGroupProvider: replaced when a block is added or removed"
    )


# The six blocks whose own ForceNew was once listed as a force-new path (re-read at each entry's commit): a change
# inside an existing block replaces through the nested attribute's own ForceNew, and the block is quoted as
# replaced when added or removed.
@pytest.mark.parametrize(
    ("type_", "block", "before", "after", "forced_by"),
    [
        ("aws:autoscaling/group:Group", "initialLifecycleHooks",
         {"initialLifecycleHooks": [{"name": "drain", "lifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING"}]},
         {"initialLifecycleHooks": [{"name": "drain", "lifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING"}]},
         ["initialLifecycleHooks.lifecycleTransition"]),
        ("aws:ec2/flowLog:FlowLog", "destinationOptions",
         {"destinationOptions": {"fileFormat": "plain-text"}}, {"destinationOptions": {"fileFormat": "parquet"}},
         ["destinationOptions.fileFormat"]),
        ("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "accessScope",
         {"accessScope": {"type": "namespace", "namespaces": ["a"]}},
         {"accessScope": {"type": "namespace", "namespaces": ["b"]}}, ["accessScope.namespaces"]),
        ("aws:eks/cluster:Cluster", "remoteNetworkConfig",
         {"remoteNetworkConfig": {"remoteNodeNetworks": {"cidrs": ["10.1.0.0/16"]}}},
         {"remoteNetworkConfig": {"remoteNodeNetworks": {"cidrs": ["10.2.0.0/16"]}}},
         ["remoteNetworkConfig.remoteNodeNetworks.cidrs"]),
        ("aws:eks/nodeGroup:NodeGroup", "remoteAccess",
         {"remoteAccess": {"ec2SshKey": "a"}}, {"remoteAccess": {"ec2SshKey": "b"}}, ["remoteAccess.ec2SshKey"]),
        ("aws:kms/grant:Grant", "constraints",
         {"constraints": [{"encryptionContextEquals": {"team": "a"}}]},
         {"constraints": [{"encryptionContextEquals": {"team": "b"}}]}, ["constraints.encryptionContextEquals"]),
    ],
)  # fmt: skip
def test_a_change_inside_a_once_listed_force_new_block_is_forced_by_the_nested_attribute(
    type_: str, block: str, before: dict[str, Any], after: dict[str, Any], forced_by: list[str]
) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    [c] = classify([resource(urn, before)], [resource(urn, after)])
    assert (c.change, c.forced_by, c.undecided) == ("replace", forced_by, None)
    assert len(c.replace_if) == 1 and c.replace_if[0].startswith(f"{block}: replaced when a block is added or removed")


def test_a_change_in_the_eks_cluster_remote_network_block_outside_its_cidrs_is_not_a_force_new_path() -> None:
    # remoteNodeNetworks / remotePodNetworks are not ForceNew blocks themselves at the commit read; only the
    # cidrs in them are, and the block's own ForceNew is quoted, not decided.
    from gpucloud.impact.semantics import semantics_for

    sem = semantics_for("aws:eks/cluster:Cluster")
    assert sem is not None
    assert "remoteNetworkConfig" not in sem.force_new
    assert sem.forced_by(["remoteNetworkConfig.remotePodNetworks.cidrs[0]"]) == [
        "remoteNetworkConfig.remotePodNetworks.cidrs"
    ]
    assert sem.conditions(["remoteNetworkConfig"])[0].startswith("remoteNetworkConfig: replaced when a block")


@pytest.mark.parametrize(
    ("path", "before", "after", "change", "forced_by", "quoted"),
    [
        ("instanceType", "p4d.24xlarge", "p5.48xlarge", "update", [], None),
        ("subnetId", "subnet-1", "subnet-2", "replace", ["subnetId"], None),
        ("ami", "ami-1", "ami-2", "replace", ["ami"], None),
        ("keyName", "a", "b", "replace", ["keyName"], None),
        # userData replaces only with userDataReplaceOnChange (CustomizeDiff ForceNewIf): quoted, not decided.
        ("userData", "#!/bin/sh\necho 1", "#!/bin/sh\necho 2", "update", [], "userData: replaced when"),
        # An input the stored (older) schema does not have: quoted as undecided, never taken as an update silently.
        ("instanceMarketOptions", {"marketType": "spot"}, {"marketType": "capacity-block"}, "update", [],
         "instanceMarketOptions: not in the schema read"),
    ],
)  # fmt: skip
def test_an_ec2_instance_change(
    path: str, before: Any, after: Any, change: str, forced_by: list[str], quoted: str | None
) -> None:
    urn = "urn:pulumi:dev::p::aws:ec2/instance:Instance::bastion"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided) == (change, forced_by, None)
    if quoted is None:
        assert c.replace_if == []
    else:
        assert len(c.replace_if) == 1 and c.replace_if[0].startswith(quoted)


def test_an_ec2_instance_root_volume_resize_is_an_update_and_its_encryption_a_replace() -> None:
    urn = "urn:pulumi:dev::p::aws:ec2/instance:Instance::bastion"
    before: dict[str, Any] = {"rootBlockDevice": {"volumeSize": 100, "encrypted": False}}
    [c] = classify(
        [resource(urn, before)], [resource(urn, {"rootBlockDevice": {"volumeSize": 200, "encrypted": False}})]
    )
    assert (c.change, c.forced_by) == ("update", [])
    [c] = classify(
        [resource(urn, before)], [resource(urn, {"rootBlockDevice": {"volumeSize": 100, "encrypted": True}})]
    )
    assert (c.change, c.forced_by) == ("replace", ["rootBlockDevice.encrypted"])


def test_a_launch_configuration_has_no_update_so_any_input_change_replaces_it() -> None:
    urn = "urn:pulumi:dev::p::aws:ec2/launchConfiguration:LaunchConfiguration::lc"
    before: dict[str, Any] = {
        "imageId": "ami-1",
        "instanceType": "g5.xlarge",
        "ebsBlockDevices": [{"deviceName": "/dev/xvdb", "volumeSize": 100}],
    }
    after = copy.deepcopy(before)
    after["ebsBlockDevices"][0]["volumeSize"] = 200
    after["instanceType"] = "g6.xlarge"
    [c] = classify([resource(urn, before)], [resource(urn, after)])
    assert (c.change, c.forced_by) == ("replace", ["ebsBlockDevices.volumeSize", "instanceType"])


@pytest.mark.parametrize(
    ("type_", "path", "expected"),
    [
        # Transit gateway: routes, associations and propagations have no Update; a route table updates tags only.
        ("aws:ec2transitgateway/route:Route", "destinationCidrBlock", "replace"),
        ("aws:ec2transitgateway/route:Route", "blackhole", "replace"),
        ("aws:ec2transitgateway/routeTable:RouteTable", "transitGatewayId", "replace"),
        ("aws:ec2transitgateway/routeTable:RouteTable", "tags.Env", "update"),
        ("aws:ec2transitgateway/routeTableAssociation:RouteTableAssociation", "transitGatewayRouteTableId", "replace"),
        ("aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation", "transitGatewayAttachmentId", "replace"),
        # Redshift subnet group, Cloud Map namespace, EventBridge bus: the name replaces, the rest is in place.
        ("aws:redshift/subnetGroup:SubnetGroup", "name", "replace"),
        ("aws:redshift/subnetGroup:SubnetGroup", "subnetIds", "update"),
        ("aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace", "vpc", "replace"),
        ("aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace", "description", "update"),
        ("aws:cloudwatch/eventBus:EventBus", "name", "replace"),
        ("aws:cloudwatch/eventBus:EventBus", "eventSourceName", "replace"),
        ("aws:cloudwatch/eventBus:EventBus", "kmsKeyIdentifier", "update"),
        # ACM validation has no Update; a Glue database is replaced by its name or catalog only.
        ("aws:acm/certificateValidation:CertificateValidation", "validationRecordFqdns", "replace"),
        ("aws:glue/catalogDatabase:CatalogDatabase", "name", "replace"),
        ("aws:glue/catalogDatabase:CatalogDatabase", "locationUri", "update"),
        ("aws:glue/catalogDatabase:CatalogDatabase", "targetDatabase.databaseName", "update"),
    ],
)
def test_replace_semantics_of_network_and_messaging_corpus_types(type_: str, path: str, expected: str) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    *parents, leaf = path.split(".")
    b, a = before, after
    for p in parents:
        b, a = b.setdefault(p, {}), a.setdefault(p, {})
    b[leaf], a[leaf] = "before", "after"
    [c] = classify([resource(urn, before)], [resource(urn, after)])
    assert (c.change, c.undecided) == (expected, None)
    assert c.forced_by == ([path] if expected == "replace" else [])


def test_an_ssm_parameter_tier_change_quotes_the_downgrade_condition() -> None:
    urn = "urn:pulumi:dev::p::aws:ssm/parameter:Parameter::p"
    before = {"name": "/gpucloud/p", "type": "String", "tier": "Advanced"}
    [c] = classify([resource(urn, before)], [resource(urn, {**before, "tier": "Standard"})])
    assert c.change == "update"
    assert c.replace_if == [
        "tier: replaced when it changes from Advanced to Standard (CustomizeDiff customdiff.ForceNewIfChange: SSM "
        "cannot downgrade a parameter's tier); other tier changes are in place"
    ]


def test_helm_release_has_no_semantics() -> None:
    urn = "urn:pulumi:dev::p::kubernetes:helm.sh/v3:Release::r"
    [c] = classify([resource(urn, {"version": "1"})], [resource(urn, {"version": "2"})])
    assert c.undecided == "update or replace: undecided (no replace semantics for kubernetes:helm.sh/v3:Release)"


def test_lustre_capacity_change_replaces_only_under_the_providers_condition() -> None:
    urn = "urn:pulumi:dev::p::aws:fsx/lustreFileSystem:LustreFileSystem::scratch"
    [c] = classify([resource(urn, {"storageCapacity": 2400})], [resource(urn, {"storageCapacity": 1200})])
    assert c.change == "update"
    assert c.replace_if == [
        "storageCapacity: replaced when the new capacity is smaller than the old, or deploymentType is SCRATCH_1 "
        "(resourceLustreFileSystemSchemaCustomizeDiff)"
    ]


def test_a_malformed_allow_list_names_the_key_and_the_fix() -> None:
    with pytest.raises(ImpactConfigError, match=r"gpucloud:allowDataReplacement must be a list of resource URNs"):
        impact(base(), {"gpucloud:allowDataReplacement": {"datasets": True}})


def test_stacks_of_different_names_match_resource_by_resource() -> None:
    head = [dict(r, urn=r["urn"].replace(":dev::", ":prod::")) for r in base()]
    assert impact(head)["summary"]["changes"] == 0


def test_a_launch_template_change_rolls_the_node_group_that_follows_its_latest_version() -> None:
    lt = "urn:pulumi:dev::p::aws:ec2/launchTemplate:LaunchTemplate::train-lt"
    before = [*base(), resource(lt, {"name": "train-lt-1234567", "userData": "v1"})]
    before[1]["inputs"]["launchTemplate"] = {"id": UNKNOWN, "version": UNKNOWN}
    before[1]["dependencies"] = [ROLE, lt]
    head = copy.deepcopy(before)
    head[3]["inputs"]["userData"] = "v2"
    ci = change_impact({"project": "p", "stack": "dev", "resources": before}, head)
    assert by_name(ci, "train-lt")["change"] == "update"  # a new template version, not a new template
    ng = by_name(ci, "train")
    # Without property dependencies every unknown input may read from the changed template: nodeRoleArn too.
    assert (ng["change"], ng["rolls"]) == ("update", ["launchTemplate.version"])
    assert ng["may_replace_by"] == ["launchTemplate.id", "nodeRoleArn"]
    [pool] = ci["disruption"]["pools"]
    assert (pool["action"], pool["gpu_nodes"], pool["gpu_hours_at_risk"]) == ("drained", 3, 6.0)
    assert pool["reason"].startswith("launch template train-lt changed, rolling update (launchTemplate.version")


def test_property_dependencies_narrow_what_may_change() -> None:
    before = base()
    before[1]["inputs"]["clusterName"] = UNKNOWN
    before[1]["propertyDependencies"] = {"nodeRoleArn": [ROLE], "clusterName": []}
    head = copy.deepcopy(before)
    head[0]["inputs"]["name"] = "node-role-v2"  # the role is replaced: its arn changes
    ci = change_impact({"project": "p", "stack": "dev", "resources": before}, head)
    assert by_name(ci, "node-role")["change"] == "replace"
    assert by_name(ci, "train")["may_change"] == ["nodeRoleArn"]  # clusterName reads nothing that changed


@pytest.mark.parametrize(
    ("type_", "path", "before", "after", "change", "forced_by", "quoted"),
    [
        # DynamoDB: the key schema, the name and the restore source replace; a GSI is created in place.
        ("aws:dynamodb/table:Table", "hashKey", "pk", "id", "replace", ["hashKey"], None),
        ("aws:dynamodb/table:Table", "rangeKey", "sk", "ts", "replace", ["rangeKey"], None),
        ("aws:dynamodb/table:Table", "billingMode", "PROVISIONED", "PAY_PER_REQUEST", "update", [], None),
        ("aws:dynamodb/table:Table", "globalSecondaryIndexes", [{"name": "a", "hashKey": "x"}],
         [{"name": "a", "hashKey": "x"}, {"name": "b", "hashKey": "y"}], "update", [], None),
        # An LSI's own attributes are ForceNew; adding or removing a whole index is quoted (the block's count).
        ("aws:dynamodb/table:Table", "localSecondaryIndexes", [{"name": "l", "rangeKey": "a", "projectionType": "ALL"}],
         [{"name": "l", "rangeKey": "a", "projectionType": "KEYS_ONLY"}], "replace",
         ["localSecondaryIndexes.projectionType"], "localSecondaryIndexes: replaced when a block is added or removed"),
        # Inputs the stored (older) table.go lacks: quoted as undecided.
        ("aws:dynamodb/table:Table", "importTable", {"inputFormat": "CSV"}, {"inputFormat": "ION"}, "update", [],
         "importTable: not in the schema read"),
        # Redshift: the identifier, subnet group, admin user and snapshot source replace; a resize is an update.
        ("aws:redshift/cluster:Cluster", "clusterIdentifier", "dw", "dw2", "replace", ["clusterIdentifier"], None),
        ("aws:redshift/cluster:Cluster", "masterUsername", "admin", "root", "replace", ["masterUsername"], None),
        ("aws:redshift/cluster:Cluster", "nodeType", "ra3.xlplus", "ra3.4xlarge", "update", [], None),
        ("aws:redshift/cluster:Cluster", "snapshotArn", "arn:a", "arn:b", "update", [],
         "snapshotArn: not in the schema read"),
    ],
)  # fmt: skip
def test_replace_semantics_of_the_data_holding_corpus_types(
    type_: str, path: str, before: Any, after: Any, change: str, forced_by: list[str], quoted: str | None
) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::store"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided) == (change, forced_by, None)
    if quoted is None:
        assert c.replace_if == []
    else:
        assert any(q.startswith(quoted) for q in c.replace_if), c.replace_if


def test_a_dynamodb_key_change_is_data_replaced_and_blocks() -> None:
    table = "urn:pulumi:dev::p::aws:dynamodb/table:Table::events"
    ci = impact([*base(), resource(table, {"name": "events", "hashKey": "id"})])
    assert ci["blocking"] == 0  # a create holds no data yet
    old, new = (
        resource(table, {"name": "events", "hashKey": "pk"}),
        resource(table, {"name": "events", "hashKey": "id"}),
    )
    ci = change_impact({"project": "p", "stack": "dev", "resources": [*base(), old]}, [*base(), new], None)
    [finding] = ci["data"]
    assert (finding["name"], finding["change"], finding["blocking"], ci["blocking"]) == ("events", "replace", True, 1)


@pytest.mark.parametrize(
    ("type_", "path", "before", "after", "change", "forced_by", "quoted"),
    [
        # A Kinesis stream reshards, re-encrypts and changes retention in place; only its name replaces it.
        ("aws:kinesis/stream:Stream", "name", "events", "events-v2", "replace", ["name"], None),
        ("aws:kinesis/stream:Stream", "shardCount", 2, 4, "update", [], None),
        ("aws:kinesis/stream:Stream", "streamModeDetails", {"streamMode": "PROVISIONED"}, {"streamMode": "ON_DEMAND"},
         "update", [], "streamModeDetails: not in the schema read"),
        # An ECS task definition revision is immutable: any input but tags replaces it.
        ("aws:ecs/taskDefinition:TaskDefinition", "containerDefinitions", "[]", "[{}]", "replace",
         ["containerDefinitions"], None),
        ("aws:ecs/taskDefinition:TaskDefinition", "volumes", [{"name": "data", "hostPath": "/a"}],
         [{"name": "data", "hostPath": "/b"}], "replace", ["volumes.hostPath"],
         "volumes: replaced when a block is added or removed"),
        ("aws:ecs/taskDefinition:TaskDefinition", "tags", {"team": "a"}, {"team": "b"}, "update", [], None),
        ("aws:ecs/taskDefinition:TaskDefinition", "skipDestroy", False, True, "update", [], None),
    ],
)  # fmt: skip
def test_replace_semantics_of_the_stream_and_task_definition(
    type_: str, path: str, before: Any, after: Any, change: str, forced_by: list[str], quoted: str | None
) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided) == (change, forced_by, None)
    if quoted is None:
        assert c.replace_if == []
    else:
        assert any(q.startswith(quoted) for q in c.replace_if), c.replace_if


@pytest.mark.parametrize(
    ("path", "before", "after", "change", "forced_by", "quoted"),
    [
        ("port", 80, 8080, "replace", ["port"], None),
        ("vpcId", "vpc-1", "vpc-2", "replace", ["vpcId"], None),
        ("deregistrationDelay", "300", "30", "update", [], None),
        # On a TCP target group the CustomizeDiff forces a new group for a health-check interval change: quoted.
        ("healthCheck", {"interval": 30}, {"interval": 10}, "update", [], "healthCheck.interval: replaced when"),
        ("healthCheck", {"path": "/a"}, {"path": "/b"}, "update", [], None),
    ],
)  # fmt: skip
def test_a_target_group_change(
    path: str, before: Any, after: Any, change: str, forced_by: list[str], quoted: str | None
) -> None:
    urn = "urn:pulumi:dev::p::aws:lb/targetGroup:TargetGroup::api"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided) == (change, forced_by, None)
    assert c.replace_if == [] if quoted is None else c.replace_if[0].startswith(quoted)


@pytest.mark.parametrize(
    ("path", "before", "after", "change", "forced_by", "quoted"),
    [
        ("internal", False, True, "replace", ["internal"], None),
        ("loadBalancerType", "application", "network", "replace", ["loadBalancerType"], None),
        ("securityGroups", ["sg-1"], ["sg-2"], "update", [], None),
        ("idleTimeout", 60, 120, "update", [], None),
        # A network load balancer's subnet change replaces it (the provider's CustomizeDiff): quoted, not decided.
        ("subnets", ["subnet-1"], ["subnet-1", "subnet-2"], "update", [], "subnets: replaced when"),
        ("subnetMappings", [{"subnetId": "subnet-1"}], [{"subnetId": "subnet-2"}], "replace",
         ["subnetMappings.subnetId"], "subnetMappings: replaced when a block is added or removed"),
    ],
)  # fmt: skip
def test_a_load_balancer_change(
    path: str, before: Any, after: Any, change: str, forced_by: list[str], quoted: str | None
) -> None:
    urn = "urn:pulumi:dev::p::aws:lb/loadBalancer:LoadBalancer::ingress"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided) == (change, forced_by, None)
    assert c.replace_if == [] if quoted is None else c.replace_if[0].startswith(quoted)


@pytest.mark.parametrize(
    ("type_", "path", "before", "after", "change", "forced_by"),
    [
        ("aws:sfn/stateMachine:StateMachine", "name", "etl", "etl-v2", "replace", ["name"]),
        ("aws:sfn/stateMachine:StateMachine", "type", "STANDARD", "EXPRESS", "replace", ["type"]),
        ("aws:sfn/stateMachine:StateMachine", "definition", "{}", '{"StartAt": "A"}', "update", []),
        ("aws:route53/record:Record", "zoneId", "Z1", "Z2", "replace", ["zoneId"]),
        # A record type change is a delete-and-create inside one Update (one batch), not a resource replace.
        ("aws:route53/record:Record", "type", "A", "CNAME", "update", []),
        ("aws:route53/record:Record", "records", ["10.0.0.1"], ["10.0.0.2"], "update", []),
    ],
)
def test_a_state_machine_and_a_dns_record_change(
    type_: str, path: str, before: Any, after: Any, change: str, forced_by: list[str]
) -> None:
    urn = f"urn:pulumi:dev::p::{type_}::x"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided, c.replace_if) == (change, forced_by, None, [])


@pytest.mark.parametrize(
    ("path", "before", "after", "change", "forced_by"),
    [
        ("key", "models/a.bin", "models/b.bin", "replace", ["key"]),
        ("bucket", "weights-a", "weights-b", "replace", ["bucket"]),
        # New content is uploaded in place as a new object version.
        ("content", "v1", "v2", "update", []),
        ("storageClass", "STANDARD", "GLACIER_IR", "update", []),
    ],
)
def test_a_bucket_object_change(path: str, before: Any, after: Any, change: str, forced_by: list[str]) -> None:
    urn = "urn:pulumi:dev::p::aws:s3/bucketObject:BucketObject::manifest"
    [c] = classify([resource(urn, {path: before})], [resource(urn, {path: after})])
    assert (c.change, c.forced_by, c.undecided, c.replace_if) == (change, forced_by, None, [])
