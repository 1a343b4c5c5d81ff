"""``whichgpu recommend`` (the cheapest configuration that can run a job) and ``checklist``."""

from __future__ import annotations

import sys

import typer

from whichgpu.cli import workload_opts as o
from whichgpu.cli.common import console, emit_json


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend)
    app.command("checklist")(checklist)


def _offers(prices: str | None, currency: str | None, rate: list[str], max_age: float | None):
    from whichgpu.advise.build import priced_offers

    return priced_offers(prices, currency, rate, max_age)


def recommend(
    model: o.ModelArg, task: o.Task = "inference", quant: o.Quant = None,
    kv_dtype: o.KvDtype = "f16", context: o.Context = None, batch: o.Batch = 1,
    engine: o.Engine = None, prompt_tokens: o.PromptTokens = None,
    output_tokens: o.OutputTokens = None, optimizer: o.Optimizer = "adamw",
    gradient_checkpointing: o.Checkpointing = None, lora_rank: o.LoraRank = 16,
    lora_targets: o.LoraTargets = "all-linear", resolution: o.Resolution = None,
    frames: o.Frames = None,
    steps_per_image: int | None = typer.Option(None, "--sampling-steps",
                                               help="Diffusion steps per image or video."),
    cfg: o.Cfg = None,
    offload: o.Offload = "none", params: o.Params = None,
    tokens: str | None = typer.Option(None, "--tokens", help="Tokens to generate, e.g. 1M."),
    images: str | None = typer.Option(None, "--images", help="Images to generate, e.g. 1000."),
    videos: str | None = typer.Option(None, "--videos", help="Videos to generate."),
    steps: str | None = typer.Option(None, "--steps", help="Training steps, e.g. 2000."),
    train_tokens: str | None = typer.Option(None, "--train-tokens",
                                            help="Training tokens, e.g. 2B."),
    users: int | None = typer.Option(None, "--users", help="Serving: concurrent users."),
    tokens_per_s_each: float | None = typer.Option(
        None, "--tokens-per-s-each", help="Serving: tokens/s each user reads."),
    tokens_per_day: str | None = typer.Option(None, "--tokens-per-day",
                                              help="Serving: a daily volume, e.g. 50M."),
    concurrency: int | None = typer.Option(
        None, "--concurrency", help="Sequences in flight for --tokens (default: as many as "
                                    "fit, up to 256)."),
    objective: str = typer.Option("cost", "--objective", help="cost or time."),
    deadline: str | None = typer.Option(None, "--deadline", help="e.g. 2h or 3d."),
    max_price_per_hour: str | None = typer.Option(None, "--max-price-per-hour",
                                                  help="e.g. 2EUR."),
    budget: str | None = typer.Option(None, "--budget", help="Total budget, e.g. 50EUR."),
    prices: str | None = typer.Option(None, "--prices", help="Price source or offer file."),
    currency: str | None = typer.Option(None, "--currency", help="EUR, USD ..."),
    rate: list[str] = typer.Option([], "--rate", help="Exchange rate, EURUSD=1.08."),
    max_age: float | None = typer.Option(None, "--max-age", help="Days before prices are "
                                                                 "stale (30)."),
    spot: bool = typer.Option(False, "--spot", help="Use spot/interruptible offers."),
    top: int = typer.Option(10, "--top", help="Options to show."),
    max_gpus: int | None = typer.Option(None, "--max-gpus",
                                        help="At most this many GPUs (1: single cards)."),
    calibration: str | None = typer.Option(None, "--calibration",
                                           help="Calibration profile (file or 'default')."),
    as_json: o.Json = False,
) -> None:
    """The cheapest GPU configuration that can run a job, why, and what was excluded."""
    from whichgpu.advise.build import build_job
    from whichgpu.advise.recommend import recommend as run
    from whichgpu.cli.estimate_cmds import _load_profile

    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        lora_rank=lora_rank, lora_targets=lora_targets, resolution=resolution, frames=frames,
        steps=steps_per_image, cfg=cfg, offload=offload, params=params)
    job = build_job(
        w, tokens=tokens, images=images, videos=videos, steps=steps, train_tokens=train_tokens,
        users=users, tokens_per_s_each=tokens_per_s_each, tokens_per_day=tokens_per_day,
        concurrency=concurrency, objective=objective, deadline=deadline,
        max_price_per_hour=max_price_per_hour, budget=budget, currency=currency, spot=spot)
    cur = job.currency
    selection, rates = _offers(prices, cur, rate, max_age)
    rec = run(job, list(selection.offers), rates=rates, profile=_load_profile(calibration),
              max_gpus=max_gpus)
    if as_json:
        data = rec.to_json()
        data["options"] = data["options"][:top] if top else data["options"]
        data["prices"] = selection.to_json()
        emit_json(data)
        return
    _print(rec, top, selection)


