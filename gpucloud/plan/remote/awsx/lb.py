"""awsx `lb.ApplicationLoadBalancer` and `lb.NetworkLoadBalancer` (pulumi/pulumi-awsx v3.8.0):
awsx/lb/applicationLoadBalancer.ts and awsx/lb/networkLoadBalancer.ts."""

from __future__ import annotations

from typing import Any

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Unmodelled, only_inputs_of
from gpucloud.plan.remote.awsx.common import OPEN_EGRESS, OPEN_INGRESS


def application_load_balancer(ctx: Context) -> None:
    """applicationLoadBalancer.ts: a default security group, the load balancer, a target group and listeners."""
    name, a = ctx.name, ctx.inputs
    rest = {
        k: v
        for k, v in a.items()
        if k
        not in (
            "subnetIds",
            "subnets",
            "defaultTargetGroup",
            "defaultTargetGroupPort",
            "defaultSecurityGroup",
            "listener",
            "listeners",
        )
    }
    lb = only_inputs_of("aws:lb/loadBalancer:LoadBalancer", rest)
    if a.get("subnets") is not None:
        lb["subnets"] = [UNKNOWN for _ in a["subnets"]] if isinstance(a["subnets"], list) else UNKNOWN
    elif a.get("subnetIds") is not None:
        lb["subnets"] = a["subnetIds"]
    elif a.get("subnetMappings") is None:
        lb["subnets"] = UNKNOWN  # the default VPC's public subnets (getDefaultVpc)
    default_sg = a.get("defaultSecurityGroup") or {}
    if lb.get("securityGroups") is None and not default_sg.get("skip"):
        if default_sg.get("securityGroupId") is not None:
            lb["securityGroups"] = [default_sg["securityGroupId"]]
        else:
            sg_args = default_sg.get("args") or {"vpcId": UNKNOWN, "ingress": OPEN_INGRESS, "egress": OPEN_EGRESS}
            ctx.add("aws:ec2/securityGroup:SecurityGroup", name, sg_args)
            lb["securityGroups"] = [UNKNOWN]
    lb["loadBalancerType"] = "application"
    ctx.add("aws:lb/loadBalancer:LoadBalancer", name, lb)
    protocol = _default_protocol(a)
    target = {"vpcId": UNKNOWN, "targetType": "ip", **(protocol or {}), **(a.get("defaultTargetGroup") or {})}
    ctx.add("aws:lb/targetGroup:TargetGroup", name, target)
    actions = [{"type": "forward", "targetGroupArn": UNKNOWN}]
    listeners = a.get("listeners")
    if a.get("listener") is not None:
        listeners = [{**(protocol or {}), **a["listener"]}]
    elif listeners is not None:
        listeners = [{**(_listener_protocol(x) or {}), **x} for x in listeners]
    else:
        listeners = [dict(protocol or {})]
    for i, listener in enumerate(listeners):
        ctx.add(
            "aws:lb/listener:Listener",
            f"{name}-{i}",
            {"defaultActions": actions, **listener, "loadBalancerArn": UNKNOWN},
        )


def _default_protocol(a: dict[str, Any]) -> dict[str, Any] | None:
    listener = a.get("listener")
    if a.get("listeners") is not None:
        if len(a["listeners"]) == 1:
            return None
        listener = a["listeners"][0]
    return _listener_protocol(listener, a.get("defaultTargetGroupPort"))


def _listener_protocol(listener: dict[str, Any] | None, default_port: Any = None) -> dict[str, Any] | None:
    if listener:
        port, protocol = listener.get("port"), listener.get("protocol")
        if port and protocol:
            return {"port": port, "protocol": protocol}
        if port:
            return {"port": port, "protocol": "HTTPS" if port == 443 else "HTTP"}
        if protocol:
            return {"protocol": protocol, "port": 443 if protocol == "HTTPS" else 80}
    return {"port": default_port if default_port is not None else 80, "protocol": "HTTP"}


def _only_one(a: dict[str, Any], *keys: str) -> None:
    given = [k for k in keys if a.get(k) is not None]
    if len(given) > 1:
        raise Unmodelled(f"the provider refuses more than one of {', '.join(keys)} (given: {', '.join(given)})")


def network_load_balancer(ctx: Context) -> None:
    """networkLoadBalancer.ts: the load balancer (no security group), a TCP target group and TCP listeners."""
    name, a = ctx.name, ctx.inputs
    _only_one(a, "subnetIds", "subnets", "subnetMappings")
    _only_one(a, "listener", "listeners")
    _only_one(a, "defaultTargetGroup", "defaultTargetGroupPort")
    skipped = ("subnetIds", "subnets", "defaultTargetGroup", "defaultTargetGroupPort", "listener", "listeners")
    lb = only_inputs_of("aws:lb/loadBalancer:LoadBalancer", {k: v for k, v in a.items() if k not in skipped})
    if a.get("subnets") is not None:
        lb["subnets"] = [UNKNOWN for _ in a["subnets"]] if isinstance(a["subnets"], list) else UNKNOWN
    elif a.get("subnetIds") is not None:
        lb["subnets"] = a["subnetIds"]
    elif a.get("subnetMappings") is None:
        lb["subnets"] = UNKNOWN  # the default VPC's public subnets (getDefaultVpc)
    # "this is a network loadbalancer so we set this explicitly"; HTTP/2 and the idle timeout are ALB settings.
    lb.update({"loadBalancerType": "network", "enableHttp2": False, "idleTimeout": 0})
    ctx.add("aws:lb/loadBalancer:LoadBalancer", name, lb)
    port = a.get("defaultTargetGroupPort")
    target = {"vpcId": UNKNOWN, "protocol": "TCP", "port": 80 if port is None else port}
    ctx.add("aws:lb/targetGroup:TargetGroup", name, {**target, **(a.get("defaultTargetGroup") or {})})
    actions = [{"type": "forward", "targetGroupArn": UNKNOWN}]
    listeners = [a["listener"]] if a.get("listener") is not None else a.get("listeners") or [{}]
    for i, listener in enumerate(listeners):
        ctx.add(
            "aws:lb/listener:Listener",
            f"{name}-{i}",
            {"defaultActions": actions, "protocol": "TCP", "port": 80, **listener, "loadBalancerArn": UNKNOWN},
        )
