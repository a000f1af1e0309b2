resource "kubernetes_manifest" "infer" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = "infer" }
    spec = {
      template = {
        spec = {
          nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
          requirements = [
            { key = "karpenter.k8s.aws/instance-gpu-name", operator = "In", values = ["l40s"] },
            { key = "karpenter.k8s.aws/instance-gpu-count", operator = "Gt", values = ["0"] },
          ]
        }
      }
      limits = { "nvidia.com/gpu" = "16" }
    }
  }
}
