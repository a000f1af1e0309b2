resource "kubernetes_manifest" "gpu_class" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1beta1"
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
      amiFamily = "AL2023"
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
      metadataOptions = {
        httpEndpoint = "enabled"
        httpTokens = "required"
        httpPutResponseHopLimit = 1
      }
      blockDeviceMappings = [{
        deviceName = "/dev/xvda"
        ebs = {
          volumeSize = "100Gi"
          volumeType = "gp3"
          encrypted = true
        }
      }]
    }
  }
}
