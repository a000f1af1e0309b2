"""Communication model for multi-node training: how much of a node's compute its network lets a job use.

A leaf below recommend.py (catalog facts only). The per-node figures are the catalog's own: ``network_gbps``
(the EFA/ENA line rate, AWS accelerated-computing instance table), ``efa_generation`` and ``interconnect``
(NVSwitch / NVLink / NeuronLink / PCIe, shared/reference/gpu-instances.md section 1).

Model (stated in every result): with ZeRO-3 / FSDP full sharding over more than one node, every micro-batch
all-gathers the weights twice (forward and backward) and reduce-scatters the gradients once, so each node moves
about 3 x the weight bytes over its network per micro-batch (NCCL ring collectives: each node sends and receives
(n-1)/n of the buffer; ZeRO, Rajbhandari et al. 2020, section 7: 3x the data-parallel volume for stage 3).
ZeRO-1/2 all-reduce the gradients (2x); LoRA/QLoRA gather the frozen weights twice (2x their bytes). Every
accelerator computes its own micro-batch meanwhile; communication overlaps compute (FSDP prefetch), so the job
runs at full speed while the network time stays under the compute time and slows in proportion beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpucloud.catalog import InstanceSpec

# Share of the line rate NCCL collectives reach across nodes: an assumption, not a measurement (nccl-tests
# busbw is typically 75-90 % of the NIC rate on large messages); stated in every result.
LINK_EFFICIENCY: Final = 0.8
# GPUs without a scale-up fabric exchange shards over PCIe: GB/s per direction per GPU, from the datasheets' x16
# link (NVIDIA L40S, L4 and A10 datasheets: PCIe Gen4 x16, 64 GB/s bidirectional; T4 datasheet: Gen3 x16,
# 32 GB/s bidirectional; AMD Radeon Pro V520: Gen4 x16).
PCIE_GBYTES_PER_DIRECTION: Final[dict[str, float]] = {
    "L40S": 32.0,
    "L4": 32.0,
    "A10G": 32.0,
    "T4": 16.0,
    "Radeon-Pro-V520": 32.0,
}


@dataclass(frozen=True, slots=True)
class NodeNetwork:
    node_gbps: float
    gbps_per_accelerator: float
    efa_generation: int | None
    scale_up: str
    scale_up_domain: int


def node_network(spec: InstanceSpec) -> NodeNetwork:
    """The node's scale-out and scale-up network, from the catalog's fields."""
    link = spec.interconnect.lower()
    if "nvswitch" in link or "nvlink5" in link:
        scale_up, domain = "nvswitch", spec.accelerator_count
    elif "nvlink" in link:
        # p3: NVLink 2.0 hybrid cube-mesh over the node's 8 GPUs (not all-to-all, but one NVLink domain).
        scale_up, domain = "nvlink-mesh", spec.accelerator_count
    elif "neuronlink" in link:
        scale_up, domain = "neuronlink", spec.accelerator_count
    else:
        # PCIe (or a single accelerator): no scale-up fabric, tensor parallelism would cross PCIe.
        scale_up, domain = "pcie" if spec.accelerator_count > 1 else "none", 1
    return NodeNetwork(
        node_gbps=spec.network_gbps,
        gbps_per_accelerator=spec.network_gbps / spec.accelerator_count,
        efa_generation=spec.efa_generation,
        scale_up=scale_up,
        scale_up_domain=domain,
    )


def comm_to_compute(
    spec: InstanceSpec, moved_bytes: float, flops_per_microbatch: float, achievable_flops: float, nodes: int
) -> float:
    """Communication seconds over compute seconds for one micro-batch on every accelerator of a node.

    Across nodes the node's network carries ``moved_bytes``; on a node without a scale-up fabric each GPU's own
    PCIe link carries its ring traffic too (about ``moved_bytes`` per GPU), whichever is slower binds.
    """
    compute = flops_per_microbatch / achievable_flops
    seconds = 0.0
    if nodes > 1:
        seconds = moved_bytes / (spec.network_gbps * 1e9 / 8 * LINK_EFFICIENCY)
    pcie = PCIE_GBYTES_PER_DIRECTION.get(spec.accelerator)
    if (nodes > 1 or spec.accelerator_count > 1) and node_network(spec).scale_up == "pcie" and pcie:
        seconds = max(seconds, moved_bytes / (pcie * 1e9 * LINK_EFFICIENCY))
    return seconds / compute


def efficiency(ratio: float) -> float:
    """Share of compute speed kept: communication hides behind compute until it takes longer than it."""
    return 1.0 / max(1.0, ratio)
