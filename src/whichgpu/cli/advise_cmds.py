"""``whichgpu recommend`` (the cheapest configuration that can run a job) and ``checklist``."""

from __future__ import annotations

import sys

import typer

from whichgpu.cli import workload_opts as o
from whichgpu.cli.common import console, emit_json


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend)
    app.command("checklist")(checklist)


def _offers(prices: str | None, currency: str | None, rate: list[str], max_age: float | None,
            gpus=None):
    from whichgpu.advise.build import priced_offers

    return priced_offers(prices, currency, rate, max_age, gpus)


def recommend(
    model: o.ModelArg, task: o.Task = "inference", quant: o.Quant = None,
    kv_dtype: o.KvDtype = "f16", context: o.Context = None, batch: o.Batch = 1,
    engine: o.Engine = None, prompt_tokens: o.PromptTokens = None,
    output_tokens: o.OutputTokens = None, optimizer: o.Optimizer = None,
    gradient_checkpointing: o.Checkpointing = None, lora_rank: o.LoraRank = None,
    lora_targets: o.LoraTargets = None, resolution: o.Resolution = None,
    frames: o.Frames = None,
    steps_per_image: int | None = typer.Option(None, "--sampling-steps",
                                               help="Diffusion steps per image or video."),
    cfg: o.Cfg = None,
    offload: o.Offload = "none", vae_tiling: o.VaeTiling = False, params: o.Params = None,
    framework: o.Framework = None, activation_offloading: o.ActivationOffloading = None,
    loss: o.Loss = None, fp8_training: o.Fp8Training = False,
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
    requests_per_s: str | None = typer.Option(
        None, "--requests-per-s", help="Serving: requests per second to size for (20, "
                                       "1200/min); with --prompt-tokens/--output-tokens."),
    ttft: str | None = typer.Option(None, "--ttft", help="Serving: mean time to first token "
                                                         "target, e.g. 2s or 500ms."),
    tpot: str | None = typer.Option(None, "--tpot", help="Serving: mean time per output token "
                                                         "target, e.g. 50ms."),
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
    spot: bool = typer.Option(False, "--spot", help="Price spot/interruptible offers too, by "
                                                    "their expected cost with interruptions."),
    checkpoint_every: str | None = typer.Option(
        None, "--checkpoint-every", help="Training on spot: checkpoint interval (default 30m; "
                                         "'none': no checkpoints)."),
    export: str | None = typer.Option(
        None, "--export", help="Print the chosen option as a launcher task file: skypilot or "
                               "dstack (YAML on stdout; with --json in the 'export' field)."),
    export_option: int | None = typer.Option(
        None, "--export-option", help="Which ranked option --export writes (default: the best "
                                      "one the launcher can launch)."),
    top: int = typer.Option(10, "--top", help="Options to show."),
    max_gpus: int | None = typer.Option(None, "--max-gpus",
                                        help="At most this many GPUs (1: single cards)."),
    only: str | None = typer.Option(
        None, "--only", metavar="GPU[,GPU...]",
        help="Compare only these GPUs (comma-separated catalog ids or names, e.g. "
             "rtx-4090,a100,h100); the API's 'only'. Default: the whole catalog."),
    calibration: str | None = typer.Option(None, "--calibration",
                                           help="Calibration profile (file or 'default')."),
    gpu: str | None = typer.Option(
        None, "--gpu", help="Your own card, shown beside the rentals as owned hardware: a "
                            "catalog id or its memory (12GB)."),
    gpu_spec: o.GpuSpec = None,
    count: int = typer.Option(1, "--count", help="How many of your cards (--gpu) you have: "
                                                 "every count up to it that the layout "
                                                 "allows is tried."),
    host_ram: o.HostRam = None, host_memory: o.HostMemory = None,
    host_bandwidth: o.HostBandwidth = None,
    as_json: o.Json = False,
) -> None:
    """The cheapest GPU configuration that can run a job, why, and what was excluded."""
    from whichgpu.advise.build import build_job, only_gpus
    from whichgpu.advise.recommend import recommend as run
    from whichgpu.cli.estimate_cmds import _load_profile

    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        lora_rank=lora_rank, lora_targets=lora_targets, resolution=resolution, frames=frames,
        steps=steps_per_image, cfg=cfg, offload=offload, vae_tiling=vae_tiling, params=params,
        framework=framework, activation_offloading=activation_offloading, loss=loss,
        fp8_training=fp8_training, host_ram=host_ram, host_memory=host_memory,
        host_bandwidth=host_bandwidth)
    job = build_job(
        w, tokens=tokens, images=images, videos=videos, steps=steps, train_tokens=train_tokens,
        users=users, tokens_per_s_each=tokens_per_s_each, tokens_per_day=tokens_per_day,
        concurrency=concurrency, requests_per_s=requests_per_s, ttft=ttft, tpot=tpot,
        objective=objective, deadline=deadline,
        max_price_per_hour=max_price_per_hour, budget=budget, currency=currency, spot=spot,
        checkpoint_every=checkpoint_every)
    if export is not None:
        from whichgpu.export import check_launcher

        check_launcher(export)
    elif export_option is not None:
        from whichgpu.errors import InputError

        raise InputError("--export-option needs --export skypilot or --export dstack")
    gpus = only_gpus(only)
    mine = o.resolve_card(gpu, gpu_spec)
    if mine is not None and mine.note:
        from whichgpu.cli.common import note

        note(mine.note)
    cur = job.currency
    selection, rates = _offers(prices, cur, rate, max_age, gpus)
    rec = run(job, list(selection.offers), rates=rates, profile=_load_profile(calibration),
              gpus=gpus, max_gpus=max_gpus, owned=mine.gpu if mine else None,
              owned_count=count)
    exported = None
    if export is not None:
        from whichgpu.export import export_option as make_export

        exported = make_export(rec, export, export_option, selection=selection,
                               command=_command_line(), rates=rates)
    if as_json:
        data = rec.to_json()
        data["options"] = data["options"][:top] if top else data["options"]
        data["prices"] = selection.to_json()
        if exported is not None:
            data["export"] = exported.to_json()
        emit_json(data)
        return
    if exported is not None:  # the task file alone on stdout, ready for the launcher
        sys.stdout.write(exported.text)
        return
    if rec.job.kind == "rate":  # serving for a request rate: replicas x TP, TTFT, TPOT
        from whichgpu.cli.serving_view import print_rate_recommendation

        print_rate_recommendation(rec, top)
        _print(rec, top, selection, table=False)
        return
    _print(rec, top, selection)


