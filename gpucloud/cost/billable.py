"""Which resource types AWS bills, and how: the table behind "every billable path is priced or listed".

The cost engine prices the types it has handlers for. Every other type of the families gpucloud plans (ec2, ebs,
autoscaling, eks, fsx, s3, efs, rds, kms, cloudwatch, elb/alb/lb, vpc, ec2transitgateway, ecr, sqs) is one of:

* ``USAGE_BILLED``: billed by use a plan cannot know; listed as unpriced with the billing unit;
* ``BILLED_NOT_PRICED``: billed by time or size, but gpucloud holds no rate; listed as unpriced with the unit;
* free (``FREE_TYPES``): AWS bills nothing for the resource itself (configuration, attachments, policies).

tests/cost/test_billable.py reads every resource type token from the installed pulumi_aws SDK for those families
and fails on any type this table does not classify. Billing facts: the AWS pricing pages of each service.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from gpucloud.fleet import types as T
from gpucloud.fleet.values import is_unknown, obj

# type -> (what is billed, unit)
USAGE_BILLED: Final[dict[str, tuple[str, str]]] = {
    "aws:s3/bucket:Bucket": ("S3 is billed by stored GB, requests and transfer, not by the bucket", "GB-month"),
    "aws:s3/bucketV2:BucketV2": ("S3 is billed by stored GB, requests and transfer, not by the bucket", "GB-month"),
    "aws:s3/directoryBucket:DirectoryBucket": ("S3 Express One Zone is billed by stored GB and requests", "GB-month"),
    "aws:s3/bucketObject:BucketObject": ("an S3 object is billed by its stored GB", "GB-month"),
    "aws:s3/bucketObjectv2:BucketObjectv2": ("an S3 object is billed by its stored GB", "GB-month"),
    "aws:s3/objectCopy:ObjectCopy": ("an S3 object copy is billed by its stored GB and the copy request", "GB-month"),
    "aws:s3/bucketIntelligentTieringConfiguration:BucketIntelligentTieringConfiguration": (
        "Intelligent-Tiering monitoring is billed per 1,000 objects monitored",
        "1,000 objects-month",
    ),
    "aws:s3/analyticsConfiguration:AnalyticsConfiguration": (
        "Storage Class Analysis is billed per million objects monitored",
        "million objects-month",
    ),
    "aws:s3/inventory:Inventory": ("S3 Inventory is billed per million objects listed", "million objects"),
    "aws:s3/bucketMetric:BucketMetric": ("S3 request metrics are billed as CloudWatch custom metrics", "metric-month"),
    "aws:s3/bucketLogging:BucketLogging": ("server access logs are billed as stored S3 objects", "GB-month"),
    "aws:s3/bucketLoggingV2:BucketLoggingV2": ("server access logs are billed as stored S3 objects", "GB-month"),
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": (
        "replication is billed by replicated GB (transfer, requests, RTC)",
        "GB replicated",
    ),
    "aws:s3/bucketAccelerateConfiguration:BucketAccelerateConfiguration": (
        "Transfer Acceleration is billed per GB accelerated",
        "GB",
    ),
    "aws:s3/bucketAccelerateConfigurationV2:BucketAccelerateConfigurationV2": (
        "Transfer Acceleration is billed per GB accelerated",
        "GB",
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": (
        "lifecycle transitions are billed per 1,000 transition requests",
        "1,000 requests",
    ),
    "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2": (
        "lifecycle transitions are billed per 1,000 transition requests",
        "1,000 requests",
    ),
    "aws:s3/bucketMetadataConfiguration:BucketMetadataConfiguration": (
        "S3 Metadata is billed per million updates and by table storage",
        "million updates",
    ),
    "aws:s3/filesFileSystem:FilesFileSystem": ("S3 Files is billed by stored GB and data access", "GB-month"),
    "aws:s3/filesSynchronizationConfiguration:FilesSynchronizationConfiguration": (
        "S3 Files synchronisation is billed by GB synchronised",
        "GB",
    ),
    "aws:s3/vectorsVectorBucket:VectorsVectorBucket": ("S3 Vectors is billed by stored GB and queries", "GB-month"),
    "aws:s3/vectorsIndex:VectorsIndex": ("S3 Vectors indexes are billed by stored GB and queries", "GB-month"),
    "aws:cloudwatch/logGroup:LogGroup": ("CloudWatch Logs is billed by ingested and stored GB", "GB ingested"),
    "aws:cloudwatch/logDelivery:LogDelivery": ("vended log delivery is billed per GB delivered", "GB"),
    "aws:cloudwatch/logMetricFilter:LogMetricFilter": (
        "a metric filter publishes a CloudWatch custom metric",
        "metric-month",
    ),
    "aws:cloudwatch/logDataProtectionPolicy:LogDataProtectionPolicy": (
        "data protection is billed per GB scanned",
        "GB scanned",
    ),
    "aws:cloudwatch/logAnomalyDetector:LogAnomalyDetector": (
        "log anomaly detection is billed with the Logs it analyses",
        "GB ingested",
    ),
    "aws:cloudwatch/logS3TableIntegrationSource:LogS3TableIntegrationSource": (
        "the S3 Tables integration is billed by GB delivered and stored",
        "GB",
    ),
    "aws:cloudwatch/logTransformer:LogTransformer": ("log transformation is billed per GB processed", "GB"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": (
        "CloudWatch alarms are billed per alarm-month beyond the free tier",
        "alarm-month",
    ),
    "aws:cloudwatch/compositeAlarm:CompositeAlarm": ("composite alarms are billed per alarm-month", "alarm-month"),
    "aws:cloudwatch/dashboard:Dashboard": ("dashboards beyond the first three are billed per month", "dashboard-month"),
    "aws:cloudwatch/metricStream:MetricStream": ("metric streams are billed per 1,000 metric updates", "1,000 updates"),
    "aws:cloudwatch/contributorInsightRule:ContributorInsightRule": (
        "Contributor Insights is billed per rule-month and per million log events",
        "rule-month",
    ),
    "aws:cloudwatch/contributorManagedInsightRule:ContributorManagedInsightRule": (
        "Contributor Insights is billed per rule-month and per million log events",
        "rule-month",
    ),
    "aws:cloudwatch/internetMonitor:InternetMonitor": (
        "Internet Monitor is billed per monitored resource and city-network",
        "resource-month",
    ),
    "aws:cloudwatch/otelEnrichment:OtelEnrichment": ("OpenTelemetry enrichment is billed per metric", "metric-month"),
    "aws:cloudwatch/eventBus:EventBus": ("custom EventBridge events are billed per million events", "million events"),
    "aws:cloudwatch/eventArchive:EventArchive": ("EventBridge archives are billed by GB archived and stored", "GB"),
    "aws:cloudwatch/eventApiDestination:EventApiDestination": (
        "API destinations are billed per million invocations",
        "million invocations",
    ),
    "aws:cloudwatch/eventEndpoint:EventEndpoint": ("global endpoints are billed per million events", "million events"),
    "aws:sqs/queue:Queue": ("SQS is billed by requests", "million requests"),
    "aws:ecr/repository:Repository": ("ECR is billed by stored GB and transfer", "GB-month"),
    "aws:ecr/pullThroughCacheRule:PullThroughCacheRule": ("cached images are billed as ECR storage", "GB-month"),
    "aws:ecr/replicationConfiguration:ReplicationConfiguration": (
        "replicated images are billed as storage and transfer",
        "GB-month",
    ),
    "aws:ecr/registryScanningConfiguration:RegistryScanningConfiguration": (
        "enhanced scanning is billed by Amazon Inspector per image scanned",
        "image scan",
    ),
    "aws:ec2/flowLog:FlowLog": ("flow logs are billed by the log volume delivered", "GB delivered"),
    "aws:ec2/ami:Ami": ("an AMI is billed by its EBS snapshot storage", "GB-month"),
    "aws:ec2/amiCopy:AmiCopy": ("an AMI copy is billed by its EBS snapshot storage", "GB-month"),
    "aws:ec2/amiFromInstance:AmiFromInstance": ("an AMI is billed by its EBS snapshot storage", "GB-month"),
    "aws:ec2/defaultCreditSpecification:DefaultCreditSpecification": (
        "burstable unlimited mode bills surplus CPU credits",
        "vCPU-hour",
    ),
    "aws:ec2/networkInsightsAnalysis:NetworkInsightsAnalysis": (
        "Reachability Analyzer is billed per analysis",
        "analysis",
    ),
    "aws:ec2/networkInsightsAccessScope:NetworkInsightsAccessScope": (
        "Network Access Analyzer is billed per ENI analysed",
        "ENI analysed",
    ),
    "aws:ec2/spotDatafeedSubscription:SpotDatafeedSubscription": (
        "the spot data feed is billed as S3 storage",
        "GB-month",
    ),
    "aws:ec2/vpcPeeringConnection:VpcPeeringConnection": (
        "peering traffic across AZs or regions is billed per GB",
        "GB",
    ),
    "aws:ec2/vpcNetworkPerformanceMetricSubscription:VpcNetworkPerformanceMetricSubscription": (
        "published network metrics are billed as CloudWatch metrics",
        "metric-month",
    ),
    "aws:ebs/snapshot:Snapshot": ("EBS snapshots are billed by stored GB", "GB-month"),
    "aws:ebs/snapshotCopy:SnapshotCopy": ("EBS snapshots are billed by stored GB", "GB-month"),
    "aws:ebs/snapshotImport:SnapshotImport": ("EBS snapshots are billed by stored GB", "GB-month"),
    "aws:efs/fileSystem:FileSystem": ("EFS is billed by stored GB", "GB-month"),
    "aws:efs/backupPolicy:BackupPolicy": ("EFS backups are billed by AWS Backup storage", "GB-month"),
    "aws:efs/replicationConfiguration:ReplicationConfiguration": (
        "EFS replication is billed by replicated GB and destination storage",
        "GB-month",
    ),
    "aws:eks/fargateProfile:FargateProfile": (
        "Fargate pods are billed per vCPU-hour and GB-hour",
        "vCPU-hour / GB-hour",
    ),
    "aws:fsx/backup:Backup": ("FSx backups are billed by stored GB", "GB-month"),
    "aws:fsx/openZfsSnapshot:OpenZfsSnapshot": ("snapshots use file system storage", "GB-month"),
    "aws:fsx/ontapVolume:OntapVolume": ("ONTAP volumes use SSD and capacity pool storage", "GB-month"),
    "aws:kms/ciphertext:Ciphertext": ("KMS requests are billed per 10,000 requests", "10,000 requests"),
    "aws:rds/clusterSnapshot:ClusterSnapshot": ("snapshots beyond the free backup storage are billed", "GB-month"),
    "aws:rds/clusterSnapshotCopy:ClusterSnapshotCopy": ("snapshot copies are billed by stored GB", "GB-month"),
    "aws:rds/snapshot:Snapshot": ("snapshots beyond the free backup storage are billed", "GB-month"),
    "aws:rds/snapshotCopy:SnapshotCopy": ("snapshot copies are billed by stored GB", "GB-month"),
    "aws:rds/exportTask:ExportTask": ("snapshot exports are billed per GB exported", "GB"),
    "aws:rds/instanceAutomatedBackupsReplication:InstanceAutomatedBackupsReplication": (
        "replicated backups are billed by stored GB and transfer",
        "GB-month",
    ),
    "aws:rds/clusterActivityStream:ClusterActivityStream": ("activity streams are billed through Kinesis", "GB"),
    "aws:rds/globalCluster:GlobalCluster": ("Aurora Global Database bills replicated write I/O", "million I/Os"),
    "aws:rds/integration:Integration": ("zero-ETL integrations are billed by the target's ingestion", "GB"),
    "aws:rds/customDbEngineVersion:CustomDbEngineVersion": ("the engine media is billed as S3 storage", "GB-month"),
    "aws:rds/proxyEndpoint:ProxyEndpoint": ("a proxy endpoint in another VPC bills interface endpoint hours", "hour"),
    "aws:ec2transitgateway/multicastDomainAssociation:MulticastDomainAssociation": (
        "multicast traffic is billed per GB",
        "GB",
    ),
    # Services the foreign corpus (tests/fixtures/corpus) uses beside EKS; billing units from each service's AWS
    # pricing page (aws.amazon.com/<service>/pricing).
    "aws:apigateway/restApi:RestApi": ("REST API calls are billed per million requests", "million requests"),
    "aws:apigateway/stage:Stage": (
        "a stage with cacheClusterEnabled bills its cache per hour; calls are billed on the API",
        "cache-hour",
    ),
    "aws:apigatewayv2/api:Api": (
        "HTTP API requests and WebSocket messages are billed per million, WebSocket connections per minute",
        "million requests",
    ),
    "aws:cloudfront/distribution:Distribution": ("CloudFront is billed by GB out and requests", "GB"),
    "aws:dynamodb/table:Table": (
        "DynamoDB is billed by request units (or provisioned capacity-hours) and stored GB",
        "request units / GB-month",
    ),
    "aws:ecs/service:Service": (
        "a service's tasks are billed as Fargate vCPU- and GB-hours, or as the EC2 instances they run on",
        "vCPU-hour + GB-hour",
    ),
    "aws:glue/catalogDatabase:CatalogDatabase": (
        "the Data Catalog is billed per 100,000 objects above the first million and per million requests",
        "objects-month / requests",
    ),
    "aws:glue/crawler:Crawler": ("crawlers are billed per DPU-hour they run", "DPU-hour"),
    "aws:glue/job:Job": ("Glue jobs are billed per DPU-hour they run", "DPU-hour"),
    "aws:lambda/function:Function": ("Lambda is billed per request and GB-second of run time", "GB-second"),
    "aws:route53/record:Record": ("DNS queries are billed per million (the hosted zone per month)", "million queries"),
    "aws:sfn/stateMachine:StateMachine": (
        "Step Functions is billed per state transition (Standard) or per request and GB-second (Express)",
        "1,000 transitions",
    ),
}

# type -> (what is billed, unit): time- or size-billed, but gpucloud holds no rate for it.
BILLED_NOT_PRICED: Final[dict[str, tuple[str, str]]] = {
    "aws:lb/loadBalancer:LoadBalancer": ("load balancers are billed per hour plus LCU/NLCU usage", "hour + LCU-hour"),
    "aws:alb/loadBalancer:LoadBalancer": ("load balancers are billed per hour plus LCU usage", "hour + LCU-hour"),
    "aws:elb/loadBalancer:LoadBalancer": ("Classic Load Balancers are billed per hour plus GB", "hour + GB"),
    "aws:ec2/dedicatedHost:DedicatedHost": ("Dedicated Hosts are billed per host-hour", "host-hour"),
    T.EC2_FLEET: ("an EC2 Fleet's instances are billed per instance-hour", "instance-hour"),
    T.SPOT_FLEET_REQUEST: ("a Spot Fleet's instances are billed per instance-hour", "hour"),
    "aws:ec2/trafficMirrorSession:TrafficMirrorSession": ("mirror sessions are billed per ENI-hour", "ENI-hour"),
    "aws:ec2/vpcEndpointSubnetAssociation:VpcEndpointSubnetAssociation": (
        "each AZ of an interface endpoint is billed per hour",
        "endpoint-AZ-hour",
    ),
    "aws:ec2/vpcIpam:VpcIpam": ("IPAM Advanced Tier is billed per active IP address-hour", "IP-hour"),
    "aws:ec2/vpnConnection:VpnConnection": ("Site-to-Site VPN connections are billed per connection-hour", "hour"),
    "aws:ec2/vpnConcentrator:VpnConcentrator": ("VPN concentrators are billed per hour", "hour"),
    "aws:ec2/vpcEncryptionControl:VpcEncryptionControl": ("VPC encryption controls are billed per VPC-hour", "hour"),
    "aws:ec2/encryptionControl:EncryptionControl": ("VPC encryption controls are billed per VPC-hour", "hour"),
    "aws:ebs/fastSnapshotRestore:FastSnapshotRestore": (
        "fast snapshot restore is billed per snapshot-AZ-hour",
        "DSU-hour",
    ),
    "aws:ebs/volumeCopy:VolumeCopy": ("a volume copy is billed as an EBS volume", "GiB-month"),
    "aws:ec2transitgateway/vpcAttachment:VpcAttachment": (
        "Transit Gateway attachments are billed per hour plus GB processed",
        "attachment-hour",
    ),
    "aws:ec2transitgateway/peeringAttachment:PeeringAttachment": (
        "Transit Gateway attachments are billed per hour",
        "attachment-hour",
    ),
    "aws:ec2transitgateway/connect:Connect": ("Transit Gateway attachments are billed per hour", "attachment-hour"),
    "aws:eks/capability:Capability": ("EKS Capabilities are billed per capability-hour", "hour"),
    "aws:fsx/ontapFileSystem:OntapFileSystem": (
        "FSx for ONTAP is billed by SSD GB, throughput and capacity pool",
        "GB-month + MBps-month",
    ),
    "aws:fsx/openZfsFileSystem:OpenZfsFileSystem": (
        "FSx for OpenZFS is billed by SSD GB and throughput",
        "GB-month + MBps-month",
    ),
    "aws:fsx/windowsFileSystem:WindowsFileSystem": (
        "FSx for Windows is billed by storage GB and throughput",
        "GB-month + MBps-month",
    ),
    "aws:fsx/fileCache:FileCache": ("Amazon File Cache is billed per cache GB-month", "GB-month"),
    "aws:kms/customKeyStore:CustomKeyStore": ("a custom key store bills its CloudHSM cluster hours", "HSM-hour"),
    "aws:rds/instance:Instance": ("RDS instances are billed per instance-hour plus storage", "instance-hour"),
    "aws:rds/clusterInstance:ClusterInstance": ("Aurora instances are billed per instance-hour", "instance-hour"),
    "aws:rds/cluster:Cluster": ("Aurora clusters are billed by storage, I/O and ACU-hours", "GB-month / ACU-hour"),
    "aws:rds/proxy:Proxy": ("RDS Proxy is billed per vCPU-hour of its targets", "vCPU-hour"),
    "aws:rds/shardGroup:ShardGroup": ("Aurora Limitless shard groups are billed per ACU-hour", "ACU-hour"),
    "aws:rds/reservedInstance:ReservedInstance": (
        "a reserved DB instance is an upfront and hourly commitment",
        "term",
    ),
    "aws:vpc/routeServerEndpoint:RouteServerEndpoint": ("route server endpoints are billed per hour", "hour"),
    "aws:vpc/routeServerVpcAssociation:RouteServerVpcAssociation": (
        "route server VPC associations are billed per hour",
        "hour",
    ),
    "aws:kinesis/stream:Stream": (
        "Kinesis Data Streams are billed per shard-hour (provisioned) or stream-hour (on-demand) plus data",
        "shard-hour",
    ),
    "aws:redshift/cluster:Cluster": ("Redshift provisioned clusters are billed per node-hour", "node-hour"),
    "aws:secretsmanager/secret:Secret": ("Secrets Manager bills each secret per month, plus API calls", "secret-month"),
    "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace": (
        "a private DNS namespace creates a Route 53 private hosted zone, billed per month",
        "hosted zone-month",
    ),
}

# AWS bills nothing for these resources themselves (what they configure is billed elsewhere).
FREE_TYPES: Final = frozenset(
    {
        "aws:alb/listener:Listener",
        "aws:alb/listenerCertificate:ListenerCertificate",
        "aws:alb/listenerRule:ListenerRule",
        "aws:alb/targetGroup:TargetGroup",
        "aws:alb/targetGroupAttachment:TargetGroupAttachment",
        "aws:lb/listener:Listener",
        "aws:lb/listenerCertificate:ListenerCertificate",
        "aws:lb/listenerRule:ListenerRule",
        "aws:lb/targetGroup:TargetGroup",
        "aws:lb/targetGroupAttachment:TargetGroupAttachment",
        "aws:lb/trustStore:TrustStore",
        "aws:lb/trustStoreRevocation:TrustStoreRevocation",
        "aws:elb/appCookieStickinessPolicy:AppCookieStickinessPolicy",
        "aws:elb/attachment:Attachment",
        "aws:elb/listenerPolicy:ListenerPolicy",
        "aws:elb/loadBalancerBackendServerPolicy:LoadBalancerBackendServerPolicy",
        "aws:elb/loadBalancerCookieStickinessPolicy:LoadBalancerCookieStickinessPolicy",
        "aws:elb/loadBalancerPolicy:LoadBalancerPolicy",
        "aws:elb/sslNegotiationPolicy:SslNegotiationPolicy",
        "aws:autoscaling/trafficSourceAttachment:TrafficSourceAttachment",
        "aws:cloudwatch/alarmMuteRule:AlarmMuteRule",
        "aws:cloudwatch/eventBusPolicy:EventBusPolicy",
        "aws:cloudwatch/eventConnection:EventConnection",
        "aws:cloudwatch/eventPermission:EventPermission",
        "aws:cloudwatch/logAccountPolicy:LogAccountPolicy",
        "aws:cloudwatch/logDeliveryDestination:LogDeliveryDestination",
        "aws:cloudwatch/logDeliveryDestinationPolicy:LogDeliveryDestinationPolicy",
        "aws:cloudwatch/logDeliverySource:LogDeliverySource",
        "aws:cloudwatch/logDestination:LogDestination",
        "aws:cloudwatch/logDestinationPolicy:LogDestinationPolicy",
        "aws:cloudwatch/logIndexPolicy:LogIndexPolicy",
        "aws:cloudwatch/logResourcePolicy:LogResourcePolicy",
        "aws:cloudwatch/logStorageTierPolicy:LogStorageTierPolicy",
        "aws:cloudwatch/logStream:LogStream",
        "aws:cloudwatch/logSubscriptionFilter:LogSubscriptionFilter",
        "aws:cloudwatch/queryDefinition:QueryDefinition",
        "aws:cloudwatch/resourceMetricsConfiguration:ResourceMetricsConfiguration",
        "aws:ebs/defaultKmsKey:DefaultKmsKey",
        "aws:ebs/encryptionByDefault:EncryptionByDefault",
        "aws:ebs/snapshotBlockPublicAccess:SnapshotBlockPublicAccess",
        "aws:ec2/allowedImagesSettings:AllowedImagesSettings",
        "aws:ec2/amiLaunchPermission:AmiLaunchPermission",
        "aws:ec2/availabilityZoneGroup:AvailabilityZoneGroup",
        "aws:ec2/carrierGateway:CarrierGateway",
        "aws:ec2/customerGateway:CustomerGateway",
        "aws:ec2/defaultSubnet:DefaultSubnet",
        "aws:ec2/defaultVpc:DefaultVpc",
        "aws:ec2/defaultVpcDhcpOptions:DefaultVpcDhcpOptions",
        "aws:ec2/eipDomainName:EipDomainName",
        "aws:ec2/imageBlockPublicAccess:ImageBlockPublicAccess",
        "aws:ec2/instanceMetadataDefaults:InstanceMetadataDefaults",
        "aws:ec2/localGatewayRoute:LocalGatewayRoute",
        "aws:ec2/localGatewayRouteTable:LocalGatewayRouteTable",
        "aws:ec2/localGatewayRouteTableVirtualInterfaceGroupAssociation:"
        "LocalGatewayRouteTableVirtualInterfaceGroupAssociation",
        "aws:ec2/localGatewayRouteTableVpcAssociation:LocalGatewayRouteTableVpcAssociation",
        "aws:ec2/managedPrefixList:ManagedPrefixList",
        "aws:ec2/managedPrefixListEntry:ManagedPrefixListEntry",
        "aws:ec2/natGatewayEipAssociation:NatGatewayEipAssociation",
        "aws:ec2/networkInsightsPath:NetworkInsightsPath",
        "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions",
        "aws:ec2/proxyProtocolPolicy:ProxyProtocolPolicy",
        "aws:ec2/secondaryNetwork:SecondaryNetwork",
        "aws:ec2/secondarySubnet:SecondarySubnet",
        "aws:ec2/serialConsoleAccess:SerialConsoleAccess",
        "aws:ec2/snapshotCreateVolumePermission:SnapshotCreateVolumePermission",
        "aws:ec2/subnetCidrReservation:SubnetCidrReservation",
        "aws:ec2/trafficMirrorFilter:TrafficMirrorFilter",
        "aws:ec2/trafficMirrorFilterRule:TrafficMirrorFilterRule",
        "aws:ec2/trafficMirrorTarget:TrafficMirrorTarget",
        "aws:ec2/volumeAttachment:VolumeAttachment",
        "aws:ec2/vpcBlockPublicAccessExclusion:VpcBlockPublicAccessExclusion",
        "aws:ec2/vpcBlockPublicAccessOptions:VpcBlockPublicAccessOptions",
        "aws:ec2/vpcEndpointConnectionAccepter:VpcEndpointConnectionAccepter",
        "aws:ec2/vpcEndpointConnectionNotification:VpcEndpointConnectionNotification",
        "aws:ec2/vpcEndpointPolicy:VpcEndpointPolicy",
        "aws:ec2/vpcEndpointService:VpcEndpointService",
        "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple",
        "aws:ec2/vpcIpamOrganizationAdminAccount:VpcIpamOrganizationAdminAccount",
        "aws:ec2/vpcIpamPool:VpcIpamPool",
        "aws:ec2/vpcIpamPoolCidr:VpcIpamPoolCidr",
        "aws:ec2/vpcIpamPoolCidrAllocation:VpcIpamPoolCidrAllocation",
        "aws:ec2/vpcIpamPreviewNextCidr:VpcIpamPreviewNextCidr",
        "aws:ec2/vpcIpamResourceDiscovery:VpcIpamResourceDiscovery",
        "aws:ec2/vpcIpamResourceDiscoveryAssociation:VpcIpamResourceDiscoveryAssociation",
        "aws:ec2/vpcIpamScope:VpcIpamScope",
        "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation",
        "aws:ec2/vpcIpv6CidrBlockAssociation:VpcIpv6CidrBlockAssociation",
        "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter",
        "aws:ec2/vpcSecurityGroupRulesExclusive:VpcSecurityGroupRulesExclusive",
        "aws:ec2/vpnConnectionRoute:VpnConnectionRoute",
        "aws:ec2/vpnGateway:VpnGateway",
        "aws:ec2/vpnGatewayAttachment:VpnGatewayAttachment",
        "aws:ec2/vpnGatewayRoutePropagation:VpnGatewayRoutePropagation",
        "aws:ec2/internetGatewayAttachment:InternetGatewayAttachment",
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "aws:ec2/securityGroupAssociation:SecurityGroupAssociation",
        "aws:ec2/vpcDhcpOptionsAssociation:VpcDhcpOptionsAssociation",
        "aws:ec2/networkAclAssociation:NetworkAclAssociation",
        "aws:ec2transitgateway/connectPeer:ConnectPeer",
        "aws:ec2transitgateway/defaultRouteTableAssociation:DefaultRouteTableAssociation",
        "aws:ec2transitgateway/defaultRouteTablePropagation:DefaultRouteTablePropagation",
        "aws:ec2transitgateway/instanceConnectEndpoint:InstanceConnectEndpoint",
        "aws:ec2transitgateway/instanceState:InstanceState",
        "aws:ec2transitgateway/meteringPolicy:MeteringPolicy",
        "aws:ec2transitgateway/meteringPolicyEntry:MeteringPolicyEntry",
        "aws:ec2transitgateway/multicastDomain:MulticastDomain",
        "aws:ec2transitgateway/multicastGroupMember:MulticastGroupMember",
        "aws:ec2transitgateway/multicastGroupSource:MulticastGroupSource",
        "aws:ec2transitgateway/peeringAttachmentAccepter:PeeringAttachmentAccepter",
        "aws:ec2transitgateway/policyTable:PolicyTable",
        "aws:ec2transitgateway/policyTableAssociation:PolicyTableAssociation",
        "aws:ec2transitgateway/policyTableEntry:PolicyTableEntry",
        "aws:ec2transitgateway/prefixListReference:PrefixListReference",
        "aws:ec2transitgateway/route:Route",
        "aws:ec2transitgateway/routeTable:RouteTable",
        "aws:ec2transitgateway/routeTableAssociation:RouteTableAssociation",
        "aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation",
        "aws:ec2transitgateway/transitGateway:TransitGateway",
        "aws:ec2transitgateway/vpcAttachmentAccepter:VpcAttachmentAccepter",
        "aws:ecr/accountSetting:AccountSetting",
        "aws:ecr/lifecyclePolicy:LifecyclePolicy",
        "aws:ecr/pullTimeUpdateExclusion:PullTimeUpdateExclusion",
        "aws:ecr/registryPolicy:RegistryPolicy",
        "aws:ecr/repositoryCreationTemplate:RepositoryCreationTemplate",
        "aws:ecr/repositoryPolicy:RepositoryPolicy",
        "aws:efs/accessPoint:AccessPoint",
        "aws:efs/fileSystemPolicy:FileSystemPolicy",
        "aws:efs/mountTarget:MountTarget",
        "aws:eks/identityProviderConfig:IdentityProviderConfig",
        "aws:fsx/ontapStorageVirtualMachine:OntapStorageVirtualMachine",
        "aws:fsx/openZfsVolume:OpenZfsVolume",
        "aws:fsx/s3AccessPointAttachment:S3AccessPointAttachment",
        "aws:kms/keyPolicy:KeyPolicy",
        "aws:rds/certificate:Certificate",
        "aws:rds/clusterEndpoint:ClusterEndpoint",
        "aws:rds/clusterParameterGroup:ClusterParameterGroup",
        "aws:rds/clusterRoleAssociation:ClusterRoleAssociation",
        "aws:rds/eventSubscription:EventSubscription",
        "aws:rds/instanceDesiredState:InstanceDesiredState",
        "aws:rds/optionGroup:OptionGroup",
        "aws:rds/parameterGroup:ParameterGroup",
        "aws:rds/proxyDefaultTargetGroup:ProxyDefaultTargetGroup",
        "aws:rds/proxyTarget:ProxyTarget",
        "aws:rds/roleAssociation:RoleAssociation",
        "aws:rds/subnetGroup:SubnetGroup",
        "aws:s3/accessPoint:AccessPoint",
        "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock",
        "aws:s3/filesAccessPoint:FilesAccessPoint",
        "aws:s3/filesFileSystemPolicy:FilesFileSystemPolicy",
        "aws:s3/filesMountTarget:FilesMountTarget",
        "aws:s3/vectorsVectorBucketPolicy:VectorsVectorBucketPolicy",
        "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy",
        "aws:sqs/redrivePolicy:RedrivePolicy",
        "aws:vpc/endpointPrivateDns:EndpointPrivateDns",
        "aws:vpc/endpointServicePrivateDnsVerification:EndpointServicePrivateDnsVerification",
        "aws:vpc/routeServer:RouteServer",
        "aws:vpc/routeServerPeer:RouteServerPeer",
        "aws:vpc/routeServerPropagation:RouteServerPropagation",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "aws:vpc/securityGroupVpcAssociation:SecurityGroupVpcAssociation",
        # Public ACM certificates, API Gateway and ECS configuration, CloudFormation stacks of AWS resource types,
        # Glue connections and triggers, Lambda permissions and secret versions (billed with their secret) cost
        # nothing themselves (each service's AWS pricing page).
        "aws:acm/certificate:Certificate",
        "aws:acm/certificateValidation:CertificateValidation",
        "aws:apigateway/deployment:Deployment",
        "aws:apigatewayv2/integration:Integration",
        "aws:apigatewayv2/route:Route",
        "aws:apigatewayv2/stage:Stage",
        "aws:cloudformation/stack:Stack",
        "aws:ecs/capacityProvider:CapacityProvider",
        "aws:ecs/cluster:Cluster",
        "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders",
        "aws:ecs/taskDefinition:TaskDefinition",
        "aws:glue/connection:Connection",
        "aws:glue/trigger:Trigger",
        "aws:lambda/permission:Permission",
        "aws:redshift/subnetGroup:SubnetGroup",
        "aws:secretsmanager/secretVersion:SecretVersion",
        # Data Exports (CUR 2.0) deliver to S3 free of charge; the bucket's stored GB is billed on the bucket.
        "aws:bcmdata/export:Export",
        # An image build pushes to a registry: what is stored there bills on the repository (ECR: usage-billed).
        "docker:index/image:Image",
    }
)


# ---- Kubernetes objects that make AWS bill (priced by gpucloud.cost.handlers.kube_lb / kube_volumes) -------


def kube_billable(
    manifest: Mapping[str, Any], alb_classes: Collection[str] = ("alb",), default_class: str | None = None
) -> str | None:
    """What AWS bills because of a Kubernetes object, in the words the cost section names it by ("Service ns/name"),
    or None when the object itself makes AWS bill nothing. Every such object must end in an item or an unpriced
    entry that names it (tests/cost/test_nothing_unpriced.py). ``alb_classes``: the IngressClass names the AWS
    Load Balancer Controller serves (``alb`` and the plan's classes of controller ``ingress.k8s.aws/alb``);
    ``default_class``: the cluster's default IngressClass, which an Ingress without a class gets."""
    kind = str(manifest.get("kind", ""))
    meta, spec = obj(manifest.get("metadata")), obj(manifest.get("spec"))
    where = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    if kind == "Ingress":
        annotations = obj(meta.get("annotations"))
        cls = spec.get("ingressClassName") or annotations.get("kubernetes.io/ingress.class") or default_class
        if is_unknown(cls):
            return f"Ingress {where}"  # unknown at preview: listed with that reason
        if cls not in alb_classes:
            return None  # another controller's: its own LoadBalancer Service is what bills
        # Ingresses of one group share one ALB, named by the group.
        group = annotations.get("alb.ingress.kubernetes.io/group.name")
        return f"Ingress group {group}" if isinstance(group, str) and group else f"Ingress {where}"
    if kind == "Service" and spec.get("type") == "LoadBalancer":
        return f"Service {where}"
    if kind == "PersistentVolumeClaim" and spec.get("storageClassName") != "":
        return f"PVC {where}"
    if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
        return f"StatefulSet {where}"
    storage = spec.get("storage")
    if kind in ("Prometheus", "Alertmanager") and isinstance(storage, Mapping) and storage.get("volumeClaimTemplate"):
        return f"{kind} {where}"
    return None
