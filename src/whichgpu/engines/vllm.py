"""vLLM in code: the memory it keeps back (``--gpu-memory-utilization``), its launch command and
its ROCm image. Its traits and speed are data (``data/engines.toml``, ``estimate/data/``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.messages import Message, msg

if TYPE_CHECKING:
    from whichgpu.advise.options import Option
    from whichgpu.estimate.workload import Workload
    from whichgpu.export.commands import LaunchCommands

ROCM_IMAGE = "rocm/vllm:latest"  # AMD's vLLM image (ROCm docs, vLLM inference on ROCm)


def memory_reserve(used: int, kv_gpu: float) -> MemoryTerm:
    """vLLM takes a fraction of the card; the rest stays free."""
    c = memory_constant("vllm_gpu_memory_utilization")
    return MemoryTerm("engine_reserve", int(used / c.value - used),
                      msg("term.reserve.vllm", "vLLM uses {used:.0%} of the GPU; the other "
                          "{free:.0%} stays free", used=c.value, free=1 - c.value),
                      msg("term.reserve.vllm.why", "--gpu-memory-utilization default"),
                      c.source)


def launch(o: Option, w: Workload) -> LaunchCommands:
    """``vllm serve`` with the layout, context, batch and memory fraction the estimate used."""
    # export is loaded only to write a launch file: a memory answer reads memory_reserve alone
    from whichgpu.export.commands import PORT, LaunchCommands, lines, max_seqs, model_env

    util = float(memory_value("vllm_gpu_memory_utilization"))
    out = LaunchCommands("vllm", setup="pip install -U vllm\n", run="", ports=(PORT,))
    model_env(w, out)
    q = w.quant_name.lower()
    quant = ("--quantization fp8" if q == "fp8" else
             "--quantization bitsandbytes" if q.startswith(("nf4", "int4-bnb", "int8-bnb")) else
             "--dtype float16" if q == "fp16" else "--dtype bfloat16" if q == "bf16" else "")
    kv = "--kv-cache-dtype fp8" if w.kv_dtype.lower() == "fp8" else ""
    out.run = lines(f"vllm serve $MODEL --tensor-parallel-size {w.tp_degree}",
                    f"--pipeline-parallel-size {w.pp_degree}" if w.pp_degree > 1 else "",
                    f"--max-model-len {w.seq_len}", f"--gpu-memory-utilization {util:g}",
                    f"--max-num-seqs {max_seqs(o)}", quant, kv,
                    f"--host 0.0.0.0 --port {PORT}")
    out.settings += [f"vLLM: tensor parallel {w.tp_degree}" +
                     (f", pipeline parallel {w.pp_degree}" if w.pp_degree > 1 else ""),
                     f"context {w.seq_len:,} tokens, up to {max_seqs(o)} sequences at once",
                     f"--gpu-memory-utilization {util:g} (vLLM's default, as the memory "
                     "estimate assumed)"]
    return out


def rocm(out: LaunchCommands, why: str) -> None:
    """On an AMD card: AMD's vLLM image instead of the pip wheel (in place)."""
    out.image = ROCM_IMAGE
    out.setup = f"# vLLM for ROCm comes with the image ({ROCM_IMAGE})\n"
    out.settings.append(f"{why}: AMD's vLLM image {ROCM_IMAGE} (ROCm docs, vLLM "
                        "inference and serving on ROCm)")



def lora_slots(adapters: int, rank: int) -> tuple[int, int]:
    """Serving LoRA adapters: every adapter may share a batch (whichgpu sets --max-loras to
    them all), in slots of the next rank vLLM offers (--max-lora-rank)."""
    from whichgpu.estimate.multi_lora import slot_rank

    return adapters, slot_rank(rank)


def tp_launch(tp: int, pp: int) -> str:
    """Serving over cards of different sizes, in equal tensor-parallel shards."""
    return f"vllm serve MODEL --tensor-parallel-size {tp}" + (
        f" --pipeline-parallel-size {pp}" if pp > 1 else "")


def uneven_cards() -> Message:
    return msg("mixed.vllm_pp", "vLLM's way to use uneven cards is pipeline parallelism with an "
               "uneven layer partition (VLLM_PP_LAYER_PARTITION), not estimated here")