def _command_line() -> str:
    """The command as typed, for the export's header (the reproduce line)."""
    import shlex

    return " ".join(["whichgpu", *(shlex.quote(a) for a in sys.argv[1:])])


_RATE_HEADERS = {"output_tokens_per_s": "tok/s", "tokens_per_s": "tok/s",
                 "images_per_min": "img/min", "decode_tokens_per_s_per_sequence": "tok/s each",
                 "step_s": "s/step", "seconds_per_video": "s/video", "steps_per_s": "steps/s",
                 "videos_per_hour": "videos/h"}


def _number(value: float) -> str:
    """A rate or a small time for a table: '1,234', '12.3', '1.23', '0.0421'."""
    a = abs(value)
    if a >= 100:
        return f"{value:,.0f}"
    if a >= 10:
        return f"{value:.1f}"
    if a >= 1:
        return f"{value:.2f}"
    if a == 0:
        return "0"
    return f"{value:.3g}"


def _print(rec, top: int, selection, table: bool = True) -> None:
    from rich.markup import escape
    from rich.table import Table

    from whichgpu.units import format_duration_short as dur
    from whichgpu.units import format_money

    job = rec.job
    w = job.workload
    what = job.describe()
    shown = rec.options[:top] if top else rec.options
    title = escape(f"{w.model.name} - {w.task}, {w.quant_name}: {what} (ranked by "
                   f"{rec.ranking})")
    if shown and table:
        first = shown[0]
        rate_name = _RATE_HEADERS.get(first.rate_name, first.rate_name.replace("_", " "))
        unit = first.unit if rec.ranking.startswith("cost per ") and first.unit and \
            rec.ranking != "cost per hour" else None
        t = Table(title=title, title_justify="left", pad_edge=False)
        cost_head = f"per {unit}" if unit else "Cost"
        for col in ("#", "GPUs", "Price/h", "Time", cost_head, "Cost range", rate_name):
            t.add_column(col, justify="left" if col == "GPUs" else "right", no_wrap=col != "GPUs")
        for i, opt in enumerate(shown, start=1):
            time = "-" if opt.time_s is None else dur(opt.time_s.typical)
            money = opt.unit_cost if unit and opt.unit_cost is not None else opt.cost
            hourly = money is opt.cost and opt.time_s is None
            high = format_money(money.high)
            low, typical = format_money(money.low), format_money(money.typical)
            if money is opt.cost and opt.spot_risk is not None:  # spot: its expected cost
                from whichgpu.advise import spot_risk as sr

                money = sr.expected_cost(opt.spot_risk) or money
                low, typical, high = (sr.cost_text(opt.spot_risk, c)
                                      for c in ("low", "typical", "high"))
                seconds = sr.expected_seconds(opt.spot_risk)
                time = dur(seconds) if seconds is not None else time
            cost = typical + ("/h" if hourly else "")
            crng = ("" if money.low == money.high else f"{low}-{high}")
            mark = ("=" if opt.near_tie else "") + ("*" if opt.pareto else "")
            label = escape(opt.label) + (" [yellow]spot[/yellow]" if opt.offer.spot else "")
            if opt.replicas > 1:
                label += f" [dim]({opt.replicas} replicas x {opt.count})[/dim]"
            elif opt.gpus > 1 and _layout_clash(opt, shown):
                label += f" [dim]({escape(opt.layout)})[/dim]"
            t.add_row(f"{i}{mark}", label, format_money(opt.price_per_hour), time, cost,
                      f"[dim]{crng}[/dim]", _number(opt.rate.typical))
        console.print(t)
        if len(rec.options) > len(shown):
            console.print(f"[dim]... and {len(rec.options) - len(shown)} more options "
                          "(--top 0 shows all; --json lists all)[/dim]")
        legend = ["* on the cost/time Pareto front (nothing else is both cheaper and faster)"]
        if any(o.near_tie for o in shown):
            legend.append("= within 5 % of the first: a near-tie")
        console.print("[dim]" + "; ".join(legend) + "[/dim]")
    elif table:
        console.print(f"[bold]{title}[/bold]")
    console.print("[bold]Why[/bold]")
    for line in rec.explanation:
        console.print(f"  {escape(line)}")
    if rec.what_would_change:
        console.print("[bold]What would change the answer[/bold]")
        for line in rec.what_would_change:
            console.print(f"  - {escape(line)}")
    _print_owned(rec.owned)
    listed = _excluded_per_gpu(rec.excluded)
    if listed:
        console.print("[bold]Excluded[/bold] [dim](per GPU, the size nearest to working; "
                      "--json lists every size; GPUs with no offer are named above)[/dim]")
        for e in listed[:12]:
            where = e.gpu.id if e.count == 1 else f"{e.count} x {e.gpu.id}"
            tail = (f" ({e.works_with} x {e.gpu.id} can: see the options)"
                    if e.works_with else "")
            if not e.has_offer:
                tail += " (no offer in this price list either)"
            console.print(f"  - {escape(where)}: {escape(e.reason)}{escape(tail)}")
        if len(listed) > 12:
            console.print(f"  [dim]... and {len(listed) - 12} more (--json lists all)[/dim]")
    from whichgpu.cli.prices_cmds import print_price_origin

    print_price_origin(selection)


