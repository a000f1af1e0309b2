"""Components whose outputs are their children's, a dependency chain across components, and a remote
(multi-language) component given Resource objects as inputs."""

import pulumi
import pulumi_aws as aws


class Network(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("example:net:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block="10.0.0.0/16", opts=child)
        self.subnet = aws.ec2.Subnet(f"{name}-subnet", vpc_id=self.vpc.id, cidr_block="10.0.1.0/24", opts=child)
        self.vpc_id = self.vpc.id
        self.register_outputs({"vpc": self.vpc, "vpcId": self.vpc.id, "subnet": self.subnet})


class Cluster(pulumi.ComponentResource):
    def __init__(self, name: str, network: Network, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("example:eks:Cluster", name, {"network": network, "vpcId": network.vpc_id}, opts)
        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-sg", vpc_id=network.vpc_id, opts=pulumi.ResourceOptions(parent=self, depends_on=[network])
        )
        self.register_outputs({"securityGroup": self.security_group})


class RemoteNodeGroup(pulumi.ComponentResource):
    """Registered as pulumi_eks registers eks.ManagedNodeGroup: a remote component whose inputs hold resources."""

    def __init__(self, name: str, props: dict, opts: pulumi.ResourceOptions | None = None) -> None:  # type: ignore[type-arg]
        super().__init__("example-remote:index:NodeGroup", name, props, opts, remote=True)


network = Network("net")
cluster = Cluster("gpu", network)
role = aws.iam.Role("node-role", assume_role_policy="{}")
nodes = RemoteNodeGroup("gpu-nodes", {"cluster": cluster, "nodeRole": role, "instanceTypes": ["g5.xlarge"]})
pulumi.export("securityGroupVpc", cluster.security_group.vpc_id)
pulumi.export("nodes", nodes.urn)
