"""A GPU instance launched from a template named by a literal ID, outside the program: IMDS, encryption and
public IP all come from something the plan cannot see."""

import pulumi_aws as aws

aws.ec2.Instance(
    "trainer",
    instance_type="g6e.xlarge",
    launch_template={"id": "lt-0123456789abcdef0", "version": "$Latest"},
    tags={"CostCenter": "ml", "Team": "vision", "Project": "corpus", "Env": "prod"},
)
