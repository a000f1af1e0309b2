resource "kubernetes_manifest" "llm_serve" {
  manifest = {
    apiVersion = "serving.kserve.io/v1beta1"
    kind       = "InferenceService"
    metadata   = { name = "llm-serve", namespace = "ml" }
    spec       = { "predictor" = { "containers" = [{ "name" = "kserve-container", "image" = "registry.example.com/ml/vllm:0.8" }]}}
  }
}
