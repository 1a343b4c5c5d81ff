"""The pages' own words: the names of terms, bounds, tasks and units, and small pieces (a
placement, a range, a latency) in the page's language.

What the engine says (explanations, reasons, notes, assumptions, formulas) is not here: it
comes as structured messages, rendered from the catalogs by web/words.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
    "drafter": N_("Speculative drafter"),
    "activations": N_("Activations"), "logits": N_("Logits"),
    "dequant_workspace": N_("Dequantization workspace"),
    "zero3_working_set": N_("ZeRO-3 working set"), "vae_decode": N_("VAE decode"),
    "cuda_graphs": N_("CUDA graphs"), "runtime": N_("CUDA runtime"), "nccl": N_("NCCL buffers"),
    "fragmentation": N_("Fragmentation"), "engine_reserve": N_("Engine reserve"),
}
BOUNDS = {"memory-bandwidth": N_("memory bandwidth"), "compute": N_("compute"),
          "interconnect": N_("the interconnect"), "fixed-overhead": N_("fixed overheads")}
CONFIDENCE = {"low": N_("low"), "medium": N_("medium"), "high": N_("high")}
# Every rate the engine may name (estimate/ and advise/evaluate.py), in the page's words: a
# speed is "34 tokens/s", never "34 decode_tokens_per_s".
RATES = {"output_tokens_per_s": N_("tokens/s"), "decode_tokens_per_s": N_("tokens/s"),
         "total_tokens_per_s": N_("tokens/s (prompt and output)"),
         "prefill_tokens_per_s": N_("prompt tokens/s"),
         "input_tokens_per_s": N_("prompt tokens/s"),
         "images_per_min": N_("images/min"), "it_per_s": N_("denoising steps/s"),
         "decode_tokens_per_s_per_sequence": N_("tokens/s per user"),
         "output_tokens_per_s_per_user": N_("tokens/s per user"),
         "requests_per_s": N_("requests/s"),
         "seconds_per_video": N_("s per video"), "step_s": N_("s per step"),
         "seconds_per_step": N_("s per step"),
         "tokens_per_s": N_("training tokens/s"), "train_tokens_per_s": N_("training tokens/s"),
         "train_tokens_per_s_per_gpu": N_("training tokens/s per GPU"),
         "videos_per_hour": N_("videos/h"), "steps_per_s": N_("steps/s")}


def in_english(text: Any) -> str:
    """An engine message as the English page says it (the controls' names, not flags; words,
    not kernel names): the French page's "notes from the engine (in English)"."""
    from whichgpu.web.i18n import locale
    from whichgpu.web.words import say_text

    return say_text(locale("en"), text).text


def rate_words(L: Locale, name: str) -> str:
    """A speed's unit as the page says it ("tokens/s"), never the answer's key; a key this
    table lacks is still said in words ("new rate per s")."""
    return L.gettext(RATES[name]) if name in RATES else name.replace("_", " ")


TASKS = {"inference": N_("Text generation (LLM inference)"), "image": N_("Image generation"),
         "video": N_("Video generation"), "lora": N_("LoRA fine-tuning"),
         "qlora": N_("QLoRA fine-tuning (4-bit base)"), "full-ft": N_("Full fine-tuning"),
         "image-lora": N_("Image-model LoRA"), "pretrain": N_("Pre-training")}
TASK_GROUPS = ((N_("Inference"), ("inference", "image", "video")),
               (N_("Fine-tuning"), ("lora", "qlora", "full-ft", "image-lora")),
               (N_("Training"), ("pretrain",)))
# RL post-training: on the pages that answer it (the VRAM selector and the advisor)
TASKS.update({"grpo": N_("GRPO (RL post-training)"), "ppo": N_("PPO (RL post-training)")})
TASK_GROUPS_RL = (*TASK_GROUPS, (N_("RL post-training"), ("grpo", "ppo")))
# the RL plan's parts and phases (estimate/rl.py's names), in the page's words
RL_PARTS = {"policy_training": N_("Policy (training)"), "reference": N_("Reference model"),
            "critic": N_("Critic (PPO)"), "reward_model": N_("Reward model (PPO)"),
            "rollout_weights": N_("Rollout engine: weights"),
            "rollout_kv_cache": N_("Rollout engine: KV cache"),
            "rollout_runtime": N_("Rollout engine: activations and runtime")}
