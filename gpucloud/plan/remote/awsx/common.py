"""What the awsx models share (pulumi/pulumi-awsx v3.8.0): the open security group rules awsx gives the
default security groups it creates (lb/applicationLoadBalancer.ts, ecs/fargateService.ts) and utils.ts sha1hash."""

from __future__ import annotations

import hashlib

OPEN_INGRESS = [{"fromPort": 0, "toPort": 0, "protocol": "-1", "cidrBlocks": ["0.0.0.0/0"], "ipv6CidrBlocks": ["::/0"]}]
OPEN_EGRESS = [
    {"fromPort": 0, "toPort": 65535, "protocol": "tcp", "cidrBlocks": ["0.0.0.0/0"], "ipv6CidrBlocks": ["::/0"]}
]


def sha1(text: str) -> str:
    # awsx/utils.ts sha1hash: the first 8 hex digits.
    return hashlib.sha1(text.encode()).hexdigest()[:8]
