"""A program blocked in synchronous code: an apply that waits on an event nobody sets."""

import threading

import pulumi
import pulumi_aws as aws

bucket = aws.s3.Bucket("b")


def wait_forever(name: str) -> str:
    threading.Event().wait()
    return name


pulumi.export("name", bucket.bucket.apply(wait_forever))
