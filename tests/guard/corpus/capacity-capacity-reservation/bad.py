"""An On-Demand Capacity Reservation for 17 V100 machines: deprecated, not allowed, 136 idle-billed GPUs."""

import pulumi_aws as aws

aws.ec2.CapacityReservation(
    "odcr",
    instance_type="p3.16xlarge",
    instance_count=17,
    availability_zone="us-east-1a",
    instance_platform="Linux/UNIX",
    tags={"CostCenter": "ml", "Team": "ml", "Project": "corpus", "Env": "prod"},
)
