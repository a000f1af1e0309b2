"""The good twin: the template's policy grants the actions the operators need."""

import pulumi_aws as aws

TEMPLATE = """AWSTemplateFormatVersion: '2010-09-09'
Resources:
  OpsPolicy:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      ManagedPolicyName: !Sub '${AWS::StackName}-ops'
      PolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Action: ['ec2:DescribeInstances', 'autoscaling:DescribeAutoScalingGroups']
            Resource: '*'
"""

aws.cloudformation.Stack("ops-roles", template_body=TEMPLATE, capabilities=["CAPABILITY_NAMED_IAM"])
