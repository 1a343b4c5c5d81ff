"""Results in words, in the page's language.

The advise and cost layers explain themselves in English (that text stays in the JSON and is
shown on the pages as the engine's notes). The pages say the same facts through the message
catalogs, composed from the result objects' fields, so every number is formatted per locale.
Fixed phrases from the engine (article rules, suggestions, sources) are looked up in the
catalog as they are, then in ``locales/<lang>/phrases.toml`` (patterns with numbers); anything
not found is shown in English, marked ``lang="en"``.
"""

from __future__ import annotations

import math
import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from markupsafe import Markup, escape

from whichgpu.advise.explain import closest_miss, excluded_counts, price_to_win
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
EXCLUSION_KINDS = {"memory": N_("memory"), "offer": N_("no offer"), "price": N_("hourly budget"),
                   "deadline": N_("deadline"), "budget": N_("budget"), "speed": N_("speed"),
                   "engine": N_("engine not available"),
                   "latency": N_("latency target")}


# ------------------------------------------------------------------ phrases from the engine

@cache
def _phrasebook(lang: str) -> dict[str, Any]:
    path = resources.files("whichgpu.web").joinpath(f"locales/{lang}/phrases.toml")
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text("utf-8"))


@cache
def _patterns(lang: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p["en"]), p["text"])
                 for p in _phrasebook(lang).get("phrase", []))


class _Unknown(Exception):
    """A captured word the phrase book has no translation for."""


def phrase(L: Locale, text: str) -> str | None:
    """The engine's English ``text`` in the page's language, or None if not known."""
    if L.lang == "en":
        return text
    if L.has(text):
        return L.gettext(text)
    for pattern, template in _patterns(L.lang):
        m = pattern.fullmatch(text)
        if m:
            try:
                values = {k: _localize(L, k, v) for k, v in m.groupdict().items()}
            except _Unknown:
                continue
            return template.format(**values)
    return None


def _localize(L: Locale, name: str, text: str | None) -> str:
    """A captured value in the page's format: '4,096' -> '4 096', money (groups named m_...)
    -> '3,15 $US', words (w_...) from the phrase book's [words], phrases (t_...) translated
    in turn, values typed on a command line (k_...) as they are, lists (l_...) joined in the
    page's language, phrases joined by '; ' (p_...) translated one by one. Other text (GPU
    ids, flags, source keys) is kept as it is.
    """
    if not text:
        return ""
    if name.startswith("k_"):  # a value typed on a command line: kept as it is
        return text
    if name.startswith("l_"):  # a list of values: '1, 2 or 4' -> '1, 2 ou 4'
        parts = re.split(r", | or ", text)
        if len(parts) == 1:
            return text
        return ", ".join(parts[:-1]) + f" {_phrasebook(L.lang).get('or', 'or')} " + parts[-1]
    if name.startswith("p_"):  # phrases joined by '; ', each translated in turn
        parts = [phrase(L, part) for part in text.split("; ")]
        if any(part is None for part in parts):
            raise _Unknown(text)
        return " ; ".join(parts)
    if name.startswith("w_"):
        words = _phrasebook(L.lang).get("words", {})
        if text not in words:
            raise _Unknown(text)
        return words[text]
    if name.startswith("t_"):
        out = phrase(L, text)
        if out is None:
            raise _Unknown(text)
        return out
    if name.startswith("m_"):
        from whichgpu.errors import InputError
        from whichgpu.units import parse_money

        try:
            return L.money(parse_money(text))
        except InputError:
            return text
    if re.fullmatch(r"\d+(,\d{3})*(\.\d+)?", text):
        value = float(text.replace(",", ""))
        return L.sig(value, 6)
    return text


# ------------------------------------------------------------------ formulas

@cache
def _formula_book(lang: str) -> tuple[re.Pattern[str] | None, dict[str, str], frozenset[str]]:
    book = _phrasebook(lang).get("formula", {})
    terms = {k: v for k, v in book.get("terms", {}).items()}
    keep = frozenset(book.get("keep", []))
    if not terms:
        return None, terms, keep
    alternation = "|".join(re.escape(k) for k in sorted(terms, key=len, reverse=True))
    return re.compile(rf"(?<![\w\-])(?:{alternation})(?![\w\-])"), terms, keep


_NUM = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+\.\d+(?![\w.])")
_WORD = re.compile(r"[A-Za-z][\w.\-/+=']*")