RL_PHASES = {"rollout_s": N_("Rollouts (generation)"), "training_s": N_("Training"),
             "sync_s": N_("Weight sync"), "step_s": N_("One step")}
# The advisor's "Of what": each unit is a request field the amount goes to ("users" with
# the tokens/s each user reads); each task offers only its own, its first by default.
UNITS = {"tokens": N_("tokens to generate"), "tokens_per_day": N_("tokens a day"),
         "users": N_("users reading at once"), "images": N_("images"), "videos": N_("videos"),
         "steps": N_("training steps"), "train_tokens": N_("training tokens")}
UNIT_HINTS = {"tokens": N_("A count: 1000, 1M, 2B."),
              "tokens_per_day": N_("Tokens generated a day, e.g. 50M."),
              "users": N_("How many people read at the same time, e.g. 20."),
              "images": N_("How many images, e.g. 1000."),
              "videos": N_("How many videos, e.g. 10."),
              "steps": N_("Optimizer steps, e.g. 2000."),
              "train_tokens": N_("Tokens to train on, e.g. 2B.")}
TRAINING_UNITS = ("steps", "train_tokens")
UNITS_FOR_TASK = {"inference": ("tokens", "tokens_per_day", "users"), "image": ("images",),
                  "video": ("videos",), "lora": TRAINING_UNITS, "qlora": TRAINING_UNITS,
                  "full-ft": TRAINING_UNITS, "image-lora": TRAINING_UNITS,
                  "pretrain": ("train_tokens", "steps"), "grpo": ("steps",),
                  "ppo": ("steps",)}
UNIT_FOR_TASK = {task: units[0] for task, units in UNITS_FOR_TASK.items()}


def unit_for(task: str | None, unit: str | None) -> str:
    """The unit the amount is read in: the one chosen if the task has it, else the task's
    first (a form whose task changed without a script still asks in the task's unit)."""
    units = UNITS_FOR_TASK.get(task or "inference", UNITS_FOR_TASK["inference"])
    return unit if unit in units else units[0]
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
    """'$1.00 – $1.50' under a cost; nothing when both ends print as the cost itself (a
    daily volume's day of rental does not move with the speed)."""
    low, high = L.money(r.low), L.money(r.high)
    if low == high == L.money(r.typical):
        return ""
    return L.gettext("%(low)s – %(high)s", low=low, high=high)


def short_label(L: Locale, o: Any) -> str:
    """An option in a chart's few characters: '3 × a100-80gb-sxm' (the table says the
    machines)."""
    return where(L, o.gpu.id, o.count * o.replicas)


def label(L: Locale, o: Any) -> str:
    """An option as rented: '4 × rtx-6000-ada on 4 separate machines of 1 GPU(s)'."""
    from whichgpu.advise.explain import shown_machines
    from whichgpu.web.words import say_text

    text = where(L, o.gpu.id, o.count * o.replicas)
    if hasattr(o, "shape") and shown_machines(o):
        return L.gettext("%(gpus)s on %(machines)s", gpus=text,
                         machines=say_text(L, o.shape.describe()).text)
    return text


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


# ------------------------------------------------------------------ one value, or a range

def span(L: Locale, low: str, high: str) -> str:
    """'$0.72' when both ends read the same, else '$0.70 – $0.75' (never '$0.72 – $0.72')."""
    return low if low == high else L.gettext("%(low)s – %(high)s", low=low, high=high)


# ------------------------------------------------------------------ grouped results

def by_gpu(options: Any) -> list[tuple[Any, list[Any]]]:
    """One entry per GPU, in rank order: its best-ranked configuration and the other counts
    of that GPU (8 of 10 FLUX rows were the same A100 at 1 to 8 cards)."""
    out: dict[str, tuple[Any, list[Any]]] = {}
    for o in options:
        if o.gpu.id in out:
            out[o.gpu.id][1].append(o)
        else:
            out[o.gpu.id] = (o, [])
    return list(out.values())


def rank(options: Any, option: Any) -> int:
    """``options.index(option) + 1``: the place of the first option equal to ``option``.
    Only options of the same GPU and count are compared in full (two options that differ in
    either are never equal): comparing options field by field, their GPUs' every spec first,
    took ~10 ms of an LLM advisor page with a dozen folded counts."""
    return ranks(options)(option)


