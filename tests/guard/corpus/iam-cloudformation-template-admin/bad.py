"""The admin grant hides in a template body (YAML with short-form intrinsic tags), not in an iam.Policy."""

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
            Action: '*'
            Resource: '*'
"""

aws.cloudformation.Stack("ops-roles", template_body=TEMPLATE, capabilities=["CAPABILITY_NAMED_IAM"])
