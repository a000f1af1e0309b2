resource "aws_cloudformation_stack" "ops_roles" {
  name         = "ops-roles"
  capabilities = ["CAPABILITY_NAMED_IAM"]
  template_body = <<-YAML
    AWSTemplateFormatVersion: '2010-09-09'
    Resources:
      OpsPolicy:
        Type: AWS::IAM::ManagedPolicy
        Properties:
          ManagedPolicyName: !Sub '$${AWS::StackName}-ops'
          PolicyDocument:
            Version: '2012-10-17'
            Statement:
              - Effect: Allow
                Action: '*'
                Resource: '*'
  YAML
}
