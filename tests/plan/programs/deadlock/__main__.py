"""A program that really deadlocks: a bucket's name waits on a Future nothing completes; others wait on it."""

import asyncio

import pulumi
import pulumi_aws as aws

never: asyncio.Future = asyncio.get_event_loop().create_future()
stuck = aws.s3.Bucket("stuck", bucket=pulumi.Output.from_input(never))
aws.s3.BucketPolicy("waits", bucket=stuck.id, policy="{}")
aws.s3.Bucket("after", opts=pulumi.ResourceOptions(depends_on=[stuck]))
aws.s3.Bucket("fine")