def _print(rec, top: int, selection) -> None:
    from rich.table import Table

    from whichgpu.units import format_duration_short as dur
    from whichgpu.units import format_money

    job = rec.job
    w = job.workload
    what = job.describe()
    t = Table(title=f"{w.model.name} - {w.task}, {w.quant_name}: {what} "
                    f"(objective: {job.objective})", title_justify="left", pad_edge=False)
    rate_name = rec.options[0].rate_name.replace("_per_", "/").replace("_", " ") \
        if rec.options else "rate"
    rate_name = {"output tokens/s": "tok/s", "images/min": "img/min", "tokens/s": "tok/s",
                 "decode tokens/s/sequence": "tok/s each"}.get(rate_name, rate_name)
    for col in ("#", "GPUs", "Price/h", "Time", "Cost", "Cost range", rate_name):
        t.add_column(col, justify="left" if col == "GPUs" else "right", no_wrap=True)
    for i, opt in enumerate(rec.options[:top], start=1):
        time = "-" if opt.time_s is None else dur(opt.time_s.typical)
        cost = format_money(opt.cost.typical) + ("/h" if job.per_hour else "")
        crng = ("" if job.per_hour else
                f"{format_money(opt.cost.low)}-{format_money(opt.cost.high)}")
        mark = "=" if opt.near_tie else ""
        rate = opt.rate.typical
        t.add_row(f"{i}{mark}", opt.label, format_money(opt.price_per_hour), time, cost,
                  f"[dim]{crng}[/dim]", f"{rate:,.0f}" if rate >= 100 else f"{rate:,.1f}")
    console.print(t)
    if any(o.near_tie for o in rec.options[:top]):
        console.print("[dim]= within 5 % of the first: a near-tie[/dim]")
    console.print("[bold]Why[/bold]")
    for line in rec.explanation:
        console.print(f"  {line}")
    if rec.what_would_change:
        console.print("[bold]What would change the answer[/bold]")
        for line in rec.what_would_change:
            console.print(f"  - {line}")
    if rec.excluded:
        console.print("[bold]Excluded[/bold]")
        for e in sorted(rec.excluded, key=lambda e: (e.kind != "memory", e.gpu.id))[:12]:
            console.print(f"  - {e.gpu.id}: {e.reason}")
        if len(rec.excluded) > 12:
            console.print(f"  [dim]... and {len(rec.excluded) - 12} more (--json lists all)"
                          "[/dim]")
    from whichgpu.cli.prices_cmds import print_price_origin

    print_price_origin(selection)


def checklist(
    workload: str | None = typer.Option(None, "--workload",
                                        help="training, fine-tuning or inference."),
    model: str | None = typer.Option(None, "--model", help="Model size (7B) or name."),
    budget: str | None = typer.Option(None, "--budget-per-hour",
                                      help="Hourly budget, e.g. 1USD (or none)."),
    hours: str | None = typer.Option(None, "--hours-per-month", help="Hours of use a month."),
    horizon: str | None = typer.Option(None, "--horizon-months", help="Months needed."),
    prices: str | None = typer.Option(None, "--prices", help="Price source or offer file."),
    max_age: float | None = typer.Option(None, "--max-age", help="Days after which prices "
                                         "are flagged as stale (30)."),
    currency: str | None = typer.Option(None, "--currency", help="EUR, USD ..."),
    rate: list[str] = typer.Option([], "--rate", help="Exchange rate, EURUSD=1.08."),
    as_json: o.Json = False,
) -> None:
    """The five questions of S13, answered with a GPU and rent-or-buy (asks what is missing)."""
    from whichgpu.advise.checklist import QUESTIONS, parse_answers, run_checklist
    from whichgpu.errors import InputError
    from whichgpu.units import check_currency

    given = {"workload": workload, "model": model, "budget": budget, "hours": hours,
             "horizon": horizon}
    missing = [k for k, v in given.items() if v is None]
    if missing:
        if not sys.stdin.isatty() or as_json:
            flags = {"workload": "--workload", "model": "--model", "budget": "--budget-per-hour",
                     "hours": "--hours-per-month", "horizon": "--horizon-months"}
            raise InputError("answer every question for a script: missing "
                             + ", ".join(flags[k] for k in missing))
        for key, question in QUESTIONS:
            if given[key] is None:
                given[key] = typer.prompt(question)
    cur = check_currency(currency) if currency else None
    answers = parse_answers(given["workload"], given["model"], given["budget"],
                            given["hours"], given["horizon"], currency=cur or "USD")
    selection, rates = _offers(prices, cur, rate, max_age)
    result = run_checklist(answers, list(selection.offers), currency=cur, rates=rates)
    if as_json:
        data = result.to_json()
        data["prices"] = selection.to_json()
        emit_json(data)
        return
    _print_checklist(result)


def _print_checklist(result) -> None:
    from whichgpu.units import format_money

    a = result.answers
    best = result.recommendation.best
    console.print("[bold]Your answers[/bold]")
    console.print(f"  1. workload: {a.workload}   2. model: {a.model}   3. budget: "
                  f"{format_money(a.budget_per_hour) + '/h' if a.budget_per_hour else 'none'}"
                  f"   4. {a.hours_per_month:g} h/month   5. {a.horizon_months:g} months")
    if best is None:
        console.print("[red]No GPU configuration fits these answers.[/red]")
        for line in result.recommendation.explanation + result.recommendation.what_would_change:
            console.print(f"  {line}")
    else:
        console.print(f"[bold]GPU:[/bold] {best.label} at {format_money(best.price_per_hour)}/h"
                      f" ({result.task}, {result.quant})")
        for line in result.recommendation.explanation[:2]:
            console.print(f"  {line}")
    if result.advice is not None:
        adv = result.advice
        verdict = "[green]rent[/green]" if adv.decision == "rent" else "[yellow]buy[/yellow]"
        console.print(f"[bold]Rent or buy:[/bold] {verdict} - over {a.horizon_months:g} months "
                      f"renting costs {format_money(adv.rent_cost)}, owning "
                      f"{format_money(adv.own_cost)}.")
        for r in adv.reasons:
            console.print(f"  - {r}")
    console.print("[bold]What the article's checklist says[/bold]")
    for r in result.article_rules:
        console.print(f"  - {r}")
    for n in result.notes:
        console.print(f"[dim]- {n}[/dim]")
