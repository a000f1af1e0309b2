resource "kubernetes_manifest" "gpu_class" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind = "EC2NodeClass"
    metadata = {
      name = "gpu"
    }
    spec = {
      role = "KarpenterNodeRole-corpus"
      tags = {
        CostCenter = "ml-platform"
        Team = "platform"
        Project = "corpus"
        Env = "prod"
      }
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "corpus"
        }
      }]
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "corpus"
        }
      }]
      blockDeviceMappings = [{
        deviceName = "/dev/xvda"
        ebs = {
          volumeSize = "100Gi"
          volumeType = "gp3"
          encrypted = true
          kmsKeyID = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
        }
      }]
      associatePublicIPAddress = false
    }
  }
}