def _print_owned(owned) -> None:
    """Your own card (--gpu/--gpu-spec) at each count: owned, so no rental price."""
    from rich.markup import escape

    from whichgpu.units import format_duration_short as dur
    from whichgpu.units import format_money

    if not owned:
        return
    console.print(f"[bold]Your card[/bold] [dim]({escape(owned[0].gpu.name)}, owned: no "
                  "rental price)[/dim]")
    for own in owned:
        where = own.gpu.id if own.count == 1 else f"{own.count} x {own.gpu.id}"
        line = f"  - {escape(where)}: {escape(own.reason)}"
        if own.option is not None:
            opt = own.option
            rate = _RATE_HEADERS.get(opt.rate_name, opt.rate_name.replace("_", " "))
            line += f"; {_number(opt.rate.typical)} {rate}"
            if opt.time_s is not None:
                line += f", {dur(opt.time_s.typical)}"
            if own.cost_per_hour is not None:
                cost = opt.cost.typical
                line += (f", about {format_money(cost)}" if opt.time_s is not None else
                         f", about {format_money(own.cost_per_hour)}/h to own")
        elif own.fits and own.missing:
            line += f"; no speed without {', '.join(own.missing)} (--gpu-spec)"
        console.print(line)
    if owned[0].cost_note:
        console.print(f"    [dim]{escape(owned[0].cost_note)}[/dim]")


def _excluded_per_gpu(excluded) -> list:
    """One exclusion per GPU for people: a GPU that runs with more cards shows its largest
    failing size, another its nearest miss; memory and deadline misses first, no-offer last."""
    per: dict[str, object] = {}
    for e in excluded:
        if e.kind == "offer":
            continue
        cur = per.get(e.gpu.id)
        if cur is None or (e.works_with and e.count > cur.count) or \
                (not e.works_with and e.gap < cur.gap):
            per[e.gpu.id] = e
    order = {"memory": 0, "deadline": 1, "budget": 2, "price": 3, "speed": 4}
    return sorted(per.values(), key=lambda e: (not e.has_offer, e.works_with is None,
                                               order.get(e.kind, 9), e.gap))


