"""The HTML pages: server-rendered forms and results, usable without JavaScript.

Forms use GET (a result is a link you can share) except the config.json paste (POST). Each
page calls the same services as the REST API; bad input re-renders the form with the reason
(HTTP 422), never a traceback.
"""

from __future__ import annotations

import functools
import json
import math
import re
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, pass_eval_context, select_autoescape
from jinja2.nodes import EvalContext
from markupsafe import Markup, escape
from pydantic import ValidationError

from whichgpu.answers import requests as r
from whichgpu.answers.command_line import command_line
from whichgpu.answers.fields import Text, is_bool, is_list
from whichgpu.answers.request import Request as Question
from whichgpu.answers.request import for_web, reason
from whichgpu.catalog.prices.store import StoreError
from whichgpu.errors import InputError, WhichGPUError
from whichgpu.messages import msg
from whichgpu.vocabulary import WorkKind
from whichgpu.web import charts, controls, explain, price_views, words, work
from whichgpu.web import services as s
from whichgpu.web.i18n import LANG_NAMES, LANGS, Locale, locale, translations
from whichgpu.web.input_bounds import bounds_attrs, field_attrs
from whichgpu.web.json_reasons import json_reason
from whichgpu.web.resolve import prefetch

router = APIRouter(include_in_schema=False)
_lang: ContextVar[str] = ContextVar("lang", default="en")

ARTICLE_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm")  # S21/S25's three cards
MARK_GPUS = ("rtx-4090", "rtx-5090", "l40s", "h100-sxm", "h200-sxm", "b200")
NAV = (("/", "advisor", explain.N_("Advisor")),
       ("/memory", "memory", explain.N_("VRAM selector")),
       ("/fits", "fits", explain.N_("What runs on my card")),
       ("/gpus", "gpus", explain.N_("GPU catalog")),
       ("/cost", "cost", explain.N_("Cost per task")),
       ("/rent-or-buy", "rent", explain.N_("Rent vs buy")),
       ("/prices", "prices", explain.N_("Prices")))


def cached(fn):
    """A page whose HTML depends only on its address, the language and the prices: a repeat
    visit is served from memory (see services.remember); a new one renders in a thread."""

    @functools.wraps(fn)
    async def page(request: Request, **params: Any) -> HTMLResponse:
        args = (str(request.url.query), getattr(request.state, "lang", "en"),
                tuple(sorted(params.items())))
        hit = s.recalled("page:" + request.url.path, args)
        if hit is s.MISSING:
            def build() -> tuple[bytes, int]:
                response = fn(request, **params)
                return bytes(response.body), response.status_code

            hit = await _compute(request, s.remember, "page:" + request.url.path, args, build)
        return HTMLResponse(hit[0], status_code=hit[1])

    return page


async def _compute(request: Request, fn, *args, question: str = ""):
    """A page's work: its Hub model looked up first (no thread held while the Hub answers),
    then the bounded work pool under the CPU-time limit (web/work.py). The page's address,
    language and ``question`` (a form's body) name it for the pool's memory of refusals."""
    import hashlib

    await prefetch(request.query_params.get("model"))
    where = (f"{request.method} {request.url.path}?{request.url.query} "
             f"{getattr(request.state, 'lang', 'en')} {question}")
    return await work.run(fn, *args, key="page:" + hashlib.sha256(
        where.encode("utf-8", "replace")).hexdigest()[:32],
        heavy=request.url.path in work.PAGES_HEAVY)


def _L() -> Locale:
    return locale(_lang.get())


def _begin(request: Request) -> Locale:
    """Use the request's language for everything this handler formats (charts, words)."""
    lang = getattr(request.state, "lang", "en")
    _lang.set(lang)
    return locale(lang)


#: (language, template words, autoescape) -> what ``_()`` says for words with no
#: parameters: the same every time (the catalogs are read once per process); bounded, since
#: a template may pass words it computed (an exclusion's kind)
_SAID: dict[tuple[str, str, bool], str] = {}
SAID_SIZE = 4096


@pass_eval_context
def _gettext(eval_ctx: EvalContext, string: str, /, **variables: Any) -> str:
    """The templates' ``_()``: what jinja2.ext.i18n's newstyle ``gettext`` says (the words
    translated, made Markup under autoescape, then ``%`` their parameters, even none), in
    one call instead of three nested ones, and remembered when it has no parameters (a page
    says ~240 of them; issue 27)."""
    if variables:
        rv = translations(_lang.get()).gettext(string)
        return (Markup(rv) if eval_ctx.autoescape else rv) % variables
    key = (_lang.get(), string, eval_ctx.autoescape)
    hit = _SAID.get(key)
    if hit is None:
        rv = translations(key[0]).gettext(string)
        hit = (Markup(rv) if key[2] else rv) % variables
        if len(_SAID) >= SAID_SIZE:
            _SAID.clear()
        _SAID[key] = hit
    return hit


