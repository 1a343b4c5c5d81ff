"""Where llama.cpp keeps each weight tensor and each layer's KV cache: GPU(s) or host RAM.

llama.cpp's rules (src/llama-model.cpp ``load_tensors``, common/arg.cpp):

- ``-ngl N`` puts the last N of the n_layer + 1 slots (the layers, then the output head) on the
  GPUs: ``i_gpu_start = max(n_layer + 1 - N, 0)``; the token embedding (input layer) always
  stays on the CPU. The default here is every layer on the GPU.
- ``--n-cpu-moe N`` keeps the routed-expert tensors of the first N layers in host RAM
  (``blk\\.i\\.ffn_(up|down|gate|gate_up)_(ch|)exps`` for i < N, PR #15077); ``--cpu-moe``
  all of them; ``-ot PATTERN=CPU`` any tensor whose name the regular expression matches
  (``--override-tensor``, applied first, so it wins over the two above).
- A layer's KV cache lives on the device of its layer.
- Tied embeddings are loaded twice: token_embd on the CPU and a copy as the output head.

https://github.com/ggml-org/llama.cpp/pull/15077 (--n-cpu-moe / --cpu-moe);
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-model.cpp (i_gpu_start, dev_input on
the CPU). The weights of a GGUF file type come per tensor from models/gguf_recipe.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from whichgpu.errors import InputError
from whichgpu.estimate.memo import by_identity
from whichgpu.estimate.memory.weights import TensorBytes, WeightBytes
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, Join, Message, msg

EXPERT_REGEX = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps"  # llama.cpp common.h LLM_FFN_EXPS_REGEX
SOURCE = "https://github.com/ggml-org/llama.cpp/pull/15077 and src/llama-model.cpp (load_tensors)"


@dataclass(frozen=True)
class Placement:
    """llama.cpp's layout of one model over the GPUs and host RAM."""

    gpu_layers: int  # layer slots on the GPUs (n_layer + 1 = everything)
    num_layers: int
    gpu_bytes: int  # weights on all GPUs together
    host_bytes: int  # weights in host RAM (the token embedding at least)
    dense_gpu: tuple[int, ...]  # per layer: bytes on the GPU other than routed experts
    dense_host: tuple[int, ...]
    experts_gpu: tuple[int, ...]  # per layer: routed-expert bytes on the GPU
    experts_host: tuple[int, ...]
    layer_on_gpu: tuple[bool, ...]  # the device of each layer (its attention and KV cache)
    output_on_gpu: bool
    output_bytes: int
    embedding_bytes: int
    host_expert_layers: int  # layers whose routed experts sit in host RAM
    flags: str  # the llama.cpp flags that give this layout

    @property
    def offloaded(self) -> bool:
        """Whether any weight besides the token embedding sits in host RAM."""
        return self.host_bytes > self.embedding_bytes

    @property
    def kv_gpu_fraction(self) -> float:
        return sum(self.layer_on_gpu) / max(self.num_layers, 1)

    def describe(self) -> Message:
        if not self.offloaded:
            return msg("placement.all_on_gpu", "every layer on the GPU (the token embedding in "
                       "host RAM, as llama.cpp does)")
        parts = []
        cpu_layers = self.num_layers - sum(self.layer_on_gpu)
        if cpu_layers:
            parts.append(msg("placement.cpu_layers", "{n} of {total} layers on the CPU",
                             n=cpu_layers, total=self.num_layers))
        if self.host_expert_layers:
            parts.append(msg("placement.experts", "the experts of {n} layer(s) in host RAM",
                             n=self.host_expert_layers))
        if not self.output_on_gpu:
            parts.append(msg("placement.output", "the output head on the CPU"))
        return msg("placement.describe", "{parts} ({flags})", parts=Join(parts), flags=self.flags)

    def formula(self) -> Message:
        """The layout in the memory terms' words."""
        parts = []
        cpu_layers = self.num_layers - sum(self.layer_on_gpu)
        if cpu_layers:
            parts.append(msg("placement.formula.cpu_layers", "CPU layers: {n}/{total}",
                             n=cpu_layers, total=self.num_layers))
        if self.host_expert_layers:
            parts.append(msg("placement.formula.experts", "experts in host RAM: {n} layer(s)",
                             n=self.host_expert_layers))
        if not self.output_on_gpu:
            parts.append(msg("placement.formula.output", "output head on the CPU"))
        return msg("placement.formula", "{parts} ({flags})", parts=Join(parts, "; "),
                   flags=self.flags)

    def to_json(self) -> dict:
        return {"flags": self.flags, "gpu_layers": self.gpu_layers,
                "num_layers": self.num_layers, "gpu_weight_bytes": self.gpu_bytes,
                "host_weight_bytes": self.host_bytes, "offloaded": self.offloaded,
                "host_expert_layers": self.host_expert_layers,
                "cpu_layers": self.num_layers - sum(self.layer_on_gpu),
                "output_on_gpu": self.output_on_gpu, "description": self.describe()}


def _patterns(overrides: tuple[tuple[str, str], ...], n: int, cpu_moe_layers: int,
              ) -> list[tuple[re.Pattern, bool]]:
    """(compiled pattern, to the GPU?) in llama.cpp's order: -ot first, then the MoE flags."""
    out = []
    for pattern, device in overrides:
        try:
            out.append((re.compile(pattern), device.upper() != "CPU"))
        except re.error as exc:
            raise InputError(msg("workload.ot_regex", "{field} {v!r} is not a regular "
                                 "expression: {why}", field=Field("override_tensor"), v=pattern,
                                 why=str(exc))) from None
    if cpu_moe_layers >= n > 0:
        out.append((re.compile(EXPERT_REGEX), False))
    else:
        for i in range(cpu_moe_layers):
            out.append((re.compile(rf"blk\.{i}{EXPERT_REGEX}"), False))
    return out


