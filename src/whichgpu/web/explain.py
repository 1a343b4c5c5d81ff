"""The pages' own words: the names of terms, bounds, tasks and units, and small pieces (a
placement, a range, a latency) in the page's language.

What the engine says (explanations, reasons, notes, assumptions, formulas) is not here: it
comes as structured messages, rendered from the catalogs by web/words.py.
"""

from __future__ import annotations

import math
from typing import Any

from whichgpu.vocabulary import Placement
from whichgpu.web.i18n import Locale


def N_(message: str) -> str:
    """Mark a message for extraction; it is translated where it is shown."""
    return message


TERMS = {
    "weights": N_("Weights"), "adapter_weights": N_("Adapter weights"),
    "master_weights": N_("Master weights (fp32)"), "gradients": N_("Gradients"),
    "optimizer_states": N_("Optimizer states"), "kv_cache": N_("KV cache"),
    "activations": N_("Activations"), "logits": N_("Logits"),
    "dequant_workspace": N_("Dequantization workspace"),
    "zero3_working_set": N_("ZeRO-3 working set"), "vae_decode": N_("VAE decode"),
    "cuda_graphs": N_("CUDA graphs"), "runtime": N_("CUDA runtime"), "nccl": N_("NCCL buffers"),
    "fragmentation": N_("Fragmentation"), "engine_reserve": N_("Engine reserve"),
}
BOUNDS = {"memory-bandwidth": N_("memory bandwidth"), "compute": N_("compute"),
          "interconnect": N_("the interconnect"), "fixed-overhead": N_("fixed overheads")}
CONFIDENCE = {"low": N_("low"), "medium": N_("medium"), "high": N_("high")}
RATES = {"output_tokens_per_s": N_("tokens/s"), "images_per_min": N_("images/min"),
         "decode_tokens_per_s_per_sequence": N_("tokens/s per user"),
         "seconds_per_video": N_("s per video"), "step_s": N_("s per step"),
         "tokens_per_s": N_("training tokens/s")}
TASKS = {"inference": N_("Text generation (LLM inference)"), "image": N_("Image generation"),
         "video": N_("Video generation"), "lora": N_("LoRA fine-tuning"),
         "qlora": N_("QLoRA fine-tuning (4-bit base)"), "full-ft": N_("Full fine-tuning"),
         "image-lora": N_("Image-model LoRA"), "pretrain": N_("Pre-training")}
TASK_GROUPS = ((N_("Inference"), ("inference", "image", "video")),
               (N_("Fine-tuning"), ("lora", "qlora", "full-ft", "image-lora")),
               (N_("Training"), ("pretrain",)))
UNITS = {"tokens": N_("tokens to generate"), "images": N_("images"), "videos": N_("videos"),
         "steps": N_("training steps"), "train_tokens": N_("training tokens")}
UNIT_FOR_TASK = {"inference": "tokens", "image": "images", "video": "videos", "lora": "steps",
                 "qlora": "steps", "full-ft": "steps", "image-lora": "steps",
                 "pretrain": "train_tokens"}
SORTS = {"cost-per-tflop": N_("cost per TFLOP-hour"), "tflops": N_("throughput (TFLOPS)"),
         "memory": N_("memory"), "bandwidth": N_("memory bandwidth"),
         "price": N_("price per hour"), "id": N_("name")}
DIRECTIONS = {"bidirectional": N_("both directions together"),
              "unidirectional": N_("per direction")}
# the words that join the last two items of a list (messages.Join's ``last``)
JOIN_WORDS = (N_("and"), N_("or"))
EXCLUSION_KINDS = {"memory": N_("memory"), "offer": N_("no offer"), "price": N_("hourly budget"),
                   "deadline": N_("deadline"), "budget": N_("budget"), "speed": N_("speed"),
                   "engine": N_("engine not available"),
                   "latency": N_("latency target")}


# ------------------------------------------------------------------ pieces

def where(L: Locale, gpu_id: str, count: int) -> str:
    return gpu_id if count == 1 else L.gettext("%(n)s × %(gpu)s", n=count, gpu=gpu_id)


def time_range(L: Locale, r: Any) -> str:
    if r is None:
        return "–"
    return L.gettext("%(low)s – %(high)s", low=L.duration(r.low), high=L.duration(r.high))


def money_range(L: Locale, r: Any) -> str:
    return L.gettext("%(low)s – %(high)s", low=L.money(r.low), high=L.money(r.high))


def label(L: Locale, o: Any) -> str:
    return where(L, o.gpu.id, o.count * o.replicas)


def some(L: Locale, items: Any, n: int = 8) -> str:
    """The first ``n`` items, and "and N more" when some are left out (never a silent cut);
    a placement is said the page's way ('2 × h100-sxm')."""
    items = [where(L, i.gpu, i.count) if isinstance(i, Placement) else str(i) for i in items]
    if len(items) <= n:
        return ", ".join(items)
    return L.gettext("%(items)s and %(n)s more", items=", ".join(items[:n]), n=len(items) - n)


def seconds_range(L: Locale, r: dict) -> str:
    """A serving latency range in milliseconds: '141 ms (50–412)'."""
    return L.gettext("%(typical)s ms (%(low)s–%(high)s)", typical=L.number(r["typical"] * 1e3),
                     low=L.number(r["low"] * 1e3), high=L.number(r["high"] * 1e3))


# ------------------------------------------------------------------ rent or buy

def months_text(L: Locale, x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return L.gettext("never")
    return L.gettext("%(n)s months", n=L.number(x, 1))


def hours_text(L: Locale, x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return L.gettext("never")
    return f"{L.number(x)}\u00a0h"