def datalist_options(items: Any, value: str, text: str) -> Markup:
    """``<option value="{{ i.value }}">{{ i.text }}</option>`` for each item, as the templates
    wrote them in a loop: the same list (the presets, the catalog's GPUs) on every page, so
    its ~80 options are escaped once, not on every render (issue 27)."""
    return _options(tuple((getattr(i, value), getattr(i, text)) for i in items))


@functools.lru_cache(maxsize=16)
def _options(pairs: tuple[tuple[Any, Any], ...]) -> Markup:
    return Markup("".join(f'<option value="{escape(v)}">{escape(t)}</option>'
                          for v, t in pairs))


def _env() -> Environment:
    # the templates ship in the package: never re-read while the server runs (auto_reload
    # would stat every template of a page on each render)
    env = Environment(loader=PackageLoader("whichgpu.web", "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True,
                      lstrip_blocks=True, extensions=["jinja2.ext.i18n"], auto_reload=False)
    env.install_gettext_callables(  # type: ignore[attr-defined]  # added by jinja2.ext.i18n
        lambda m: translations(_lang.get()).gettext(m),
        lambda s_, p, n: translations(_lang.get()).ngettext(s_, p, n), newstyle=True)
    env.globals["_"] = _gettext  # as the extension's alias of its gettext, said faster
    for name in ("number", "sig", "percent", "money", "gb", "gib", "duration", "date",
                 "datetime", "age"):
        env.filters[name] = (lambda n: lambda *a, **k: getattr(_L(), n)(*a, **k))(name)
    env.filters["say"] = lambda text: words.say(_L(), text)
    env.globals.update(charts=charts, explain=explain, math=math, bounds=field_attrs,
                       datalist_options=datalist_options,
                       bounds_attrs=bounds_attrs, controls=controls, mark=controls.mark)
    return env


ENV = _env()


def render(request: Request, name: str, context: dict[str, Any],
           status: int = 200) -> HTMLResponse:
    """A template in the request's language."""
    lang = getattr(request.state, "lang", "en")
    token, drawn = _lang.set(lang), controls.begin()
    try:
        L = locale(lang)
        html = ENV.get_template(name).render(
            request=request, L=L, lang=lang, langs=LANGS, lang_names=LANG_NAMES, nav=NAV,
            lang_url=lambda code: _with_query(request, lang=code), **context)
    finally:
        _lang.reset(token)
        controls.end(drawn)
    return HTMLResponse(html, status_code=status)


def error_page(request: Request, message: str | None, status: int) -> HTMLResponse:
    return render(request, "error.html", {"message": message, "status": status,
                                          "page": "error"}, status)


def _with_query(request: Request, **changes: str) -> str:
    """The same page with some parameters changed, as a link relative to the page itself
    ('?a=1&lang=fr'): never the request's path, which a visitor writes ('//evil.example/x'
    would be a link to another site)."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    params += list(changes.items())
    return "?" + urlencode(params)


# ------------------------------------------------------------------ reading forms

def _clean(params: dict[str, Any], model: type[Question]) -> dict[str, Any]:
    """Form strings -> model fields: blanks dropped, checkboxes as booleans."""
    out: dict[str, Any] = {}
    for name in model.model_fields:
        if name not in params:
            continue
        value = params[name]
        if isinstance(value, list):
            value = [v.strip() for v in value if v.strip()]
            if not value:
                continue
        elif isinstance(value, str):
            value = value.strip()
            if value == "":
                continue
            if is_bool(model, name):
                value = value.lower() in ("1", "true", "on", "yes")
            elif is_list(model, name):
                value = [value]
        out[name] = value
    return out


_LIST_FIELDS = frozenset(n for m in r.COMMANDS for n in m.model_fields if is_list(m, n))


def _params(request: Request) -> dict[str, Any]:
    """The query string: one value per key, every value of a list field (rate=...)."""
    q = request.query_params
    return {k: (q.getlist(k) if k in _LIST_FIELDS else q.get(k)) for k in q}


def read(model: type[Question], params: dict[str, Any]) -> tuple[Any, str | None]:
    """(the validated request, None) or (None, the one-line reason). ``model`` is the
    command's request model, read as the web server takes it (for_web)."""
    web = for_web(model)
    try:
        return web.model_validate(_clean(params, web)), None
    except ValidationError as exc:
        return None, reason(list(exc.errors())[:3], web)


def attempt(fn, *args):
    """(result, None) or (None, reason): bad input is shown on the page, not raised (the
    reason as the engine said it: a message the page says in its own language)."""
    try:
        return fn(*args), None
    except StoreError:
        raise  # the server's fault, not the input's: a 503 without the store's location
    except WhichGPUError as exc:
        return None, said(exc)


def said(exc: BaseException) -> str:
    """What an error says: its message (structured when the engine gave one)."""
    first = exc.args[0] if exc.args else ""
    return first if isinstance(first, str) and first == str(exc) else str(exc)


def status_of(error: str | None) -> int:
    return 422 if error else 200


def _common() -> dict[str, Any]:
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.models.preset_index import list_presets

    return {"presets": list_presets(), "catalog": default_catalog().gpus,
            "feeds": s.price_sources(), "calibrated": s.has_calibration()}


# ------------------------------------------------------------------ advisor (home)

@router.get("/", response_class=HTMLResponse)
@cached
def advisor(request: Request) -> HTMLResponse:
    """The five questions of S13 plus the amount of work -> ranked options and why."""
    return _advisor(request, _params(request))


@router.post("/", response_class=HTMLResponse)
async def advisor_post(request: Request) -> HTMLResponse:
    """The advisor's question about a model given by its pasted config.json (a model that
    is not a preset, offline): the same answer as POST /api/v1/recommend with ``config``."""
    form = await request.form()
    params: dict[str, Any] = {k: v for k, v in form.items() if isinstance(v, str)}
    config_text = str(params.pop("config", "") or "").strip()
    config, error = _pasted(config_text)
    if error is not None:
        return _advisor(request, params, error=error, config_text=config_text)
    return await _compute(request, _advisor, request, params, config, config_text, None,
                          question="advisor:" + repr(sorted(params.items())) + config_text)


def _pasted(text: str) -> tuple[dict | None, str | None]:
    """A pasted config.json: (the object, None), (None, why not), or (None, None) if empty."""
    if not text:
        return None, None
    from whichgpu.models.local_file import parse_json

    try:  # strict JSON, bounded nesting (a deeply nested paste is an error, not a crash)
        config = parse_json(text, "the pasted config.json")
    except InputError as exc:
        bad = exc.__cause__
        return None, (_PASTE_JSON(line=bad.lineno, column=bad.colno, why=json_reason(bad.msg))
                      if isinstance(bad, json.JSONDecodeError) else said(exc))
    if not isinstance(config, dict):
        return None, _PASTE_OBJECT()
    return config, None


def _advisor(request: Request, p: dict[str, Any], config: dict | None = None,
             config_text: str = "", error: str | None = None) -> HTMLResponse:
    _begin(request)
    task = p.get("task") or "inference"
    unit = explain.unit_for(task, p.get("unit"))
    ctx: dict[str, Any] = {"page": "advisor", "form": {**p, "unit": unit}, "unit": unit,
                           "task": task, "article_cards": ",".join(ARTICLE_CARDS),
                           "all_url": _with_query(request, top="0"),
                           "config_text": config_text, "pasted": config is not None,
                           **_common()}
    if error is not None:
        return render(request, "advisor.html", {**ctx, "error": error}, 422)
    if not p.get("model") and config is None:
        return render(request, "advisor.html", ctx)
    params = _work(p, unit)
    for name in ("hours_per_month", "horizon_months"):  # read and bounded by _rent_or_buy,
        params.pop(name, None)  # which says a bad value beside the recommendation
    budget = (p.get("max_price_per_hour") or "").strip()  # question 3: the hourly budget
    if budget.startswith("-"):
        ctx.update(error=_BUDGET(v=budget))
        return render(request, "advisor.html", ctx, 422)
    if budget:
        if re.fullmatch(r"[\d.,]+", budget):  # a bare number: in the currency shown
            cur = p.get("currency") or attempt(s.main_currency, p.get("prices") or None)[0] \
                or s.main_currency(None) or "USD"
            budget += cur
        params["max_price_per_hour"] = budget
    if config is not None:
        params.pop("model", None)
        q, error = read(for_web(r.Recommend, body=True), {**params, "config": config})
    else:
        q, error = read(r.Recommend, params)
    result = advice = None
    if q is not None:
        result, error = attempt(_recommend_unkept, q)
    if result is not None and getattr(result, "kind", None) == "rl":  # grpo, ppo: the RL ranking
        ctx.update(rl_rank=result, q=q, cli=None if config is not None else command_line(q),
                   api=None if config is not None else "/api/v1/recommend?" + urlencode(
                       [(k, v) for k, v in q.model_dump(exclude_defaults=True).items()
                        if v is not None and not isinstance(v, list)]))
        return render(request, "advisor.html", ctx)
    if result is not None:
        advice, notes = _rent_or_buy(result, p)
        ctx.update(advice=advice, advice_notes=notes,
                   rules=_article_rules(result, p),
                   cli=None if config is not None else command_line(q),
                   api=None if config is not None else "/api/v1/recommend?" + urlencode(
                       [(k, v) for k, v in q.model_dump(exclude_defaults=True).items()
                        if v is not None and not isinstance(v, list)]),
                   chart=_pareto_chart(result.rec), machine=result.machine,
                   binds=_binds(result.rec))
    ctx.update(q=q, result=result, error=error, profile=_profile_used(q, result))
    return render(request, "advisor.html", ctx, status_of(error))


def _recommend_unkept(q: r.Recommend) -> Any:
    """``s.recommend(q)`` without keeping the typed answer in the memo (a kept one is still
    reused): the page keeps its HTML, and measuring a whole-catalog recommendation's objects
    for the memo's byte bound took 4.2 CPU-ms of the page's ~24 (issue 27), more than most
    repeats in another language would save."""
    return s.unkept(lambda: s.recommend(q))


def _work(p: dict[str, Any], unit: str) -> dict[str, Any]:
    """The form's amount as the request field of its unit; the tokens/s each user reads only
    with a number of users (the other units have no use for it)."""
    params = dict(p)
    if p.get("amount"):  # the amount and its unit replace any other amount in the address
        params = {k: v for k, v in p.items() if k not in explain.UNITS}
        params[unit] = p["amount"]
    if "users" not in params:
        params.pop("tokens_per_s_each", None)
    return params


@router.get("/export")
def export_download(request: Request) -> Response:
    """The advisor's answer as a launcher task file to download (SkyPilot or dstack): the
    advisor's question plus ``export`` (the launcher) and ``export_option`` (a rank; empty:
    the best it can launch). The same file as ``whichgpu recommend --export``."""
    _begin(request)
    p = _params(request)
    launcher, option = (p.pop("export", None) or "").strip(), p.pop("export_option", None)
    unit = explain.unit_for(p.get("task") or "inference", p.get("unit"))
    q, error = read(r.Recommend, _work(p, unit))
    rank_ = None
    if error is None and launcher.lower() not in ("skypilot", "dstack"):
        error = _NO_LAUNCHER(v=launcher)
    if error is None and option:
        try:
            rank_ = int(option)
        except ValueError:
            error = _BAD_OPTION(v=option)
    if error is None and q is not None and q.task.is_rl:
        error = _RL_ELSEWHERE(task=str(q.task))
    result = None
    if error is None:
        result, error = attempt(s.recommend, q)
    if result is not None:
        made, error = attempt(_export_file, result, launcher, rank_)
    if error is not None:
        return error_page(request, error, 422)
    filename, text = made
    return Response(text, media_type="text/yaml; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename}"'})


def _export_file(result: Any, launcher: str, rank: int | None) -> tuple[str, str]:
    """(filename, text): export.export_file where the export package has it (it converts the
    offer's price back to dollars for dstack), else the same file from export_option."""
    import whichgpu.export as ex

    if hasattr(ex, "export_file"):
        return ex.export_file(result.rec, launcher, rank, selection=result.selection,
                              rates=result.rates)
    e = ex.export_option(result.rec, launcher, rank, selection=result.selection)
    return e.filename, e.text


_NO_LAUNCHER = Text("web.export.launcher", "the task file is for SkyPilot or dstack, got {v!r}")
_BAD_OPTION = Text("web.export.option", "the option to export is its rank in the table, a whole "
                   "number such as 2, got {v}")
_RL_ELSEWHERE = Text("web.rl.elsewhere", "RL post-training ({task}) is ranked on the advisor "
                     "page and planned on the VRAM selector, not on this page")


def _profile_used(q, result) -> Any:
    """The calibration profile a result used (for the note under it), or None."""
    if q is None or result is None or not q.calibration:
        return None
    return attempt(s.calibration_profile, q.calibration)[0]


def _number(text: str | None) -> float | None:
    if text is None or not str(text).strip():
        return None
    try:
        value = float(str(text).strip().replace(",", "."))
    except ValueError:
        raise InputError(msg("web.number", "cannot read {v!r} as a number", v=text)) from None
    return value if math.isfinite(value) else None


_HOURS = Text("web.hours_per_month", "the hours of use per month must be more than 0 and at "
              "most 730 (24/7), got {v}")
_HORIZON = Text("web.horizon_months", "the months you need it must be more than 0 and at most "
                "360 (30 years), got {v}")
_BUDGET = Text("web.budget_negative", "the hourly budget must be more than 0, got {v}")


def _rent_or_buy(result: Any, p: dict[str, Any]):
    """Q4 and Q5 of S13: rent or buy the first option (the answer's, as the checklist's)."""
    best = result.rec.best
    try:
        hours, horizon = _number(p.get("hours_per_month")), _number(p.get("horizon_months"))
    except InputError as exc:
        return None, [said(exc)]
    if best is None or hours is None or horizon is None:
        return None, []
    for value, high, what in ((hours, 730, _HOURS), (horizon, 360, _HORIZON)):
        if not 0 < value <= high:
            return None, [what(v=p.get("hours_per_month" if what is _HOURS
                                       else "horizon_months"))]
    try:
        return result.rent_or_buy(hours, horizon), []
    except InputError as exc:
        return None, [said(exc)]


def _article_rules(result: Any, p: dict[str, Any]) -> list[str]:
    """What S13 says for these answers (shown beside the computed answer)."""
    try:
        return result.article_rules(_number(p.get("hours_per_month")),
                                    _number(p.get("horizon_months")))
    except InputError:
        return []


def _pareto_chart(rec) -> Markup | None:
    L = _L()
    # one dot per GPU at its best count, numbered as the table's rows
    pts = [charts.Point(explain.short_label(L, o), o.time_s.typical / 3600, o.cost.typical.amount,
                        o.time_s.low / 3600, o.time_s.high / 3600, o.pareto, i == 0, i + 1)
           for i, (o, _) in enumerate(explain.by_gpu(rec.options)[:40])
           if o.time_s is not None]
    if len(pts) < 2:
        return None
    cur = rec.currency
    g = L.gettext
    return charts.scatter(
        pts, title=g("Cost against time for each configuration"),
        desc=g("Each dot is a GPU configuration; the line joins the Pareto front (nothing is "
               "both cheaper and faster). The largest dot is the recommendation."),
        x_label=g("time"), y_label=g("cost (%(currency)s)", currency=cur),
        fx=lambda h: L.duration(h * 3600), fy=lambda v: L.money({"amount": v, "currency": cur}),
        front_label=g("Pareto front"))


def _binds(rec) -> dict[str, Any] | None:
    """Serving at a request rate: what binds each option (the GPU at its best count), as
    the share of each limit it uses: the KV cache's room for sequences, the replica's
    throughput (bound by memory bandwidth or compute), and the latency targets."""
    if rec.job.kind != WorkKind.RATE or not rec.options:
        return None
    L, g = _L(), _L().gettext
    series = [g("memory for the KV cache"), g("throughput"), g("time to first token target"),
              g("time per output token target")]
    job, rows = rec.job, []
    for i, (o, _) in enumerate(explain.by_gpu(rec.options)[:8]):
        sv = o.serving or {}
        limit = sv.get("batch_limit")
        shares = (sv["decode_batch"] / limit if limit and sv.get("decode_batch") else None,
                  sv.get("utilisation"),
                  sv["ttft_s"]["typical"] / job.ttft_s if job.ttft_s and sv.get("ttft_s")
                  else None,
                  sv["tpot_s"]["typical"] / job.tpot_s if job.tpot_s and sv.get("tpot_s")
                  else None)
        shown = [v for v in shares if v is not None]
        binding = shares.index(max(shown)) if shown else None
        rows.append({"label": explain.short_label(L, o), "shares": shares,
                     "binds": series[binding] if binding is not None else "–",
                     "bound": o.speed.bound, "row": charts.BindRow(
                         explain.short_label(L, o), shares, i == 0)})
    svg = charts.binds_chart(
        [r["row"] for r in rows], series,
        title=g("What binds each option"),
        desc=g("For each GPU, the share it uses of each limit at the asked request rate: the "
               "KV cache’s room for sequences, the throughput of a replica, and the latency "
               "targets. The longest bar binds; past 100 % a limit is missed."),
        fmt=lambda v: L.percent(v), limit_label=g("share of the limit used"))
    return {"svg": svg, "series": series, "rows": rows}


# ------------------------------------------------------------------ VRAM selector

@router.get("/memory", response_class=HTMLResponse)
@cached
def memory_page(request: Request) -> HTMLResponse:
    return _memory(request, _params(request))


_PASTE_JSON = Text("web.paste.json", "the pasted config.json is not valid JSON (line {line}, "
                   "column {column}: {why})")
_PASTE_OBJECT = Text("web.paste.object", "the pasted config.json must be a JSON object")


@router.post("/memory", response_class=HTMLResponse)
async def memory_post(request: Request) -> HTMLResponse:
    form = await request.form()
    params: dict[str, Any] = {k: v for k, v in form.items() if isinstance(v, str)}
    config_text = str(params.pop("config", "") or "").strip()
    config = None
    if config_text:
        from whichgpu.models.local_file import parse_json

        try:  # strict JSON, bounded nesting (a deeply nested paste is an error, not a crash)
            config = parse_json(config_text, "the pasted config.json")
        except InputError as exc:
            bad = exc.__cause__
            text = (_PASTE_JSON(line=bad.lineno, column=bad.colno, why=json_reason(bad.msg))
                    if isinstance(bad, json.JSONDecodeError) else said(exc))
            return _memory(request, params, error=text, config_text=config_text)
        if not isinstance(config, dict):
            return _memory(request, params, error=_PASTE_OBJECT(), config_text=config_text)
    return await _compute(request, _memory, request, params, None, config, config_text,
                          question=repr(sorted(params.items())) + config_text)


def _memory(request: Request, p: dict[str, Any], error: str | None = None,
            config: dict | None = None, config_text: str = "") -> HTMLResponse:
    _begin(request)
    from whichgpu.models import quant_names

    ctx: dict[str, Any] = {"page": "memory", "form": p, "config_text": config_text,
                           "quants": quant_names(), **_common()}
    if error is None and (p.get("model") or config is not None or p.get("params")):
        model = for_web(r.Memory, body=True) if config else r.Memory
        q, error = read(model, {**p, **({"config": config} if config else {})})
        answer = None
        if q is not None:
            answer, error = attempt(s.memory, q)
        if answer is not None and getattr(answer, "rl", None) is not None:  # grpo, ppo
            ctx.update(rl=answer.rl, q=q, cli=None if config else command_line(q))
            answer = None
        if answer is not None and hasattr(answer, "result"):  # several different cards
            ctx.update(mixed=answer.result, mixed_model=answer.workload.model.name, q=q)
        elif answer is not None:
            report = answer.report
            ctx.update(report=report, q=q, bar=_memory_bar(report),
                       cli=None if config else command_line(q),
                       card=None if config else attempt(s.card_speed, q)[0])
    return render(request, "memory.html", ctx, status_of(error) if error else 200) \
        if not error else render(request, "memory.html", {**ctx, "error": error}, 422)


def _memory_bar(report) -> Markup:
    from whichgpu.catalog.gpus import get_gpu

    L = _L()
    e = report.estimate
    segs = [charts.Segment(t.name, L.gettext(explain.TERMS.get(t.name, t.name)), t.bytes / 1e9)
            for t in e.terms]
    total = e.total_bytes / 1e9
    marks: list[tuple[str, float]] = []
    for gid in MARK_GPUS:  # the capacities up to the first one that holds it
        usable = get_gpu(gid).usable_memory_bytes / 1e9
        if marks and (marks[-1][1] >= total or usable > 3 * total):
            break
        marks.append((f"{gid} ({L.gb(usable * 1e9, 0)})", usable))
    return charts.stacked_bar(
        segs, title=L.gettext("Memory per GPU by term"),
        desc=L.gettext("Total %(total)s per GPU; vertical lines mark what some GPUs can use.",
                       total=L.gb(e.total_bytes)),
        fmt=lambda v: L.gb(v * 1e9), marks=marks)


# ------------------------------------------------------------------ GPU catalog

@router.get("/gpus", response_class=HTMLResponse)
@cached
def gpus_page(request: Request) -> HTMLResponse:
    _begin(request)
    from whichgpu.cost.per_tflop import SORT_KEYS, precision_choices

    p = _params(request)
    q, error = read(r.Gpus, p)
    result = None
    if q is not None:
        result, error = attempt(s.gpus, q)
    return render(request, "gpus.html", {
        "page": "gpus", "form": p, "q": q, "result": result, "error": error,
        "precisions": precision_choices(), "sorts": SORT_KEYS,
        "cli": command_line(q) if q else None,
        "sort_url": lambda key: _with_query(request, sort=key), **_common()},
        status_of(error))


@router.get("/gpus/{gpu_id}", response_class=HTMLResponse)
@cached
def gpu_page(request: Request, gpu_id: str) -> HTMLResponse:
    from whichgpu.catalog.gpus import PRECISIONS, default_catalog

    lang = getattr(request.state, "lang", "en")
    q, error = read(r.Gpu, {"gpu": gpu_id[:200], "lang": lang})
    result = None
    if q is not None:
        result, error = attempt(s.gpu, q)
    if result is None:
        return error_page(request, error, 422 if error else 404)
    return render(request, "gpu.html", {
        "page": "gpus", "r": result, "g": result.gpu, "catalog": default_catalog(),
        "precisions": PRECISIONS, "data": result.to_json(),
        "cli": f"whichgpu gpu {result.gpu.id}" + (" --lang fr" if lang == "fr" else "")})


# ------------------------------------------------------------------ what runs on my card

@router.get("/fits", response_class=HTMLResponse)
@cached
def fits_page(request: Request) -> HTMLResponse:
    """``whichgpu fits``: the models that run on a card (by its catalog id, its memory or
    its spec), each with its best weight format, longest context and speed; with system
    RAM, the ones llama.cpp runs by keeping experts or layers there."""
    _begin(request)
    p = _params(request)
    ctx: dict[str, Any] = {"page": "fits", "form": p, **_common()}
    if not (p.get("gpu") or p.get("gpu_spec")):
        return render(request, "fits.html", ctx)
    q, error = read(r.Fits, p)
    result = None
    if q is not None:
        result, error = attempt(s.fits, q)
    ctx.update(q=q, result=result, error=error,
               cli=command_line(q) if result is not None else None,
               api="/api/v1/fits?" + urlencode(
                   [(k, v) for k, v in q.model_dump(exclude_defaults=True).items()
                    if v is not None and not isinstance(v, list)]) if q else None)
    return render(request, "fits.html", ctx, status_of(error))


# ------------------------------------------------------------------ cost per task

@router.get("/cost", response_class=HTMLResponse)
@cached
def cost_page(request: Request) -> HTMLResponse:
    """One job on a few GPUs: time and cost as ranges (S25)."""
    _begin(request)
    p = _params(request)
    chosen = request.query_params.getlist("gpu") or list(ARTICLE_CARDS)
    form = {"model": "flux.1-dev", "task": "image", "quant": "fp8", "amount": "1000",
            "prices": "vramfarm-2026-11", **{k: v for k, v in p.items() if v is not None}}
    unit = explain.unit_for(form["task"], p.get("unit"))
    form["unit"] = unit
    ctx: dict[str, Any] = {"page": "cost", "form": form, "chosen": chosen, "unit": unit,
                           "task": form["task"], **_common()}
    params = {**_work(form, unit), "only": ",".join(chosen[:40]), "top": "0"}
    q, error = read(r.Recommend, params)
    if q is not None and q.task.is_rl:
        error = _RL_ELSEWHERE(task=str(q.task))
    result = None
    if q is not None and error is None:
        result, error = attempt(s.recommend, q)
    if result is not None:
        rows = _per_gpu(result.rec, chosen)
        ctx.update(rows=rows, charts_=_cost_charts(rows, result.rec.currency),
                   cli=command_line(q, skip=("top",)))
    ctx.update(q=q, result=result, error=error, profile=_profile_used(q, result))
    return render(request, "cost.html", ctx, status_of(error))


def _per_gpu(rec, chosen: list[str]) -> list[dict[str, Any]]:
    """The cheapest configuration of each chosen GPU, or why it has none."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for o in rec.options:
        if o.gpu.id in seen:
            continue
        seen.add(o.gpu.id)
        rows.append({"gpu": o.gpu, "option": o, "exclusion": None})
    for e in rec.excluded:
        if e.gpu.id not in seen:
            seen.add(e.gpu.id)
            rows.append({"gpu": e.gpu, "option": None, "exclusion": e})
    return rows


def _cost_charts(rows, currency: str) -> list[Markup]:
    L = _L()
    g = L.gettext
    opts = [r["option"] for r in rows if r["option"] is not None and r["option"].time_s]
    if not opts:
        return []
    time_rows = [charts.RangeRow(explain.short_label(L, o), o.time_s.low / 3600,
                                 o.time_s.typical / 3600, o.time_s.high / 3600, i == 0)
                 for i, o in enumerate(opts)]
    cost_rows = [charts.RangeRow(explain.short_label(L, o), o.cost.low.amount,
                                 o.cost.typical.amount, o.cost.high.amount, i == 0)
                 for i, o in enumerate(opts)]
    return [
        charts.range_bars(time_rows, title=g("Time for the job"),
                          desc=g("Low to high estimate per GPU; the mark is the typical value."),
                          fmt=lambda h: L.duration(h * 3600), axis_label=g("time")),
        charts.range_bars(cost_rows, title=g("Cost of the job"),
                          desc=g("Low to high estimate per GPU; the mark is the typical value."),
                          fmt=lambda v: L.money({"amount": v, "currency": currency}),
                          axis_label=g("cost (%(currency)s)", currency=currency)),
    ]


# ------------------------------------------------------------------ rent vs buy

@router.get("/rent-or-buy", response_class=HTMLResponse)
@cached
def rent_page(request: Request) -> HTMLResponse:
    _begin(request)
    p = _params(request)
    # the page opens on the H100 at the market prices, as every answer (issue 26); the
    # articles' offer sets only when chosen
    params = {"gpu": "h100-sxm", **{k: v for k, v in p.items() if v is not None}}
    if params.get("utilization") and params.get("hours_per_month"):
        params.pop("utilization")  # the form has both; hours per month wins
    q, error = read(r.Tco, params)
    result = None
    if q is not None:
        result, error = attempt(s.tco, q)
    ctx: dict[str, Any] = {"page": "rent", "form": params, "q": q, "result": result,
                           "error": error, **_common()}
    if result is not None:
        ctx.update(chart=_rent_chart(result), cli=command_line(q, extra=("--curve",)))
    return render(request, "rent.html", ctx, status_of(error))


def _rent_chart(result) -> Markup:
    L = _L()
    g = L.gettext
    o = result.ownership
    cur = o.currency
    pts = o.curve()
    own = [(p.month, p.own.amount) for p in pts]
    rent = [(p.month, p.rent.amount) for p in pts if p.rent is not None]
    series = [charts.Series(g("Owning (cumulative)"), "own", own)]
    if rent:
        series.insert(0, charts.Series(g("Renting (cumulative)"), "rent", rent))
    markers = []
    m = o.break_even_months()
    if m is not None and math.isfinite(m) and m <= pts[-1].month and o.rent_price:
        markers.append(charts.Marker(m, (o.rent_price * o.hours_used_per_month * m).amount,
                                     g("break-even: %(months)s", months=explain.months_text(L,
                                                                                        m))))
    return charts.line_chart(
        series, title=g("Cumulative cost of renting vs owning"),
        desc=g("Money spent month by month; owning starts with the purchase, renting with "
               "nothing. Where the lines cross, owning has paid back."),
        x_label=g("months"), y_label=g("cumulative cost (%(currency)s)", currency=cur),
        fx=lambda x: L.number(x), fy=lambda v: L.money({"amount": v, "currency": cur}, 0),
        markers=markers)


# ------------------------------------------------------------------ prices

@router.get("/prices", response_class=HTMLResponse)
@cached
def prices_page(request: Request) -> HTMLResponse:
    _begin(request)
    p = _params(request)
    params = dict(p)
    pricing = p.get("pricing")
    if pricing in ("spot", "on_demand"):
        params[pricing] = "on"
    q, error = read(r.PricesList, {**params, "limit": p.get("limit") or "100"})
    latest = history = everything = None
    if q is not None:
        latest, error = attempt(s.prices_latest, q)
    if error is None and q is not None:  # the summary counts every offer, not the rows shown
        everything, error = attempt(s.prices_latest, q.model_copy(update={"limit": 0}))
    if error is None and p.get("gpu"):
        hq, error = read(r.PricesHistory, {"gpu": p["gpu"], "feed": p.get("feed")})
        if hq is not None:
            history, error = attempt(s.prices_history, hq)
    summary = price_views.summarise(everything.offers) if everything else []
    return render(request, "prices.html", {
        "page": "prices", "form": p, "q": q, "latest": latest, "history": history,
        "error": error,
        "summary": summary, "summary_charts": price_views.summary_charts(summary, _L()),
        "history_views": price_views.history_views(history.points, _L()) if history else [],
        "cli": command_line(q) if q else None, "writes": _writes(), **_common()},
        status_of(error))


def _writes() -> str:
    """Whether this server takes price writes (web/writes.py): 'token' or 'off'."""
    from whichgpu.web.writes import writes

    return writes().value