def flags_of(w: Workload) -> str:
    return _flags(w.model.num_layers, w.gpu_layers, w.cpu_moe_layers, w.tensor_overrides,
                  w.mmap)


def _flags(n: int, gpu_layers: int | None, cpu_moe_layers: int,
           overrides: tuple[tuple[str, str], ...], mmap: bool) -> str:
    parts = [f"-ngl {gpu_layers}" if gpu_layers is not None else "-ngl 999"]
    if cpu_moe_layers >= n > 0:
        parts.append("--cpu-moe")
    elif cpu_moe_layers:
        parts.append(f"--n-cpu-moe {cpu_moe_layers}")
    parts += [f"-ot {p}={d}" for p, d in overrides]
    if not mmap:
        parts.append("--no-mmap")
    return " ".join(parts)


def placement(w: Workload, wb: WeightBytes) -> Placement:
    """Where each of ``wb``'s tensors sits for ``w``'s llama.cpp flags."""
    # the same for every estimate of one GGUF model with the same flags (a memory answer
    # asks it for each count and each change it tries: 120 times, 3 different, for a 70B
    # that fits no single GPU): remembered by the tensor list's identity and the flags
    return _placement(wb.tensors, wb.total, wb.embedding, wb.lm_head, w.model.num_layers,
                      w.gpu_layers, w.tensor_overrides, w.cpu_moe_layers, w.mmap)


@by_identity(size=256)
def _placement(tensor_list: tuple[TensorBytes, ...], total: int, embedding: int, lm_head: int,
               n: int, gpu_layers: int | None, overrides: tuple[tuple[str, str], ...],
               cpu_moe_layers: int, mmap: bool) -> Placement:
    slots = n + 1
    ngl = slots if gpu_layers is None else max(0, min(gpu_layers, slots))
    start = slots - ngl  # i_gpu_start: slots from here on are on the GPUs
    layer_on_gpu = tuple(i >= start for i in range(n))
    output_on_gpu = n >= start
    patterns = _patterns(overrides, n, cpu_moe_layers)
    dense_gpu, dense_host = [0] * n, [0] * n
    experts_gpu, experts_host = [0] * n, [0] * n
    gpu = host = 0
    output_bytes = emb = 0
    host_expert_layers = set()
    tensors = list(tensor_list or _fallback_tensors(total, embedding, lm_head, n))
    if embedding and "output" not in [t.name for t in tensors]:
        # tied embeddings: llama.cpp loads token_embd a second time as the output head
        # (create_tensor(..., TENSOR_DUPLICATED)), on the output's device
        head = sum(t.bytes for t in tensors if t.name == "token_embd")  # not Gemma 3n's PLE
        tensors.append(TensorBytes("output", None, head or embedding))
    for t in tensors:
        if patterns:
            on_gpu = _device(t, layer_on_gpu, output_on_gpu, patterns)
        elif t.name in _INPUT_TENSORS:  # _device without patterns, inline (hot: every tensor
            on_gpu = False  # of every estimate of a GGUF model)
        elif t.layer is None:
            on_gpu = output_on_gpu if t.name == "output" else True
        else:
            on_gpu = layer_on_gpu[t.layer] if 0 <= t.layer < n else True
        if t.name in _INPUT_TENSORS:
            emb += t.bytes
        if t.layer is None and t.name == "output":
            output_bytes += t.bytes
        if on_gpu:
            gpu += t.bytes
        else:
            host += t.bytes
        if t.layer is not None and 0 <= t.layer < n:
            if t.expert:
                (experts_gpu if on_gpu else experts_host)[t.layer] += t.bytes
                if not on_gpu and layer_on_gpu[t.layer]:
                    host_expert_layers.add(t.layer)
            else:
                (dense_gpu if on_gpu else dense_host)[t.layer] += t.bytes
    return Placement(ngl, n, gpu, host, tuple(dense_gpu), tuple(dense_host), tuple(experts_gpu),
                     tuple(experts_host), layer_on_gpu, output_on_gpu, output_bytes, emb,
                     len(host_expert_layers),
                     _flags(n, gpu_layers, cpu_moe_layers, overrides, mmap))


# input lookups llama.cpp keeps on the CPU: the token embedding and Gemma 3n's per-layer table
_INPUT_TENSORS = ("token_embd", "per_layer_token_embd")


def _device(t: TensorBytes, layer_on_gpu: tuple[bool, ...], output_on_gpu: bool,
            patterns: list[tuple[re.Pattern, bool]]) -> bool:
    if t.name in _INPUT_TENSORS:
        return False  # the input layer stays on the CPU
    name = f"{t.name}.weight"
    for pattern, to_gpu in patterns:
        if pattern.search(name):
            return to_gpu
    if t.layer is None:
        return output_on_gpu if t.name == "output" else True
    return layer_on_gpu[t.layer] if 0 <= t.layer < len(layer_on_gpu) else True


def _fallback_tensors(total: int, embedding: int, lm_head: int, n: int,
                      ) -> tuple[TensorBytes, ...]:
    """A layout without tensors (a checkpoint of unknown structure): even layers."""
    per = (total - embedding - lm_head) / max(n, 1)
    out = [TensorBytes("token_embd", None, embedding)] if embedding else []
    out += [TensorBytes(f"blk.{i}.attn", i, int(per)) for i in range(n)]
    if lm_head:
        out.append(TensorBytes("output", None, lm_head))
    return tuple(out)
