"""Workload templates under recording mocks: the pods they render (resources, tolerations, affinity, env,
volumes), their PDBs and autoscalers, and the acceptance jobs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gpucloud.components.workloads import (
    DcgmDiag,
    DcgmDiagConfig,
    InferenceDeployment,
    InferenceDeploymentConfig,
    NcclTest,
    NcclTestConfig,
    TrainingJob,
    TrainingJobConfig,
    nccl_env,
)
from gpucloud.plan import Plan, ResourceRecord, run_callable
from gpucloud.spec.addons import DCGM_IMAGE

TAGS = {"CostCenter": "ml", "Team": "vision", "Project": "gpucloud", "Env": "prod"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
PROM = "http://kube-prometheus-stack-prometheus.monitoring.svc.cluster.local:9090"


def base(**overrides: Any) -> dict[str, Any]:
    return {
        "region": "us-east-1",
        "tags": TAGS,
        "namespace": "vision",
        "job_name": "llm-pretrain",
        "pool": "train-h100",
        "instance_type": "p5.48xlarge",
        "availability_zones": ["us-east-1a"],
        "image": "registry.example/vision/train:1.4.2",
        "use_efa": True,
        **overrides,
    }


def training(**overrides: Any) -> TrainingJobConfig:
    kwargs = base(
        nodes=4,
        script="/workspace/train_ddp.py",
        script_args=["--steps", "10000"],
        claim_name="fsx-lustre",
    )
    kwargs.update(overrides)
    return TrainingJobConfig(**kwargs)


def run(fn: Any) -> Plan:
    return run_callable(fn, preview=False, region="us-east-1")


def pod_spec(record: ResourceRecord) -> dict[str, Any]:
    return record.inputs["spec"]["template"]["spec"]


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"]}


def match_expressions(spec: dict[str, Any]) -> list[dict[str, Any]]:
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return terms[0]["matchExpressions"]


# -- NCCL environment -----------------------------------------------------------------------------------------


def test_nccl_env_per_instance_type() -> None:
    assert nccl_env("p5.48xlarge", True) == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DEBUG": "WARN",
        "FI_EFA_USE_HUGE_PAGE": "0",
    }
    assert nccl_env("g6.12xlarge", False) == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DEBUG": "WARN",
        "NCCL_SHM_USE_CUDA_MEMCPY": "1",
    }
    assert nccl_env("g5.48xlarge", True)["NCCL_SHM_USE_CUDA_MEMCPY"] == "1"


# -- training job ------------------------------------------------------------------------------------------


def test_training_job_indexed_job_on_efa_pool() -> None:
    plan = run(lambda: TrainingJob("pretrain", training()))
    assert {(r.type, r.name) for r in plan} == {
        ("gpucloud:workloads:TrainingJob", "pretrain"),
        ("kubernetes:core/v1:Service", "pretrain-workers"),
        ("kubernetes:batch/v1:Job", "pretrain-job"),
        ("kubernetes:policy/v1:PodDisruptionBudget", "pretrain-pdb"),
    }
    job = plan.find("kubernetes:batch/v1:Job", "pretrain-job")
    spec = job.inputs["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (
        "Indexed",
        4,
        4,
        12,
    )
    assert spec["podFailurePolicy"]["rules"] == [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    ]
    pod = pod_spec(job)
    assert pod["subdomain"] == "llm-pretrain-workers"
    assert pod["restartPolicy"] == "Never"
    assert pod["terminationGracePeriodSeconds"] == 110
    assert pod["tolerations"] == [GPU_TOLERATION]
    assert match_expressions(pod) == [
        {"key": "gpucloud.io/pool", "operator": "In", "values": ["train-h100"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]},
    ]
    (container,) = pod["containers"]
    # cpu: 80% of p5.48xlarge's 192 vCPUs, like the memory share.
    resources = {
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
        "memory": "1638Gi",
        "cpu": "153",
    }
    assert container["resources"] == {"requests": resources, "limits": resources}
    env = env_of(container)
    assert env == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DEBUG": "WARN",
        "FI_EFA_USE_HUGE_PAGE": "0",
        "CHECKPOINT_DIR": "/fsx/checkpoints/llm-pretrain",
        "GPUCLOUD_PREEMPT_FILE": "/tmp/gpucloud-preempt",
        "PYTHONUNBUFFERED": "1",
    }
    assert container["command"] == [
        "torchrun",
        "--nnodes=4",
        "--nproc-per-node=8",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=llm-pretrain-0.llm-pretrain-workers.vision.svc.cluster.local:29500",
        "--rdzv-id=llm-pretrain",
        "--max-restarts=3",
        "/workspace/train_ddp.py",
        "--steps",
        "10000",
    ]
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[:2] == ["/bin/sh", "-c"]
    assert "touch /tmp/gpucloud-preempt" in pre_stop[2] and "$i -lt 100" in pre_stop[2]
    assert container["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "fsx", "mountPath": "/fsx"},
    ]
    assert pod["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "512Gi"}},
        {"name": "fsx", "persistentVolumeClaim": {"claimName": "fsx-lustre"}},
    ]
    assert "annotations" not in job.inputs["spec"]["template"]["metadata"]
    svc = plan.find("kubernetes:core/v1:Service", "pretrain-workers")
    assert (svc.inputs["spec"]["clusterIP"], svc.inputs["spec"]["publishNotReadyAddresses"]) == ("None", True)
    assert svc.inputs["spec"]["selector"] == {
        "app.kubernetes.io/name": "llm-pretrain",
        "gpucloud.io/workload": "llm-pretrain",
    }
    pdb = plan.find("kubernetes:policy/v1:PodDisruptionBudget", "pretrain-pdb")
    assert pdb.inputs["spec"] == {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "llm-pretrain", "gpucloud.io/workload": "llm-pretrain"}},
        # Admits the interruption handler's eviction of one of the 4 ranks (that eviction runs the checkpoint
        # preStop); minAvailable: 4 allowed none. An integer minAvailable: Job pods have no scale subresource,
        # so maxUnavailable or a percentage would allow no eviction either.
        "minAvailable": 3,
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }


def test_training_job_on_karpenter_non_efa_g6_pool() -> None:
    config = training(
        instance_type="g6.12xlarge",
        pool="dev-l4",
        use_efa=False,
        availability_zones=None,
        use_karpenter=True,
        checkpoint_dir="/fsx/ckpt/a",
        termination_grace_period_seconds=90,
        env={"WANDB_MODE": "offline"},
    )
    plan = run(lambda: TrainingJob("dev", config))
    job = plan.find("kubernetes:batch/v1:Job", "dev-job")
    assert job.inputs["spec"]["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    pod = pod_spec(job)
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "4", "memory": "153Gi", "cpu": "38"}
    env = env_of(container)
    assert env["NCCL_SHM_USE_CUDA_MEMCPY"] == "1"
    assert env["WANDB_MODE"] == "offline"
    assert env["CHECKPOINT_DIR"] == "/fsx/ckpt/a"
    assert "FI_EFA_USE_HUGE_PAGE" not in env and "FI_EFA_USE_DEVICE_RDMA" not in env
    assert [e["key"] for e in match_expressions(pod)] == ["gpucloud.io/pool", "node.kubernetes.io/instance-type"]
    assert pod["terminationGracePeriodSeconds"] == 90


def test_training_job_as_pytorchjob() -> None:
    plan = run(lambda: TrainingJob("pretrain", training(use_pytorch_job=True, nodes=3)))
    assert {r.type for r in plan} == {
        "gpucloud:workloads:TrainingJob",
        "kubernetes:kubeflow.org/v1:PyTorchJob",
        "kubernetes:policy/v1:PodDisruptionBudget",
    }
    job = plan.find("kubernetes:kubeflow.org/v1:PyTorchJob", "pretrain-pytorchjob")
    spec = job.inputs["spec"]
    assert spec["nprocPerNode"] == "8"
    assert spec["runPolicy"] == {"cleanPodPolicy": "None", "backoffLimit": 9}
    replicas = spec["pytorchReplicaSpecs"]
    assert {k: (v["replicas"], v["restartPolicy"]) for k, v in replicas.items()} == {
        "Master": (1, "OnFailure"),
        "Worker": (2, "OnFailure"),
    }
    (container,) = replicas["Worker"]["template"]["spec"]["containers"]
    assert container["name"] == "pytorch"
    assert container["command"][:6] == [
        "torchrun",
        "--nnodes=3",
        "--nproc-per-node=8",
        "--node-rank=$(RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
    ]
    assert "subdomain" not in replicas["Master"]["template"]["spec"]


def test_single_node_pytorchjob_has_no_workers() -> None:
    plan = run(lambda: TrainingJob("one", training(use_pytorch_job=True, nodes=1)))
    job = plan.find("kubernetes:kubeflow.org/v1:PyTorchJob", "one-pytorchjob")
    assert set(job.inputs["spec"]["pytorchReplicaSpecs"]) == {"Master"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"instance_type": "g6.2xlarge"}, "g6.2xlarge has no EFA"),
        ({"instance_type": "g4ad.xlarge", "use_efa": False}, "has no NVIDIA GPU"),
        ({"availability_zones": None}, "exactly one AZ"),
        ({"availability_zones": ["us-east-1a", "us-east-1b"]}, "exactly one AZ"),
        ({"instance_type": "p5.48xlargee"}, "unknown instance type 'p5.48xlargee'"),
        ({"instance_type": "trn1.32xlarge"}, "has no NVIDIA GPU"),
        ({"job_name": "Bad_Name"}, "not a lowercase DNS label"),
    ],
)
def test_training_config_rejects_bad_placement(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        training(**overrides)


# -- inference -----------------------------------------------------------------------------------------------


def inference(**overrides: Any) -> InferenceDeploymentConfig:
    kwargs = base(
        job_name="chat",
        pool="infer-l40s",
        instance_type="g6e.12xlarge",
        availability_zones=["us-east-1a", "us-east-1b", "us-east-1c"],
        use_efa=False,
        prometheus_server_url=PROM,
    )
    kwargs.update(overrides)
    return InferenceDeploymentConfig(**kwargs)


def test_inference_deployment_with_keda_on_gpu_utilisation() -> None:
    plan = run(lambda: InferenceDeployment("chat", inference()))
    assert {(r.type, r.name) for r in plan} == {
        ("gpucloud:workloads:InferenceDeployment", "chat"),
        ("kubernetes:apps/v1:Deployment", "chat-deployment"),
        ("kubernetes:core/v1:Service", "chat-service"),
        ("kubernetes:policy/v1:PodDisruptionBudget", "chat-pdb"),
        ("kubernetes:keda.sh/v1alpha1:ScaledObject", "chat-scaledobject"),
    }
    dep = plan.find("kubernetes:apps/v1:Deployment", "chat-deployment")
    assert dep.ignore_changes == ["spec.replicas"]
    pod = pod_spec(dep)
    assert pod["tolerations"] == [GPU_TOLERATION]
    spread = pod["topologySpreadConstraints"][0]
    assert (spread["topologyKey"], spread["maxSkew"], spread["whenUnsatisfiable"]) == (
        "topology.kubernetes.io/zone",
        1,
        "ScheduleAnyway",
    )
    (container,) = pod["containers"]
    assert container["resources"] == {
        "requests": {"nvidia.com/gpu": "1", "memory": "32Gi", "cpu": "4"},
        "limits": {"nvidia.com/gpu": "1", "memory": "32Gi"},
    }
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    pdb = plan.find("kubernetes:policy/v1:PodDisruptionBudget", "chat-pdb")
    assert pdb.inputs["spec"]["maxUnavailable"] == 1
    so = plan.find("kubernetes:keda.sh/v1alpha1:ScaledObject", "chat-scaledobject")
    spec = so.inputs["spec"]
    assert (spec["scaleTargetRef"], spec["minReplicaCount"], spec["maxReplicaCount"]) == ({"name": "chat"}, 2, 8)
    assert spec["triggers"] == [
        {
            "type": "prometheus",
            "metricType": "Value",
            "metadata": {
                "serverAddress": PROM,
                "query": 'avg(DCGM_FI_DEV_GPU_UTIL{namespace="vision", pod=~"chat-.*"})',
                "threshold": "80",
                "ignoreNullValues": "true",
            },
        }
    ]


def test_inference_keda_against_amp_uses_the_trigger_authentication() -> None:
    config = inference(
        prometheus_server_url="https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1/",
        keda_trigger_authentication="gpucloud-amp",
        gpu_utilization_target_percent=70,
    )
    plan = run(lambda: InferenceDeployment("chat", config))
    (trigger,) = plan.find("kubernetes:keda.sh/v1alpha1:ScaledObject", "chat-scaledobject").inputs["spec"]["triggers"]
    assert trigger["authenticationRef"] == {"name": "gpucloud-amp", "kind": "ClusterTriggerAuthentication"}
    assert (trigger["metadata"]["awsRegion"], trigger["metadata"]["threshold"]) == ("us-east-1", "70")


def test_inference_with_hpa_and_a_mig_slice() -> None:
    config = inference(
        use_keda=False,
        prometheus_server_url=None,
        gpu_resource="nvidia.com/mig-1g.10gb",
        spread_when_unsatisfiable="DoNotSchedule",
    )
    plan = run(lambda: InferenceDeployment("chat", config))
    assert plan.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject") == []
    hpa = plan.find("kubernetes:autoscaling/v2:HorizontalPodAutoscaler", "chat-hpa")
    assert hpa.inputs["spec"]["metrics"] == [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
                "target": {"type": "AverageValue", "averageValue": "80"},
            },
        }
    ]
    pod = pod_spec(plan.find("kubernetes:apps/v1:Deployment", "chat-deployment"))
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/mig-1g.10gb"] == "1"
    assert pod["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "DoNotSchedule"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"prometheus_server_url": None}, "KEDA needs the Prometheus"),
        ({"replicas": 9}, "min_replicas <= replicas <= max_replicas"),
        ({"gpus_per_replica": 8}, "has 4 GPUs"),
        ({"gpu_resource": "amd.com/gpu"}, "String should match pattern"),
    ],
)
def test_inference_config_errors(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        inference(**overrides)


# -- acceptance jobs -----------------------------------------------------------------------------------------


def test_nccl_test_mpijob_over_efa() -> None:
    config = NcclTestConfig(**base(job_name="nccl-h100", image="registry/nccl-tests:2.27", min_bus_bandwidth_gbps=300))
    plan = run(lambda: NcclTest("nccl", config))
    mpi = plan.find("kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl-mpijob")
    spec = mpi.inputs["spec"]
    assert (spec["slotsPerWorker"], spec["mpiImplementation"]) == (8, "OpenMPI")
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    (container,) = worker["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
        "memory": "1024Gi",
        "cpu": "96",  # half the node's vCPUs, like the memory share
    }
    assert worker["template"]["spec"]["tolerations"] == [GPU_TOLERATION]
    script = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    assert "-np 16 --map-by ppr:8:node" in script
    assert "-x FI_EFA_USE_HUGE_PAGE" in script and "FI_EFA_USE_DEVICE_RDMA" not in script
    assert "/opt/nccl-tests/build/all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100" in script
    assert "Avg bus bandwidth" in script and "-v m=300" in script


def test_nccl_test_v1_mpijob_without_gate() -> None:
    config = NcclTestConfig(**base(job_name="nccl-h100", image="nccl:1", mpi_api_version="kubeflow.org/v1", nodes=4))
    plan = run(lambda: NcclTest("nccl", config))
    spec = plan.find("kubernetes:kubeflow.org/v1:MPIJob", "nccl-mpijob").inputs["spec"]
    assert "mpiImplementation" not in spec
    script = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    assert "-np 32 " in script and "-v m=" not in script


def test_nccl_test_needs_two_nodes() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 2"):
        NcclTestConfig(**base(job_name="nccl", image="nccl:1", nodes=1))


def test_dcgm_diag_one_pod_per_node() -> None:
    config = DcgmDiagConfig(
        **base(
            job_name="dcgm-h100",
            image=DCGM_IMAGE,
            nodes=3,
            use_karpenter=True,
        )
    )
    plan = run(lambda: DcgmDiag("diag", config))
    job = plan.find("kubernetes:batch/v1:Job", "diag-job")
    spec = job.inputs["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["activeDeadlineSeconds"]) == (
        3,
        3,
        0,
        1200,
    )
    pod = pod_spec(job)
    (container,) = pod["containers"]
    assert container["command"] == ["/bin/bash", "-c", "nv-hostengine && sleep 2 && dcgmi diag -r 2"]
    # One CPU and 1 GiB per GPU plus 2 GiB for the host engine requested, twice that as the limit.
    assert container["resources"] == {
        "requests": {"nvidia.com/gpu": "8", "cpu": "8", "memory": "10Gi"},
        "limits": {"nvidia.com/gpu": "8", "cpu": "16", "memory": "20Gi"},
    }
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"
    assert job.inputs["spec"]["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}


def test_inference_takes_the_prometheus_url_as_an_output() -> None:
    import pulumi

    def program() -> None:
        url = pulumi.Output.from_input("http://prom.monitoring:9090")
        InferenceDeployment("chat", inference(prometheus_server_url=url))

    plan = run(program)
    (trigger,) = plan.find("kubernetes:keda.sh/v1alpha1:ScaledObject", "chat-scaledobject").inputs["spec"]["triggers"]
    assert trigger["metadata"]["serverAddress"] == "http://prom.monitoring:9090"


# -- drain grace from the pool's checkpoint model ------------------------------------------------------------


def pre_stop_wait(container: dict[str, Any]) -> str:
    return str(container["lifecycle"]["preStop"]["exec"]["command"][2])


def test_the_training_pod_takes_its_pools_drain_grace_from_the_platform_export() -> None:
    from gpucloud.components.workloads import pool_drain_grace

    def program() -> None:
        # What the platform exports for prod's checkpointed pools (writeSeconds 90 + 30 s margin).
        # Numbers cross a StackReference as floats.
        graces = pulumi_output({"train-h100": 120.0, "train-h200": 120.0})
        TrainingJob("pretrain", training(termination_grace_period_seconds=pool_drain_grace(graces, "train-h100")))

    job = run(program).find("kubernetes:batch/v1:Job", "pretrain-job")
    pod = pod_spec(job)
    assert pod["terminationGracePeriodSeconds"] == 120
    # The preStop hook waits for the emergency checkpoint until 10 s before SIGKILL.
    assert "[ $i -lt 110 ]" in pre_stop_wait(pod["containers"][0])


@pytest.mark.parametrize(
    "graces",
    [
        None,  # a platform stack older than the poolDrainGraceSeconds export
        {"train-h200": 300},  # the pool declares no checkpoint model: not in the map
    ],
)
def test_without_the_pools_grace_the_training_pod_keeps_110_seconds(graces: Any) -> None:
    from gpucloud.components.workloads import pool_drain_grace

    def program() -> None:
        grace = pool_drain_grace(pulumi_output(graces), "train-h100")
        TrainingJob("pretrain", training(termination_grace_period_seconds=grace))

    pod = pod_spec(run(program).find("kubernetes:batch/v1:Job", "pretrain-job"))
    assert pod["terminationGracePeriodSeconds"] == 110
    assert "[ $i -lt 100 ]" in pre_stop_wait(pod["containers"][0])


def test_a_pytorchjob_takes_the_drain_grace_on_every_replica() -> None:
    from gpucloud.components.workloads import pool_drain_grace

    def program() -> None:
        grace = pool_drain_grace(pulumi_output({"train-h100": 270}), "train-h100")
        TrainingJob("pretrain", training(use_pytorch_job=True, nodes=3, termination_grace_period_seconds=grace))

    spec = run(program).find("kubernetes:kubeflow.org/v1:PyTorchJob", "pretrain-pytorchjob").inputs["spec"]
    replicas = spec["pytorchReplicaSpecs"]
    assert [replicas[r]["template"]["spec"]["terminationGracePeriodSeconds"] for r in ("Master", "Worker")] == [
        270,
        270,
    ]


@pytest.mark.parametrize("graces", [{"train-h100": "2m"}, {"train-h100": 0}, {"train-h100": 120.5}, ["train-h100"]])
def test_a_malformed_drain_grace_export_warns_and_keeps_110_seconds(
    graces: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pulumi

    from gpucloud.components.workloads import pool_drain_grace

    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda msg, *args, **kwargs: warned.append(msg))

    def program() -> None:
        grace = pool_drain_grace(pulumi_output(graces), "train-h100")
        TrainingJob("pretrain", training(termination_grace_period_seconds=grace))

    plan = run(program)
    assert pod_spec(plan.find("kubernetes:batch/v1:Job", "pretrain-job"))["terminationGracePeriodSeconds"] == 110
    (warning,) = warned
    assert warning.startswith("platform output poolDrainGraceSeconds: expected {pool: seconds 1-3630}")
    assert "for train-h100; its pods keep 110 s" in warning


def test_acceptance_worker_pods_take_the_pools_drain_grace() -> None:
    nccl = NcclTestConfig(**base(job_name="nccl-h100", image="nccl:1", termination_grace_period_seconds=120))
    diag = DcgmDiagConfig(**base(job_name="dcgm-h100", image="dcgm:4", termination_grace_period_seconds=120))

    def program() -> None:
        NcclTest("nccl", nccl)
        DcgmDiag("diag", diag)

    plan = run(program)
    replicas = plan.find("kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl-mpijob").inputs["spec"]["mpiReplicaSpecs"]
    assert replicas["Worker"]["template"]["spec"]["terminationGracePeriodSeconds"] == 120
    # The launcher holds no GPU and runs on no GPU pool: it keeps the Kubernetes default.
    assert "terminationGracePeriodSeconds" not in replicas["Launcher"]["template"]["spec"]
    assert pod_spec(plan.find("kubernetes:batch/v1:Job", "diag-job"))["terminationGracePeriodSeconds"] == 120


def test_acceptance_pods_of_a_pool_without_a_checkpoint_model_keep_the_kubernetes_default() -> None:
    plan = run(lambda: DcgmDiag("diag", DcgmDiagConfig(**base(job_name="dcgm-h100", image="dcgm:4"))))
    assert "terminationGracePeriodSeconds" not in pod_spec(plan.find("kubernetes:batch/v1:Job", "diag-job"))


def pulumi_output(value: Any) -> Any:
    import pulumi

    return pulumi.Output.from_input(value)