def formula_text(L: Locale, text: str) -> str | None:
    """How a memory term was computed, in the page's language: the words translated from the
    phrase book's [formula] terms, the numbers in its format, identifiers (kv_heads, fp32,
    tp=4, Q4_K) as they are. None if any English word would be left (shown in English)."""
    if L.lang == "en":
        return text
    whole = phrase(L, text)
    if whole is not None:
        return whole
    pattern, terms, keep = _formula_book(L.lang)
    if pattern is None:
        return None
    held: list[str] = []

    def hold(value: str) -> str:
        held.append(value)
        return f"\x00{len(held) - 1}\x00"

    out = pattern.sub(lambda m: hold(terms[m.group(0)]), text)
    for word in _WORD.findall(re.sub(r"\x00\d+\x00", " ", out)):
        if word not in keep and not re.search(r"[\d_=]", word) and not (
                word.isupper() and len(word) > 1):
            return None  # an English word the phrase book does not know
    out = _NUM.sub(lambda m: hold(L.sig(float(m.group(0).replace(",", "")), 9)), out)
    out = out.replace(" x ", " × ").replace("; ", "\u00a0; ").replace(": ", "\u00a0: ")
    return re.sub(r"\x00(\d+)\x00", lambda m: held[int(m.group(1))], out)


def formula(L: Locale, text: str | None) -> Markup:
    """``formula_text`` as HTML; a formula it cannot translate is marked ``lang="en"``."""
    if not text:
        return Markup("")
    out = formula_text(L, text)
    if out is None:
        return Markup('<span lang="en">%s</span>') % text
    return Markup(escape(out))


def tr(L: Locale, text: str | None) -> Markup:
    """``phrase`` as HTML; untranslated English is marked ``lang="en"``."""
    if not text:
        return Markup("")
    out = phrase(L, text)
    if out is None:
        return Markup('<span lang="en">%s</span>') % text
    return Markup(escape(out))


# ------------------------------------------------------------------ pieces

def where(L: Locale, gpu_id: str, count: int) -> str:
    return gpu_id if count == 1 else L.gettext("%(n)s × %(gpu)s", n=count, gpu=gpu_id)


def billing(L: Locale, rule: Any) -> str:
    unit = {1: N_("per second"), 60: N_("per minute"), 3600: N_("per hour")}.get(
        int(rule.increment_s))
    text = L.gettext(unit) if unit else L.gettext("per %(n)s s", n=L.sig(rule.increment_s))
    if rule.minimum_s:
        text = L.gettext("%(unit)s after a %(n)s-minute minimum", unit=text,
                         n=L.sig(rule.minimum_s / 60))
    return text


def time_range(L: Locale, r: Any) -> str:
    if r is None:
        return "–"
    return L.gettext("%(low)s – %(high)s", low=L.duration(r.low), high=L.duration(r.high))


def money_range(L: Locale, r: Any) -> str:
    return L.gettext("%(low)s – %(high)s", low=L.money(r.low), high=L.money(r.high))


def _what(L: Locale, o: Any) -> str:
    if o.time_s is None:
        return L.gettext("%(cost)s per hour", cost=L.money(o.cost.typical))
    return L.gettext("about %(time)s (%(trange)s) and %(cost)s (%(crange)s)",
                     time=L.duration(o.time_s.typical), trange=time_range(L, o.time_s),
                     cost=L.money(o.cost.typical), crange=money_range(L, o.cost))


def label(L: Locale, o: Any) -> str:
    return where(L, o.gpu.id, o.count * o.replicas)


# ------------------------------------------------------------------ the recommendation

