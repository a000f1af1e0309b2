provider "kubernetes" {}

resource "kubernetes_manifest" "eval_sweep" {
  manifest = {
    apiVersion = "jobset.x-k8s.io/v1alpha2"
    kind       = "JobSet"
    metadata   = { name = "eval-sweep", namespace = "ml" }
    spec = {
      replicatedJobs = [{
        name     = "workers"
        replicas = 2
        template = { spec = { template = { spec = {
          restartPolicy = "Never"
          containers    = [{ name = "eval", image = "eval:1.4", securityContext = { privileged = true } }]
        } } } }
      }]
    }
  }
}
