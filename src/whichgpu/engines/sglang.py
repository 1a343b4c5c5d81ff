"""SGLang in code: the memory it keeps out of its static pool (``--mem-fraction-static``), its
launch command, and its words for CPU offload of a diffusion pipeline. Its traits and speed
are data (``data/engines.toml``, ``estimate/data/``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.estimate.constants import memory_constant, memory_value
from whichgpu.estimate.memory.terms import MemoryTerm
from whichgpu.messages import Field, Message, msg

if TYPE_CHECKING:
    from whichgpu.advise.options import Option
    from whichgpu.estimate.workload import Workload
    from whichgpu.export.commands import LaunchCommands


def memory_reserve(used: int, kv_gpu: float) -> MemoryTerm:
    """SGLang's static pool is a fraction of the card; the rest stays out of it."""
    c = memory_constant("sglang_mem_fraction_static")
    return MemoryTerm("engine_reserve", int(used / c.value - used),
                      msg("term.reserve.sglang", "SGLang keeps {free:.0%} of the GPU out of "
                          "its static pool", free=1 - c.value),
                      msg("term.reserve.sglang.why", "--mem-fraction-static default"),
                      c.source)


def launch(o: Option, w: Workload) -> LaunchCommands:
    """``sglang.launch_server`` with the layout, context, batch and memory fraction assumed."""
    # export is loaded only to write a launch file: a memory answer reads memory_reserve alone
    from whichgpu.export.commands import PORT, LaunchCommands, lines, max_seqs, model_env

    frac = float(memory_value("sglang_mem_fraction_static"))
    out = LaunchCommands("sglang", setup='pip install -U "sglang[all]"\n', run="",
                         ports=(PORT,))
    model_env(w, out)
    out.run = lines(f"python -m sglang.launch_server --model-path $MODEL --tp {w.tp_degree}",
                    f"--context-length {w.seq_len}", f"--mem-fraction-static {frac:g}",
                    f"--max-running-requests {max_seqs(o)}",
                    "--kv-cache-dtype fp8_e5m2" if w.kv_dtype.lower() == "fp8" else "",
                    f"--host 0.0.0.0 --port {PORT}")
    out.settings += [f"SGLang: tensor parallel {w.tp_degree}, context {w.seq_len:,}, up to "
                     f"{o.batch} requests", f"--mem-fraction-static {frac:g} (as assumed)"]
    return out



def lora_slots(adapters: int, rank: int) -> tuple[int, int]:
    """Serving LoRA adapters: at most --max-loras-per-batch of them share a batch (its
    default), in slots of their own rank."""
    from whichgpu.estimate.multi_lora import value

    return min(adapters, int(value("sglang_max_loras_per_batch_default"))), rank


def tp_launch(tp: int, pp: int) -> str:
    """Serving over cards of different sizes, in equal tensor-parallel shards."""
    return f"python -m sglang.launch_server --model-path MODEL --tp {tp}"


#: its words for the CPU offload of a diffusion pipeline (never diffusers' API names)
CPU_OFFLOAD_WORDS = "SGLang Diffusion's CPU offload"


def fit_note(offload: str, need: int, tiled: bool = False) -> Message:
    """What SGLang Diffusion needs to fit a pipeline that does not fit whole on the GPU."""
    if offload == "sequential":
        return msg("diffusion.fit.sequential.engine", "{need:.1f} GB needed whole: {engine} "
                   "needs sequential CPU offload here ({flag}); weights cross PCIe every step",
                   need=need / 1e9, engine="sglang", flag=Field("offload", "sequential"))
    return msg("diffusion.fit.model.engine", "{need:.1f} GB needed with the whole pipeline on "
               "the GPU: {engine} needs model CPU offload here ({flag}); each component "
               "crosses PCIe once per image", need=need / 1e9, engine="sglang",
               flag=Field("offload", "model"))
