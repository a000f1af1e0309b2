"""A Kinesis data stream stored without server-side encryption."""

import pulumi_aws as aws

aws.kinesis.Stream("telemetry", shard_count=1, encryption_type="NONE")
