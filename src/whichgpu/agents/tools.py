"""The MCP tools and resources, from the request models: no SDK here.

Each tool is a command's request model (answers/requests.py) and its answer: its input schema
is the model's JSON schema (the surface's variant of it: the command line's model for
``whichgpu mcp``, the web's for the service), its result the answer's JSON (the command
line's ``--json``) and a short summary in words. Two tools tighten a model: ``fits_gpu`` is
``memory`` with a GPU required, ``export`` is ``recommend`` with a launcher required;
``fits`` is ``whichgpu fits`` (what runs on a card).
Bad input is the request model's one-line reason, as on the command line and the REST API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Protocol

from pydantic import Field, create_model

from whichgpu.answers import requests as r
from whichgpu.answers.request import Request


class ToolName(StrEnum):
    """The tools an agent can call."""

    RECOMMEND = "recommend"
    MEMORY = "memory"
    FITS = "fits"
    FITS_GPU = "fits_gpu"
    SPEED = "speed"
    PRICES = "prices"
    COST = "cost"
    RENT_OR_BUY = "rent_or_buy"
    EXPORT = "export"


class ResourceName(StrEnum):
    """The resources an agent can read."""

    GPUS = "gpus"
    PRICES = "prices"


def _requiring(model: type[Request], name: str, class_name: str, doc: str) -> type[Request]:
    """``model`` with field ``name`` required: the same type without None, the same
    description, bounds and web words (a missing value is the model's 'Missing option')."""
    field = model.model_fields[name]
    annotation: Any = Annotated[(str, *field.metadata, Field(description=field.description))]
    fields: dict[str, Any] = {name: (annotation, ...)}
    return create_model(class_name, __base__=model, __module__=__name__, __doc__=doc,
                        **fields)


FitsGpu = _requiring(r.Memory, "gpu", "FitsGpu", """``whichgpu memory --gpu``: whether a job fits
    one GPU (or N of them, with gpus): the peak memory per GPU, the verdict (fits,
    borderline, does not fit) with its headroom, and what would make it fit.""")
Export = _requiring(r.Recommend, "export", "Export", """``whichgpu recommend --export``: the
    cheapest configuration for a job, written as a launcher task file (SkyPilot or dstack
    YAML, in the answer's 'export' field) ready to launch.""")


@dataclass(frozen=True)
class Tool:
    """One tool: its request model (the command line's), the answer function that answers
    it (``whichgpu.answers.<answer>``), and on the web whether it takes a JSON body (a
    pasted config.json)."""

    name: ToolName
    model: type[Request]
    answer: str
    title: str
    body: bool = False

    @property
    def description(self) -> str:
        return describe(self.model)


TOOLS: tuple[Tool, ...] = (
    Tool(ToolName.RECOMMEND, r.Recommend, "recommend", "Which GPU to rent for a job",
         body=True),
    Tool(ToolName.MEMORY, r.Memory, "memory", "Memory a job needs per GPU", body=True),
    Tool(ToolName.FITS, r.Fits, "fits", "What runs on my card (models, formats, contexts, "
         "speeds)"),
    Tool(ToolName.FITS_GPU, FitsGpu, "memory", "Does a job fit this GPU", body=True),
    Tool(ToolName.SPEED, r.Speed, "speed", "How fast a job runs on a GPU", body=True),
    Tool(ToolName.PRICES, r.PricesList, "prices_list", "GPU rental offers and their age"),
    Tool(ToolName.COST, r.Cost, "cost", "What a run costs on the cheapest offer"),
    Tool(ToolName.RENT_OR_BUY, r.Tco, "tco", "Rent or buy a GPU (total cost of ownership)",
         body=True),
    Tool(ToolName.EXPORT, Export, "recommend", "A launcher task file for the best GPU",
         body=True),
)
TOOLS_BY_NAME: dict[str, Tool] = {t.name.value: t for t in TOOLS}


@dataclass(frozen=True)
class Resource:
    """One resource: a request with its defaults, answered like a tool."""

    name: ResourceName
    uri: str
    model: type[Request]
    answer: str
    title: str
    description: str


RESOURCES: tuple[Resource, ...] = (
    Resource(ResourceName.GPUS, "whichgpu://gpus", r.Gpus, "gpus", "GPU catalog",
             "Every GPU of the catalog with its specs (each with its source), throughput and "
             "cost per TFLOP-hour on the current prices: 'whichgpu gpus --json'."),
    Resource(ResourceName.PRICES, "whichgpu://prices", r.PricesList, "prices_list",
             "Current GPU offers", "Every current rental offer, cheapest per GPU-hour "
             "first, with its provider, billing rule, age and source: 'whichgpu prices "
             "list --json'."),
)
RESOURCES_BY_URI: dict[str, Resource] = {res.uri: res for res in RESOURCES}


class UnknownTool(LookupError):
    """A tool or resource this server does not have (a protocol error, not bad input)."""


@dataclass(frozen=True)
class Answer:
    """What a surface answered: the JSON of ``--json`` and the notes the command line
    prints on stderr (an ambiguous GPU name resolved, ...)."""

    data: dict[str, Any]
    notes: tuple[str, ...] = ()


class Surface(Protocol):
    """How a server answers: which variant of a request model it takes, and the answer."""

    def request_model(self, model: type[Request], body: bool) -> type[Request]: ...

    async def answer(self, answer: str, request: Request) -> Answer: ...


# ------------------------------------------------------------------ inputs


def describe(model: type[Request]) -> str:
    """A tool's description: its request model's docstring, without the command's name."""
    import inspect

    doc = inspect.cleandoc(model.__doc__ or "")
    head, sep, rest = doc.partition(": ")
    if sep and head.startswith("``whichgpu"):
        doc = rest[:1].upper() + rest[1:]
    return "\n\n".join(" ".join(p.split()) for p in doc.split("\n\n"))


def input_schema(model: type[Request]) -> dict[str, Any]:
    """The tool's input schema: the request model's JSON schema (the same fields, types,
    bounds, defaults and descriptions as the command line and the REST API), less
    ``as_json`` (an answer is always its JSON)."""
    schema = model.model_json_schema()
    schema["type"] = "object"
    props = schema.setdefault("properties", {})
    props.pop("as_json", None)
    if "required" in schema:
        schema["required"] = [n for n in schema["required"] if n != "as_json"]
    return schema


def parse(model: type[Request], arguments: Mapping[str, Any] | None) -> Request:
    """The request, or InputError with the one-line reason the command line gives."""
    values = dict(arguments or {})
    values.pop("as_json", None)
    if "as_json" in model.model_fields:
        values["as_json"] = True  # 'prices list' lists every offer for --json
    return model.parse(values)


async def call(surface: Surface, name: str, arguments: Mapping[str, Any] | None,
               ) -> tuple[Answer, str]:
    """A tool's answer and its summary (UnknownTool, or InputError for bad input)."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise UnknownTool(f"unknown tool {name!r}: use one of {', '.join(TOOLS_BY_NAME)}")
    request = parse(surface.request_model(tool.model, tool.body), arguments)
    answer = await surface.answer(tool.answer, request)
    return answer, summary(tool.name, answer)


async def read(surface: Surface, uri: str) -> Answer:
    """A resource's JSON (UnknownTool for a URI this server does not have)."""
    res = RESOURCES_BY_URI.get(str(uri))
    if res is None:
        raise UnknownTool(f"unknown resource {str(uri)!r}: use one of "
                          f"{', '.join(RESOURCES_BY_URI)}")
    return await surface.answer(res.answer, parse(surface.request_model(res.model, False), {}))


# ------------------------------------------------------------------ summaries


def _money(m: Any) -> str:
    """An amount of a JSON answer, said as every command says money (units.format_money)."""
    if not isinstance(m, dict) or m.get("amount") is None:
        return "?"
    from whichgpu.units import Money, format_money

    try:
        return format_money(Money(float(m["amount"]), str(m.get("currency") or "USD")))
    except (TypeError, ValueError):
        return "?"


def _range(r_: Any, digits: int = 3) -> str:
    if not isinstance(r_, dict):
        return "?"
    low, typical, high = (r_.get(k) for k in ("low", "typical", "high"))
    if typical is None:
        return "?"
    text = f"{typical:.{digits}g}"
    if low is not None and high is not None and low != high:
        text += f" ({low:.{digits}g}-{high:.{digits}g})"
    return text


def _recommend(d: dict[str, Any]) -> list[str]:
    lines = [str(x) for x in (d.get("explanation") or [])[:2]]
    options, excluded = d.get("options") or [], d.get("excluded") or []
    lines.append(f"{len(options)} option(s) shown, ranked by {d.get('ranking')}; "
                 f"{len(excluded)} configuration(s) excluded (see 'excluded' for why).")
    exported = d.get("export")
    if isinstance(exported, dict):
        lines.append(f"Task file for {exported.get('launcher')}: {exported.get('filename')} "
                     f"(option {exported.get('option')}), in 'export'.")
    vs = d.get("vs_api")
    if isinstance(vs, dict):
        own = (vs.get("self_hosted_per_million_tokens") or {}).get("output")
        rows = [a for a in vs.get("api") or [] if isinstance(a, dict)]
        lines.append(f"Self-hosted: {_money(own)} per 1M output tokens at "
                     f"{vs.get('utilisation')} of max throughput; {len(rows)} API price(s) in "
                     "'vs_api' with the utilisation at which self-hosting breaks even.")
    budget = d.get("power_budget")
    if isinstance(budget, dict):
        lines.append(f"{len(budget.get('within') or [])} option(s) within "
                     f"{budget.get('budget_w')} W of GPU board power, in 'power_budget'.")
    return lines


def _mixed(d: dict[str, Any]) -> list[str]:
    """A machine of different cards (a --gpu list): each card's load, and the mix's speed."""
    plan = d.get("plan") or {}
    cards = [c for c in plan.get("cards") or [] if isinstance(c, dict)]
    lines = [f"{d.get('model')} on {' + '.join(d.get('cards') or [])} with {plan.get('engine')} "
             f"({plan.get('method')} split): {'fits' if plan.get('fits') else 'does not fit'}."]
    lines += [f"Device {c.get('device')} {c.get('gpu')}: {c.get('layers')} layer slot(s), "
              f"{(c.get('need_bytes') or 0) / 1e9:.1f} GB of "
              f"{(c.get('usable_bytes') or 0) / 1e9:.1f} GB usable ({c.get('verdict')})."
              for c in cards]
    speed = plan.get("speed")
    if isinstance(speed, dict) and isinstance(speed.get("decode_tokens_per_s_per_sequence"),
                                              dict):
        lines.append(f"Decode {_range(speed['decode_tokens_per_s_per_sequence'])} tokens/s per "
                     f"sequence (typical, low-high); the slowest card: {speed.get('bound_by')}.")
    lines.append(f"Launch: {plan.get('launch')}")
    return lines


def _rl(d: dict[str, Any]) -> list[str]:
    """An RL post-training plan (--task grpo|ppo): memory per GPU, and the step where timed."""
    mem = d.get("memory") or {}
    lines = [f"{d.get('task')} ({d.get('tuning')}, {d.get('framework')}): "
             f"{d.get('generations')} completions x {d.get('prompts_per_step')} prompt(s); "
             f"{mem.get('per_training_gpu_gb')} GB per training GPU ({d.get('placement')} "
             "rollouts)" + (f"; on {d.get('gpu')}: {'fits' if d.get('fits') else 'does not fit'}"
                           if d.get("gpu") else "") + "."]
    if isinstance(d.get("step_s"), dict):
        lines.append(f"One step: {_range(d['step_s'])} s (typical, low-high); "
                     f"{d.get('dominant')} dominates.")
    return lines


def _memory(d: dict[str, Any]) -> list[str]:
    if d.get("mixed_cards"):
        return _mixed(d)
    if "generations" in d:
        return _rl(d)
    lines = [f"Peak memory per GPU: {d.get('total_gb')} GB ({d.get('total_gib')} GiB) for "
             f"{d.get('task')}, {d.get('quant')}, on {d.get('gpus')} GPU(s)."]
    target = d.get("target")
    if isinstance(target, dict):
        spare = (target.get("headroom_bytes") or 0) / 1e9
        lines.append(f"On {target.get('count')} x {target.get('gpu')}: {target.get('verdict')} "
                     f"({spare:+.1f} GB spare of {(target.get('usable_bytes') or 0) / 1e9:.1f}"
                     " GB usable).")
    elif d.get("gpus_that_fit"):
        fitting = [f for f in d["gpus_that_fit"] if isinstance(f, dict) and f.get("fits")]
        if fitting:
            lines.append(f"{len(fitting)} GPU configuration(s) of the catalog hold it, e.g. "
                         + ", ".join(f"{f.get('count')} x {f.get('gpu')}" for f in fitting[:3])
                         + ".")
    return lines


def _fits(d: dict[str, Any]) -> list[str]:
    models = [m for m in d.get("models") or [] if isinstance(m, dict)]
    lines = [f"{len(models)} model(s) run on {d.get('count')} x {d.get('gpu')} "
             f"({d.get('task')}); {len(d.get('not_run') or [])} do not."]
    for m in models[:5]:
        speed = m.get("decode_tokens_per_s")
        rate = f", {_range(speed)} tokens/s" if isinstance(speed, dict) else ""
        lines.append(f"{m.get('name')}: {m.get('quant')} on {m.get('engine')}, context up to "
                     f"{m.get('longest_context_tokens')} tokens{rate}"
                     + (" (layers offloaded to host RAM)" if m.get("offload") else "") + ".")
    return lines


_RATES = ("output_tokens_per_s", "images_per_min", "videos_per_hour", "steps_per_s",
          "tokens_per_s", "decode_tokens_per_s")


def _speed(d: dict[str, Any]) -> list[str]:
    if d.get("mixed_cards"):
        return _mixed(d)
    if "generations" in d:
        return _rl(d)
    rate = next((k for k in _RATES if isinstance(d.get(k), dict)), None)
    head = f"On {d.get('count')} x {d.get('gpu')} ({d.get('engine') or 'default engine'})"
    if rate is None:
        return [f"{head}: {d.get('bound')}-bound, confidence {d.get('confidence')}."]
    lines = [f"{head}: {rate.replace('_', ' ')} {_range(d[rate])} (typical, low-high); "
             f"{d.get('bound')}-bound, confidence {d.get('confidence')}."]
    runs = d.get("measured_runs")
    if isinstance(runs, dict):  # the store's measured runs moved it (whichgpu runs add)
        lines.append(f"Measured: {runs.get('summary')} (runs {runs.get('runs')}).")
    energy = d.get("energy")
    if isinstance(energy, dict):
        if isinstance(energy.get("joules_per_token"), dict):
            lines.append(f"Energy: {_range(energy['joules_per_token'])} J per token, "
                         f"{_range(energy['kwh_per_million_tokens'])} kWh per 1M tokens "
                         "(GPU board power).")
        elif isinstance(energy.get("joules_per_image"), dict):
            lines.append(f"Energy: {_range(energy['joules_per_image'])} J per image, "
                         f"{_range(energy['kwh_per_thousand_images'])} kWh per 1,000 images "
                         "(GPU board power).")
    return lines


def _prices(d: dict[str, Any]) -> list[str]:
    offers = d.get("offers") or []
    lines = [f"{d.get('total', len(offers))} offer(s), cheapest per GPU-hour first."]
    if offers:
        o = offers[0]
        lines.append(f"Cheapest: {o.get('gpu_count')} x {o.get('gpu')} on {o.get('provider')} "
                     f"at {_money(o.get('price_per_hour'))}/h "
                     f"({'spot' if o.get('spot') else 'on-demand'}, observed "
                     f"{o.get('observed_at')}).")
    return lines


def _cost(d: dict[str, Any]) -> list[str]:
    cost = d.get("cost") or {}
    offer = d.get("offer") or {}
    return [f"{_money(cost.get('typical'))} (from {_money(cost.get('low'))} to "
            f"{_money(cost.get('high'))}) on {d.get('gpus')} x {d.get('gpu')} at "
            f"{offer.get('provider')}, {d.get('pricing')}, "
            f"{_money(offer.get('price_per_hour'))}/h."]


def _tco(d: dict[str, Any]) -> list[str]:
    advice = d.get("advice") or {}
    lines = []
    if advice.get("decision"):
        lines.append(f"Decision: {advice['decision']} ({d.get('gpu')}).")
    lines += [str(x) for x in (advice.get("reasons") or [])[:2]]
    if d.get("break_even_hours") is not None:
        lines.append(f"Break-even after {d['break_even_hours']:,.0f} hours of use.")
    return lines


_SUMMARIES = {
    ToolName.RECOMMEND: _recommend, ToolName.EXPORT: _recommend,
    ToolName.MEMORY: _memory, ToolName.FITS_GPU: _memory, ToolName.FITS: _fits,
    ToolName.SPEED: _speed,
    ToolName.PRICES: _prices, ToolName.COST: _cost, ToolName.RENT_OR_BUY: _tco,
}


def summary(tool: ToolName, answer: Answer) -> str:
    """A few lines an agent can quote: the answer's gist, its notes, where the rest is."""
    lines = [f"Note: {n}" for n in answer.notes]
    lines += _SUMMARIES[tool](answer.data)
    lines.append("The full answer (the same JSON as 'whichgpu ... --json') is the structured "
                 "content.")
    return "\n".join(lines)
