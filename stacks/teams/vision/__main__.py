"""Team stack: the vision team's namespace, quota and pod identity on the platform stack it references.

Everything about the cluster comes from the platform stack's outputs (StackReference); nothing is looked up.
"""

import sys
from pathlib import Path

try:
    import components.team  # noqa: F401
except ImportError:
    # Run by the Pulumi CLI with a venv that lacks `pip install -e .`: use this checkout's packages.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import pulumi
import pulumi_kubernetes as k8s

from components.team import GpuTeam, GpuTeamConfig
from gpucloud.spec.team import load_team

team = load_team()
platform = pulumi.StackReference(team.platform_stack)

# The platform's kubeconfig authenticates with `aws eks get-token`, so whoever runs this stack needs an IAM
# identity the platform lists in cluster.adminPrincipalArns (or a team access entry), and network reach to the
# private API endpoint.
k8s_provider = k8s.Provider(f"{team.name}-k8s", kubeconfig=pulumi.Output.secret(platform.require_output("kubeconfig")))

tenant = GpuTeam(
    team.name,
    GpuTeamConfig(region=team.region, tags=team.all_tags, team=team),
    cluster_name=platform.require_output("clusterName"),
    k8s_provider=k8s_provider,
)

# Team GPU node pools and storage come here (later issues): build a ClusterHandle from the platform outputs
# (clusterName, privateSubnetIdsByAz, nodeRoleArn, nodeSecurityGroupId, clusterSecurityGroupId,
# efaSecurityGroupId, kmsKeyArn, oidcProviderArn/Url, kubernetesVersion) and pass it with `k8s_provider`.

pulumi.export("namespace", tenant.namespace_name)
pulumi.export("serviceAccount", tenant.service_account_name)
pulumi.export("podRoleArn", tenant.pod_role_arn)
pulumi.export("clusterName", platform.require_output("clusterName"))