def ranks(options: Any) -> Callable[[Any], int]:
    """:func:`rank` over ``options`` for each option asked: the options indexed by GPU and
    count once, so each answer compares only that GPU and count's few options (a page's
    folded rows asked ``rank`` once each, every call walking the whole list)."""
    places: dict[tuple[str, int], list[int]] = {}
    for i, o in enumerate(options):
        places.setdefault((o.gpu.id, o.count), []).append(i)

    def rank_of(option: Any) -> int:
        for i in places.get((option.gpu.id, option.count), ()):
            o = options[i]
            if o is option or o == option:
                return i + 1
        raise ValueError(f"{option!r} is not in the options")

    return rank_of


def split_exclusions(excluded: Any) -> tuple[list[Any], list[Any]]:
    """(the exclusions worth a row each, the GPUs that fit but have no offer): the second are
    said in one line, not about 19 rows after every answer."""
    rows = [e for e in excluded if str(getattr(e.kind, "value", e.kind)) != "offer"]
    no_offer = [e for e in excluded if str(getattr(e.kind, "value", e.kind)) == "offer"]
    return rows, no_offer


# ------------------------------------------------------------------ verdicts and warnings

NEAR_TIE = 0.05  # advise/ranking.py's near-tie margin: within 5 % reads as a tie


def rent_or_buy_verdict(advice: Any) -> str:
    """'buy', 'rent' or 'even': within the near-tie margin of each other the two costs are
    about even (a 1.4 % saving on 36 months of estimates is no clear verdict)."""
    rent, own = advice.rent_cost.amount, advice.own_cost.amount
    larger = max(abs(rent), abs(own))
    if larger > 0 and abs(rent - own) <= NEAR_TIE * larger:
        return "even"
    return str(advice.decision)


def rent_or_buy_gap(advice: Any) -> float:
    """How far apart renting and buying come out, as a share of the larger cost (0.014 for
    the trial's $432 on about $31,000)."""
    rent, own = advice.rent_cost.amount, advice.own_cost.amount
    larger = max(abs(rent), abs(own))
    return abs(rent - own) / larger if larger > 0 else 0.0


#: hours in an average month running 24/7: 8,760 h a year / 12 (the rent page's "730 is 24/7")
HOURS_PER_MONTH_24X7 = 730


def per_month_24x7(per_hour: Any) -> Any:
    """The cost of a month of continuous serving at ``per_hour`` (a Money)."""
    return per_hour * HOURS_PER_MONTH_24X7


LONG_JOB_S = 30 * 86400  # a month of wall time: past it, a job wants more or bigger GPUs


def warnings(L: Locale, rec: Any, max_gpus: int | None, deadline: bool) -> list[str]:
    """What makes the best answer absurd, and the change that helps: '31,147 days for
    $68,892,252' said without a word was the defect."""
    best = getattr(rec, "best", None)
    if best is None or best.time_s is None:
        return []
    g = L.gettext
    out: list[str] = []
    t = best.time_s.typical
    if t > LONG_JOB_S:
        helps = []
        if max_gpus is not None:
            helps.append(g("allow more GPUs (“At most this many GPUs” is %(n)s)", n=max_gpus))
        if not deadline:
            helps.append(g("set a deadline, so only configurations that finish in time rank"))
        helps.append(g("choose a bigger card or less work"))
        out.append(g("This would run for %(time)s: %(helps)s.", time=L.duration(t),
                     helps="; ".join(helps)))
    return out


#: what limits a speed, in the page's English (the vocabulary's values are ids)
BOUND_WORDS = {"memory-bandwidth": N_("memory bandwidth"), "compute": N_("compute"),
               "interconnect": N_("the interconnect"), "fixed-overhead": N_("fixed overheads"),
               "host-memory": N_("system RAM"), "pcie": N_("PCIe")}


def bound_words(L: Locale, bound: Any) -> str:
    """What limits a speed (memory bandwidth, compute ...) in the page's language."""
    value = str(getattr(bound, "value", bound))
    return L.gettext(BOUND_WORDS[value]) if value in BOUND_WORDS else value
