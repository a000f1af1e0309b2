provider "kubernetes" {}

resource "kubernetes_manifest" "llama_pretrain" {
  manifest = {
    apiVersion = "kubeflow.org/v2beta1"
    kind       = "MPIJob"
    metadata   = { name = "llama-pretrain", namespace = "ml" }
    spec = {
      slotsPerWorker = 8
      mpiReplicaSpecs = {
        Launcher = { replicas = 1, template = { spec = { containers = [{ name = "launcher", image = "nccl-tests:2.23" }] } } }
        Worker = {
          replicas = 4
          template = { spec = {
            containers = [{ name = "worker", image = "nccl-tests:2.23", volumeMounts = [{ name = "shm", mountPath = "/dev/shm" }] }]
            volumes    = [{ name = "shm", emptyDir = { medium = "Memory" } }]
          } }
        }
      }
    }
  }
}
