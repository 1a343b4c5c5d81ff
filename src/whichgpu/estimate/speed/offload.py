"""llama.cpp with part of the model in host RAM: what each step reads where, and what it copies.

Decode (a batch below llama.cpp's op-offload threshold of 32 tokens): the layers and experts
in host RAM run on the CPU, which streams their bytes from system memory; the rest runs on the
GPU. The two alternate layer by layer, and each change of device synchronises and copies the
hidden state (``switches``).

Prefill (a micro-batch of 32 tokens or more): ggml's scheduler offloads every op whose weights
sit in host memory to the GPU and copies the weights over PCIe, once per micro-batch; for MoE
it copies only the experts the micro-batch routes to (ggml-backend.cpp, op_offload and the
selective expert copy; ggml-cuda.cu ggml_backend_cuda_device_offload_op: batch >= 32).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from whichgpu.engines import has
from whichgpu.estimate.memo import by_identity
from whichgpu.estimate.memory.placement import Placement, workload_placement
from whichgpu.estimate.workload import Workload

# ggml-cuda.cu: op_offload_min_batch_size, default 32 (GGML_OP_OFFLOAD_MIN_BATCH)
OP_OFFLOAD_MIN_BATCH = 32
SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-backend.cpp "
          "(op_offload, selective expert copy) and ggml/src/ggml-cuda/ggml-cuda.cu "
          "(ggml_backend_cuda_device_offload_op: batch >= 32)")


@dataclass(frozen=True)
class HostShare:
    """One forward pass over a batch, split between the GPU and the host."""

    layout: Placement
    gpu_weight_bytes: float  # weights the GPU streams from its memory
    host_weight_bytes: float  # weights the CPU streams from host RAM (decode)
    copy_bytes: float  # weights copied over PCIe for one micro-batch (prefill op offload)
    switches: int  # changes of device along the layers (decode)

    @property
    def kv_gpu_fraction(self) -> float:
        return self.layout.kv_gpu_fraction


@by_identity()  # one configuration's decode steps and prefill ask it of the same workload
def host_share(w: Workload, touched_fraction: float) -> HostShare | None:
    """The split for ``w`` when llama.cpp keeps part of it in host RAM (None: all on the GPU).

    ``touched_fraction`` is the share of a MoE layer's experts the batch routes to.
    """
    if not has(w.engine_name, "host_offload") or not w.offload_requested or \
            not w.model.num_layers:
        return None
    p = workload_placement(w)  # placed once per weights and flags, whatever the batch
    if not p.offloaded:
        return None
    f = touched_fraction
    out_gpu = p.output_bytes if p.output_on_gpu else 0
    out_host = p.output_bytes - out_gpu
    gpu = sum(p.dense_gpu) + f * sum(p.experts_gpu) + out_gpu
    host = sum(p.dense_host) + f * sum(p.experts_host) + out_host
    return HostShare(p, gpu, host, sum(p.dense_host) + f * sum(p.experts_host),
                     _switches(p))


def _switches(p: Placement) -> int:
    """Device changes along one token's path: each layer's attention part, then its experts,
    then the output head (parts without bytes are skipped; the input layer starts on the CPU
    and its embedding lookup is negligible)."""
    path: list[bool] = []
    for i in range(p.num_layers):
        path.append(p.dense_gpu[i] >= p.dense_host[i])
        if p.experts_gpu[i] or p.experts_host[i]:
            path.append(p.experts_gpu[i] >= p.experts_host[i])
    path.append(p.output_on_gpu)
    return sum(1 for a, b in pairwise(path) if a != b)
