# The same NodePool as bad.py: a GPU limit written as the quantity "1k" (1,000 GPUs).
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
            { key = "node.kubernetes.io/instance-type", operator = "In", values = ["p5.48xlarge"] },
            { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
          ]
        }
      }
      limits = { "nvidia.com/gpu" = "1k" }
    }
  }
}
