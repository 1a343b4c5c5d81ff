"""``whichgpu recommend`` (the cheapest configuration that can run a job) and ``checklist``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, show
from whichgpu.vocabulary import ExclusionKind, Ranking, WorkKind

if TYPE_CHECKING:
    from whichgpu.advise.options import Exclusion


def register(app: typer.Typer) -> None:
    bind(app, req.Recommend, recommend)
    bind(app, req.Checklist, checklist)


def recommend(q: req.Recommend) -> None:
    from whichgpu.answers.advice import recommend as answer

    show(answer(q, command_line=_command_line()), q.as_json, _print_recommendation)


def _print_recommendation(answer) -> None:
    if getattr(answer, "kind", None) == "rl":  # --task grpo|ppo: the RL ranking
        from whichgpu.cli.rl_view import print_rl_ranking

        print_rl_ranking(answer)
        return
    if answer.exported is not None:  # the task file alone on stdout, ready for the launcher
        sys.stdout.write(answer.exported.text)
        return
    rec, top = answer.rec, answer.top
    if rec.job.kind == WorkKind.RATE:  # serving for a request rate: replicas x TP, TTFT, TPOT
        from whichgpu.cli.serving_view import print_rate_recommendation

        print_rate_recommendation(rec, top)
        _print(rec, top, answer.selection, table=False)
    else:
        _print(rec, top, answer.selection)
    if answer.vs_api is not None:
        from whichgpu.cli.vs_api_view import print_vs_api

        print_vs_api(answer.vs_api)
    if answer.power_budget is not None:
        from whichgpu.cli.energy_view import print_power_budget

        print_power_budget(answer.power_budget)
    if answer.request.hours_per_month is not None:
        _print_rent_or_buy(answer)


def _print_rent_or_buy(answer) -> None:
    """--hours-per-month with --horizon-months: rent or buy the best option, and what the
    article's checklist says (as ``whichgpu checklist`` prints them)."""
    from rich.markup import escape

    from whichgpu.units import format_money

    q, adv = answer.request, answer.ownership_advice
    if adv is not None:
        verdict = "[green]rent[/green]" if adv.decision == "rent" else "[yellow]buy[/yellow]"
        console.print(f"[bold]Rent or buy {escape(adv.ownership.inputs.gpu)}:[/bold] {verdict} "
                      f"- over {q.horizon_months:g} months at {q.hours_per_month:g} h a month "
                      f"renting costs {format_money(adv.rent_cost)}, owning "
                      f"{format_money(adv.own_cost)}.")
        for r in adv.reasons:
            console.print(f"  - {escape(r)}")
    console.print("[bold]What the article's checklist says[/bold]")
    for r in answer.article_rules(q.hours_per_month, q.horizon_months):
        console.print(f"  - {escape(r)}")


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
    ranking = "" if "(ranked by" in str(what) else f" (ranked by {rec.ranking})"  # said once
    title = escape(f"{w.model.name} - {w.task}, {w.quant_name}: {what}{ranking}")
    if shown and table:
        first = shown[0]
        rate_name = _RATE_HEADERS.get(first.rate_name, first.rate_name.replace("_", " "))
        unit = first.unit if rec.ranked_by is Ranking.COST_PER_UNIT and first.unit else None
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
            m = opt.shape  # the machines rented, shortly (the JSON and --export say more)
            if m.machines > 1 and m.machines != opt.replicas:  # replicas: one machine each
                label += f" [dim]({m.machines} machines x {m.per_machine})[/dim]"
            elif m.paid > m.used:
                label += (f" [dim](on {m.per_machine}-GPU machines)[/dim]" if m.machines > 1
                          else f" [dim](of a {m.per_machine}-GPU machine)[/dim]")
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
    console.print(escape(str(rec.understood)))  # the work as understood (issue 26)
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
    if owned[0].cost_per_hour is not None:  # the engine's note names no command (the web's)
        console.print("    [dim]'whichgpu tco' takes every input of owning it[/dim]")


def _excluded_per_gpu(excluded) -> list:
    """One exclusion per GPU for people: a GPU that runs with more cards shows its largest
    failing size, another its nearest miss; memory and deadline misses first, no-offer last."""
    per: dict[str, Exclusion] = {}
    for e in excluded:
        if e.kind == ExclusionKind.OFFER:
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


def checklist(q: req.Checklist) -> None:
    from whichgpu.advise.checklist import QUESTIONS
    from whichgpu.answers.advice import checklist as answer
    from whichgpu.answers.advice import missing_answers

    missing = missing_answers(q)
    if missing and sys.stdin.isatty() and not q.as_json:  # ask what is missing
        asked = {name: typer.prompt(QUESTIONS[name]) for name in missing}
        q = q.model_copy(update=asked)
    show(answer(q), q.as_json, _print_checklist_answer)


def _print_checklist_answer(answer) -> None:
    _print_checklist(answer.result)
    from whichgpu.cli.prices_cmds import print_price_origin

    print_price_origin(answer.selection)


def _print_checklist(result) -> None:
    from rich.markup import escape

    from whichgpu.advise.explain import name as explain_name
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
        console.print(f"[bold]GPU:[/bold] {escape(str(explain_name(best)))} at "
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
                   if o.unit_cost is not None and rec.ranked_by is not Ranking.COST_PER_HOUR
                   else "")
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