def explanation(L: Locale, rec: Any) -> list[str]:
    """Why the first option wins, in the page's language."""
    g = L.gettext
    opts = rec.options
    if not opts:
        lines = [g("Nothing in the catalog and price list can run this job as asked.")]
        e = closest_miss(rec.excluded)
        if e is not None:
            lines.append(g("Closest: %(gpu)s, %(reason)s.", gpu=where(L, e.gpu.id, e.count),
                           reason=exclusion(L, e)))
            if not e.has_offer:
                lines.append(g("%(gpu)s is not in this price list.", gpu=e.gpu.id))
        return lines
    best = opts[0]
    job = rec.job
    lines = []
    offer = best.offer
    args = {"label": label(L, best), "what": _what(L, best),
            "price": L.money(best.price_per_hour), "provider": offer.provider,
            "billing": billing(L, offer.billing)}
    if job.per_hour:
        lines.append(g("%(label)s wins with the lowest cost per hour: %(what)s at %(price)s/h "
                       "(%(provider)s, %(billing)s).", **args) if job.objective == "cost" else
                     g("%(label)s wins as the fastest per user: %(what)s at %(price)s/h "
                       "(%(provider)s, %(billing)s).", **args))
    elif job.objective == "cost":
        lines.append(g("%(label)s wins with the lowest total cost: %(what)s at %(price)s/h "
                       "(%(provider)s, %(billing)s).", **args))
    else:
        lines.append(g("%(label)s wins with the shortest time: %(what)s at %(price)s/h "
                       "(%(provider)s, %(billing)s).", **args))
    if job.kind == "rate" and best.serving:
        sv = best.serving
        lines.append(g("Sized for %(rate)s requests/s: %(replicas)s replica(s) of %(tp)s GPU(s), "
                       "each at %(load)s of its maximum throughput; time to first token "
                       "%(ttft)s, time per output token %(tpot)s; %(cost)s per million output "
                       "tokens.", rate=L.sig(job.requests_per_s), replicas=sv["replicas"],
                       tp=sv["tp"], load=L.percent(sv["utilisation"]),
                       ttft=seconds_range(L, sv["ttft_s"]), tpot=seconds_range(L, sv["tpot_s"]),
                       cost=L.money(sv["cost_per_million_tokens"]["output"])))
    usable = best.gpu.usable_memory_bytes
    sp = best.speed
    lines.append(g("Memory first: it needs %(need)s per GPU of %(usable)s (%(spare)s spare). "
                   "Speed second: limited by %(bound)s, at %(precision)s, confidence "
                   "%(confidence)s.", need=L.gb(best.memory_bytes), usable=L.gb(usable),
                   spare=L.gb(usable - best.memory_bytes),
                   bound=g(BOUNDS.get(sp.bound, sp.bound)), precision=sp.precision,
                   confidence=g(CONFIDENCE.get(sp.confidence, sp.confidence))))
    if len(opts) > 1:
        second = opts[1]
        if job.objective == "cost" and best.cost.typical.amount > 0:
            diff = second.cost.typical.amount / best.cost.typical.amount - 1
            lines.append(g("Next: %(label)s, %(what)s (%(diff)s cost).", label=label(L, second),
                           what=_what(L, second),
                           diff=("+" if diff >= 0 else "") + L.percent(diff)))
        else:
            lines.append(g("Next: %(label)s, %(what)s.", label=label(L, second),
                           what=_what(L, second)))
    ties = [label(L, o) for o in opts[1:] if o.near_tie]
    if ties:
        lines.append(g("Near-tie (within 5 %%): %(labels)s; the ranges overlap, so prices on "
                       "the day decide.", labels=", ".join(ties)))
    excluded, _, smaller = excluded_counts(rec)
    counts = (L.ngettext("%(num)d configuration can run it;",
                         "%(num)d configurations can run it;", len(opts)) + " " +
              L.ngettext("%(num)d GPU excluded.", "%(num)d GPUs excluded.", excluded))
    if smaller:
        counts += " " + L.ngettext(
            "%(num)d smaller size of a GPU that runs it with more cards excluded.",
            "%(num)d smaller sizes of GPUs that run it with more cards excluded.", smaller)
    lines.append(counts)
    return lines


def what_would_change(L: Locale, rec: Any) -> list[str]:
    """The nearest changes that would change the answer."""
    g = L.gettext
    opts = rec.options
    if not opts:
        return []
    best, job, out = opts[0], rec.job, []
    timed = [o for o in opts if o.time_s is not None]
    if job.objective == "cost" and best.time_s is not None and timed:
        fastest = min(timed, key=lambda o: o.time_s.typical)
        if fastest is not best:
            out.append(g("If time matters more: %(label)s takes %(time)s for %(cost)s.",
                         label=label(L, fastest), time=L.duration(fastest.time_s.typical),
                         cost=L.money(fastest.cost.typical)))
    elif job.objective == "time":
        cheapest = min(opts, key=lambda o: o.cost.typical.amount)
        if cheapest is not best:
            out.append(g("If cost matters more: %(label)s costs %(cost)s.",
                         label=label(L, cheapest), cost=L.money(cheapest.cost.typical)))
    win = price_to_win(rec)
    if win is not None:
        runner, target, now = win
        text = (g("%(label)s would win below %(target)s/h per GPU (now %(now)s/h per GPU).")
                if runner.gpus > 1 else g("%(label)s would win below %(target)s/h (now "
                                          "%(now)s/h)."))
        out.append(text % {"label": label(L, runner), "target": L.money(target),
                           "now": L.money(now)})
    late = [e for e in rec.excluded if e.kind == "deadline"]
    if late:
        e = min(late, key=lambda e: e.shortfall)
        out.append(g("A longer deadline would let %(gpu)s in.", gpu=e.gpu.id))
    pricey = sorted({e.gpu.id for e in rec.excluded if e.kind in ("budget", "price")})
    if pricey:
        out.append(g("A bigger budget would let in: %(gpus)s.", gpus=some(L, pricey)))
    no_offer = sorted({e.gpu.id for e in rec.excluded if e.kind == "offer"})
    if no_offer:
        out.append(g("Fits but has no offer in this price list: %(gpus)s (another price "
                     "source may change the answer).", gpus=some(L, no_offer)))
    return out


