resource "kubernetes_manifest" "train" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = "train" }
    spec = {
      template = {
        spec = {
          nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
          requirements = [
            { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["p"] },
            { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["4"] },
          ]
        }
      }
      limits = { "nvidia.com/gpu" = "64" }
    }
  }
}