def _layout_clash(opt, shown) -> bool:
    """Another shown option with the same GPU and GPU count but another layout."""
    return any(o is not opt and o.gpu.id == opt.gpu.id and o.gpus == opt.gpus
               and o.layout != opt.layout for o in shown)


def checklist(
    workload: str | None = typer.Option(None, "--workload",
                                        help="training, fine-tuning or inference."),
    model: str | None = typer.Option(None, "--model", help="Model size (7B) or name."),
    budget: str | None = typer.Option(None, "--budget-per-hour",
                                      help="Hourly budget, e.g. 1USD (or none)."),
    hours: str | None = typer.Option(None, "--hours-per-month", help="Hours of use a month."),
    horizon: str | None = typer.Option(None, "--horizon-months", help="Months needed."),
    prices: str | None = typer.Option(None, "--prices", help="Price source or offer file."),
    currency: str | None = typer.Option(None, "--currency", help="EUR, USD ..."),
    rate: list[str] = typer.Option([], "--rate", help="Exchange rate, EURUSD=1.08."),
    max_age: float | None = typer.Option(None, "--max-age", help="Days before prices are "
                                                                 "stale (30)."),
    only: str | None = typer.Option(
        None, "--only", metavar="GPU[,GPU...]",
        help="Consider only these GPUs (comma-separated catalog ids or names)."),
    as_json: o.Json = False,
) -> None:
    """The five questions of S13, answered with a GPU and rent-or-buy (asks what is missing)."""
    from whichgpu.advise.build import only_gpus
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
    gpus = only_gpus(only)
    selection, rates = _offers(prices, cur, rate, max_age, gpus)
    result = run_checklist(answers, list(selection.offers), currency=cur, rates=rates,
                           gpus=gpus)
    if as_json:
        data = result.to_json()
        data["prices"] = selection.to_json()
        emit_json(data)
        return
    _print_checklist(result)
    from whichgpu.cli.prices_cmds import print_price_origin

    print_price_origin(selection)


def _print_checklist(result) -> None:
    from rich.markup import escape

    from whichgpu.units import format_money

    a = result.answers
    rec = result.recommendation
    best = rec.best
    console.print("[bold]Your answers[/bold]")
    console.print(escape(
        f"  1. workload: {a.workload}   2. model: {a.model}   3. budget: "
        f"{format_money(a.budget_per_hour) + '/h' if a.budget_per_hour else 'none'}"
        f"   4. {a.hours_per_month:g} h/month   5. {a.horizon_months:g} months"))
    if best is None:
        console.print("[red]No GPU configuration fits these answers.[/red]")
        for line in rec.explanation + rec.what_would_change:
            console.print(f"  {escape(line)}")
    else:
        console.print(f"[bold]GPU:[/bold] {escape(best.label)} at "
                      f"{format_money(best.price_per_hour)}/h ({escape(result.task)}, "
                      f"{escape(result.quant)})")
        for line in rec.explanation[:3]:
            console.print(f"  {escape(line)}")
        if len(rec.explanation) > 3:
            console.print(f"  [dim]... and {len(rec.explanation) - 3} more reasons "
                          "(--json lists all)[/dim]")
        others = [o for o in rec.options[1:4]]
        if others:
            rest = len(rec.options) - 1 - len(others)
            console.print("  Then: " + escape("; ".join(
                f"{o.label} at {format_money(o.price_per_hour)}/h"
                + (f" ({format_money(o.unit_cost.typical)} per {o.unit})"
                   if o.unit_cost is not None and rec.ranking != "cost per hour" else "")
                for o in others)) + (f"; and {rest} more options" if rest > 0 else ""))
    if result.advice is not None:
        adv = result.advice
        verdict = "[green]rent[/green]" if adv.decision == "rent" else "[yellow]buy[/yellow]"
        console.print(f"[bold]Rent or buy:[/bold] {verdict} - over {a.horizon_months:g} months "
                      f"renting costs {format_money(adv.rent_cost)}, owning "
                      f"{format_money(adv.own_cost)}.")
        for r in adv.reasons:
            console.print(f"  - {escape(r)}")
    console.print("[bold]What the article's checklist says[/bold]")
    for r in result.article_rules:
        console.print(f"  - {escape(r)}")
    for n in result.notes:
        console.print(f"[dim]- {escape(n)}[/dim]")