def some(L: Locale, items: Any, n: int = 8) -> str:
    """The first ``n`` items, and "and N more" when some are left out (never a silent cut)."""
    items = list(items)
    if len(items) <= n:
        return ", ".join(items)
    return L.gettext("%(items)s and %(n)s more", items=", ".join(items[:n]), n=len(items) - n)


def exclusion(L: Locale, e: Any) -> str:
    """Why one GPU was left out, in the page's language."""
    g = L.gettext
    if e.kind == "memory":
        usable = e.gpu.usable_memory_bytes
        return g("does not fit: needs %(need)s per GPU on %(where)s, has %(usable)s "
                 "(%(short)s short)", need=L.gb(e.shortfall + usable),
                 where=where(L, e.gpu.id, e.count), usable=L.gb(usable), short=L.gb(e.shortfall))
    if e.kind == "offer":
        return g("fits, but the price list has no offer for it")
    if e.kind == "deadline":
        return g("misses the deadline by about %(late)s", late=L.duration(e.shortfall))
    if e.kind == "budget":
        return g("over the total budget")
    if e.kind == "price":
        return g("over the hourly budget")
    if e.kind == "speed":
        return g("too slow for the speed each user needs")
    if e.kind == "latency":
        return g("misses the TTFT or TPOT target even with one request at a time")
    return e.reason


def seconds_range(L: Locale, r: dict) -> str:
    """A serving latency range in milliseconds: '141 ms (50–412)'."""
    return L.gettext("%(typical)s ms (%(low)s–%(high)s)", typical=L.number(r["typical"] * 1e3),
                     low=L.number(r["low"] * 1e3), high=L.number(r["high"] * 1e3))


# ------------------------------------------------------------------ rent or buy

def advice_reasons(L: Locale, adv: Any) -> list[str]:
    """Why rent or buy, from the advice's numbers."""
    g = L.gettext
    o, t = adv.ownership, adv.thresholds
    hz = L.sig(t.horizon_months)
    lines = [g("Over %(months)s months at %(hours)s h/month (%(util)s): renting costs "
               "%(rent)s, owning %(own)s.", months=hz, hours=L.number(o.hours_used_per_month),
               util=L.percent(o.inputs.utilization), rent=L.money(adv.rent_cost, 0),
               own=L.money(adv.own_cost, 0))]
    if math.isfinite(t.months):
        msg = (N_("At this use owning pays back after %(months)s months, within the "
                  "%(horizon)s-month horizon.") if t.months <= t.horizon_months else
               N_("At this use owning pays back after %(months)s months, beyond the "
                  "%(horizon)s-month horizon."))
        lines.append(g(msg, months=L.number(t.months, 1), horizon=hz))
    else:
        lines.append(g("At this use owning never pays back: the rent saved per hour does not "
                       "cover the running costs and maintenance."))
    if t.reachable:
        lines.append(g("Over %(horizon)s months owning needs at least %(hours)s h/month "
                       "(%(util)s utilisation) to pay back.", horizon=hz,
                       hours=L.number(t.hours_per_month), util=L.percent(t.utilization)))
    else:
        lines.append(g("Over %(horizon)s months owning cannot pay back even at 24/7 use.",
                       horizon=hz))
    lines.append(g("Each hour of use costs %(run)s to run when owned vs %(rent)s rented; owning "
                   "also ties up %(capital)s and pays when idle.",
                   run=L.money(o.running_cost_per_used_hour), rent=L.money(o.rent_price),
                   capital=L.money(o.capital_cost, 0)))
    return lines


def months_text(L: Locale, x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return L.gettext("never")
    return L.gettext("%(n)s months", n=L.number(x, 1))


def hours_text(L: Locale, x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return L.gettext("never")
    return f"{L.number(x)}\u00a0h"
