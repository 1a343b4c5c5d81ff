"""``whichgpu memory`` (the VRAM selector), ``whichgpu speed`` and ``whichgpu validate``."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind, binding
from whichgpu.cli.common import console, show

validate_app = typer.Typer(help="Check the estimates against published measurements.",
                           no_args_is_help=True)


def register(app: typer.Typer) -> None:
    bind(app, req.Memory, memory)
    bind(app, req.Speed, speed)
    # once per process (see prices_cmds.register), and only where validate is bound
    if binding("validate") and not validate_app.registered_commands:
        bind(validate_app, req.ValidateMemory, validate_memory)
        bind(validate_app, req.ValidateSpeed, validate_speed)
        bind(validate_app, req.ValidateFits, validate_fits)
        bind(validate_app, req.ValidateServing, validate_serving)
        bind(validate_app, req.ValidateQuestions, validate_questions)
    app.add_typer(validate_app, name="validate")


def memory(q: req.Memory) -> None:
    from whichgpu.answers.estimates import memory as answer

    show(answer(q), q.as_json, _print_memory_answer)


def _print_mixed(answer) -> None:
    from whichgpu.cli.mixed_view import print_mixed

    print_mixed(answer)


def _print_memory_answer(a) -> None:
    if hasattr(a, "result"):  # a list of different cards
        _print_mixed(a)
        return
    if a.rl is not None:
        from whichgpu.cli.rl_view import print_rl

        print_rl(a.rl)
        return
    _print_memory(a.report)
    if a.multi_lora is not None:
        from whichgpu.cli.rl_view import print_multi_lora

        print_multi_lora(a.multi_lora)


def _print_memory(report) -> None:
    from rich.table import Table
    from rich.text import Text

    from whichgpu.listing import join_some, more_line
    from whichgpu.units import GB, GiB, format_bytes, format_bytes_both

    e = report.estimate
    title = (f"{report.model_name} - {e.task}, {e.quant}, engine {e.engine}"
             + (f", per GPU of {e.gpus}" if e.gpus > 1 else ""))
    t = Table(title=Text(title), title_justify="left", pad_edge=False)  # names kept literal
    t.add_column("Term")
    t.add_column("GB", justify="right")
    t.add_column("GiB", justify="right")
    t.add_column("How", overflow="fold")
    for term in e.terms:
        how = term.formula + (f"\n[dim]{term.assumption}[/dim]" if term.assumption else "")
        t.add_row(term.name, f"{term.bytes / GB:,.2f}", f"{term.bytes / GiB:,.2f}", how)
    t.add_row("[bold]total[/bold]", f"[bold]{e.total_bytes / GB:,.2f}[/bold]",
              f"[bold]{e.total_bytes / GiB:,.2f}[/bold]", "peak per GPU")
    console.print(t)
    conf = e.confidence()
    console.print(f"Confidence {conf.label}: {conf.why}.")
    console.print(f"[dim]Rule of thumb (S15): {report.rule.formula}; this estimate: "
                  f"{format_bytes(e.total_bytes)}; {report.rule.explanation}.[/dim]")
    for n in report.notes:
        console.print(f"[yellow]note:[/yellow] {n}")
    _print_host(e)
    for w in e.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
    for a in e.assumptions:
        console.print(f"[dim]- {a}[/dim]")
    if report.target is not None:
        f = report.target
        where = f.gpu.id if f.count == 1 else f"{f.count} x {f.gpu.id}"
        verdict = {"fits": "[green]fits[/green]", "borderline": "[yellow]borderline[/yellow]",
                   "does not fit": "[red]does not fit[/red]"}[f.verdict]
        edge = ""
        if f.verdict == "borderline":
            edge = (f" (within the estimate's {f.band:.0%} uncertainty of the card's usable "
                    f"memory: it {'may not fit' if f.fits else 'may fit'})")
        host = "" if f.host_ok else " (host RAM too small for what stays on the CPU)"
        alone = " on the GPU alone" if report.offload and not f.fits else ""
        console.print(f"On {where}: {verdict}{alone}{edge}{host}, headroom "
                      f"{format_bytes_both(f.headroom_bytes)} of "
                      f"{format_bytes(f.gpu.usable_memory_bytes)} usable.")
        _print_offload(report)
    cap = report.capacity
    if cap:
        if cap.get("with_offload"):
            where += " with that offload"
        console.print(f"Capacity on {where}: {cap['max_concurrent_sequences']:,} concurrent "
                      f"sequences of {cap['context']:,} tokens; at {cap['batch']} sequence(s) "
                      f"the longest context is {cap['max_context_tokens']:,} tokens.")
    if report.fits:
        ft = Table(title="Fits on (fewest GPUs of each kind)", title_justify="left",
                   pad_edge=False)
        for col in ("GPU", "Count", "Layout", "Usable GB", "Headroom GB"):
            ft.add_column(col, justify="right" if col != "GPU" and col != "Layout" else "left")
        for f in report.fits[:14]:
            ft.add_row(f.gpu.id, str(f.count), f.layout,
                       f"{f.gpu.usable_memory_bytes / GB:,.1f}", f"{f.headroom_bytes / GB:,.1f}")
        console.print(ft)
        more = more_line(len(report.fits), 14, "more GPUs hold it", "--json lists all")
        if more:
            console.print(f"[dim]{more}[/dim]")
    else:
        console.print("[red]No catalog GPU holds it, even 8 of them.[/red]")
    if report.changes:
        console.print("[bold]What would make it fit[/bold]")
        for c in report.changes[:8]:
            on = join_some(c.fits_on, 4) if c.fits_on else "still too big"
            console.print(f"  - {c.description}: {format_bytes(c.total_bytes)} -> {on}")
        more = more_line(len(report.changes), 8, "more changes", "--json lists all")
        if more:
            console.print(f"  [dim]{more}[/dim]")


def _print_host(e) -> None:
    """What a llama.cpp job keeps in host RAM, when that is more than the token embedding."""
    from whichgpu.units import GB

    if not e.host_terms:
        return
    placement = e.details.get("placement") or {}
    if not placement.get("offloaded"):
        console.print(f"[dim]Host RAM: {e.host_total_bytes / GB:,.2f} GB (the token embedding, "
                      "which llama.cpp keeps on the CPU).[/dim]")
        return
    host = e.host
    parts = "; ".join(f"{t.name.replace('_', ' ')} {t.bytes / GB:,.2f} GB" for t in e.host_terms)
    room = (f" of {host.usable_ram_bytes / GB:,.0f} GB free ({host.describe()})"
            if host is not None else "")
    state = "fits" if e.host_fits else "[red]does not fit[/red]"
    console.print(f"Host RAM: {e.host_total_bytes / GB:,.1f} GB{room}: {state} ({parts}).")


def _print_offload(report) -> None:
    plan = report.offload
    if plan:
        speed = plan.get("decode_tokens_per_s_per_sequence")
        pre = plan.get("prefill_tokens_per_s")
        rate = (f", about {speed['typical']:,.0f} tokens/s ({speed['low']:,.0f}-"
                f"{speed['high']:,.0f}), prefill {pre['typical']:,.0f} tokens/s"
                if speed and pre else "")
        ok = "" if plan["host_fits"] else " [red](host RAM too small)[/red]"
        console.print(f"[bold]With llama.cpp offload:[/bold] {plan['description']}{rate}{ok}.")
    elif report.no_offload:
        console.print(f"[dim]No offload: {report.no_offload}.[/dim]")


def speed(q: req.Speed) -> None:
    from whichgpu.answers.estimates import speed as answer

    show(answer(q), q.as_json, _print_speed_answer)


def _print_speed_answer(result) -> None:
    if hasattr(result, "result"):  # a list of different cards
        _print_mixed(result)
        return
    if result.rl is not None:
        from whichgpu.cli.rl_view import print_rl

        print_rl(result.rl)
        return
    if result.saturation is not None and "traffic" in result.saturation:  # issue 28
        from whichgpu.cli.serving_view import print_traffic

        print_traffic(result.saturation)
        return
    if result.saturation is not None:
        from whichgpu.cli.serving_view import print_max_throughput

        print_max_throughput(result.saturation)
        return
    from rich.markup import escape

    answer = result.answer
    if answer.estimate is None:
        console.print(f"[red]{escape(str(answer.not_fit))}[/red]: no speed is given for a job "
                      "that does not fit. 'whichgpu memory' shows what would make it fit.")
        return
    _print_speed(answer.estimate, result.workload)
    if result.energy is not None:
        from whichgpu.cli.energy_view import print_energy

        print_energy(result.energy)


def _print_speed(est, w) -> None:
    from rich.table import Table
    from rich.text import Text

    from whichgpu.units import format_duration

    where = est.gpu if est.count == 1 else f"{est.count} x {est.gpu}"
    t = Table(title=Text(f"{w.model.name} on {where} - {est.task}, {est.precision} compute, "
                         f"{est.bound}-bound, confidence {est.confidence}"),
              title_justify="left", pad_edge=False)
    for col in ("Measure", "Low", "Typical", "High"):
        t.add_column(col, justify="left" if col == "Measure" else "right")
    for name, r in est.rates.items():
        t.add_row(name, f"{r.low:,.2f}", f"{r.typical:,.2f}", f"{r.high:,.2f}")
    for name, r in est.times.items():
        if name == "total_s":
            t.add_row("total time", format_duration(r.low), format_duration(r.typical),
                      format_duration(r.high))
        else:
            t.add_row(name, f"{r.low:,.3f}", f"{r.typical:,.3f}", f"{r.high:,.3f}")
    for name, v in est.scalars.items():
        if name in ("mfu", "mfu_assumed"):
            t.add_row(name, "", f"{v:.3f}", "")
    console.print(t)
    for warning in est.warnings:
        console.print(f"[bold yellow]warning:[/bold yellow] {warning}")
    sat = est.details.get("saturation")
    if sat:
        rate = sat["output_tokens_per_s"]
        cb = sat["compute_bound_batch"]
        console.print(
            f"Serving saturates at {sat['batch']:,} concurrent sequences "
            f"({'KV cache full' if sat['limited_by'] == 'kv-memory' else 'compute-bound'}): "
            f"{rate.low:,.0f}-{rate.typical:,.0f}-{rate.high:,.0f} output tokens/s. "
            f"KV cache holds {sat['kv_limited_batch']:,}; decode turns compute-bound at "
            + (f"{cb:,}." if cb else f"no batch up to {sat['search_cap']:,}."))
    ct = Table(title="Where the time goes (typical)", title_justify="left", pad_edge=False)
    ct.add_column("Term")
    ct.add_column("Seconds", justify="right")
    ct.add_column("How", overflow="fold")
    for c in est.components:
        if c.seconds > 0:
            ct.add_row(c.name, f"{c.seconds:.4f}", c.formula)
    console.print(ct)
    for a in est.assumptions:
        console.print(f"[dim]- {a}[/dim]")
    if est.calibration:
        console.print(f"[dim]- calibrated with {est.calibration}[/dim]")


def validate_memory(q: req.ValidateMemory) -> None:
    from whichgpu.answers.validation import validate_memory as answer

    show(answer(q), q.as_json, _print_validation)


def validate_speed(q: req.ValidateSpeed) -> None:
    from whichgpu.answers.validation import validate_speed as answer

    show(answer(q), q.as_json, _print_validation)


def validate_fits(q: req.ValidateFits) -> None:
    from whichgpu.answers.validation import validate_fits as answer

    show(answer(q), q.as_json, _print_fits)


def _print_fits(answer) -> None:
    from rich.table import Table

    t = Table(title="fits validation: set-ups people run", title_justify="left",
              pad_edge=False)
    for col in ("Row", "Verdict", "Why"):
        t.add_column(col, overflow="fold")
    for x in answer.rows:
        color = {"does not fit": "red", "borderline": "yellow", "not modelled": "dim"}.get(
            x.verdict, "green")
        t.add_row(x.id, f"[{color}]{x.verdict}[/{color}]", x.detail)
    console.print(t)
    console.print(", ".join(f"{k}: {v}" for k, v in sorted(answer.counts.items())))


def validate_questions(q: req.ValidateQuestions) -> None:
    from whichgpu.answers.validation import validate_questions as answer

    show(answer(q), q.as_json, _print_questions)


def _print_questions(answer) -> None:
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="questions people asked, against what their sources published",
              title_justify="left", pad_edge=False)
    for col in ("Question", "Published", "whichgpu", "Judged"):
        t.add_column(col, overflow="fold")
    colors = {"right": "green", "roughly": "yellow", "wrong": "red", "cannot answer": "dim"}
    for x in answer.rows:
        c = colors[str(x.judgement)]
        t.add_row(f"{escape(x.id)}: {escape(x.question)}", escape(x.outcome), escape(x.answer),
                  f"[{c}]{x.judgement}[/{c}]")
    console.print(t)
    for x in answer.rows:
        if x.note and str(x.judgement) in ("wrong", "cannot answer"):
            console.print(f"[dim]{escape(x.id)}: {escape(x.note)}[/dim]")
    n = len(answer.rows)
    right = sum(1 for x in answer.rows if str(x.judgement) == "right")
    console.print(f"{right} of {n} right ({answer.shares['right']:.0%}); "
                  + ", ".join(f"{k} {v:.0%}" for k, v in answer.shares.items() if k != "right"))


def validate_serving(q: req.ValidateServing) -> None:
    from whichgpu.answers.validation import validate_serving as answer
    from whichgpu.cli.serving_view import print_validation

    show(answer(q), q.as_json, lambda a: print_validation(a.report))


def _print_validation(answer) -> None:
    from rich.table import Table

    what, rows, summary, extra = answer.what, answer.rows, answer.summary, answer.extra
    t = Table(title=f"{what} validation: each row", title_justify="left", pad_edge=False)
    for col in ("Row", "Split", "Measured", "Estimate", "Error"):
        t.add_column(col, justify="left" if col in ("Row", "Split") else "right",
                     overflow="fold")
    for x in rows:
        err = "-" if x.error is None else f"{x.error:+.0%}"
        scale = 1e9 if x.unit == "bytes" else 1
        est = "-" if x.predicted is None else f"{x.predicted / scale:,.3g}"
        t.add_row(x.id, x.split[:5], f"{x.measured / scale:,.3g}", est, err)
    console.print(t)
    if what == "memory":
        console.print("[dim]Bytes shown in GB (10^9).[/dim]")
    skipped = [x for x in rows if x.predicted is None]
    for x in skipped:
        console.print(f"[dim]{x.id}: {x.note}[/dim]")
    ranged = any(r.coverage is not None for r in summary)
    s = Table(title=f"{what} validation: absolute error by category", title_justify="left",
              pad_edge=False)
    cols = ["Category", "Split", "Rows", "Median", "P90", "Median signed"]
    if ranged:
        cols.append("Inside range")
    for col in cols:
        s.add_column(col, justify="left" if col in ("Category", "Split") else "right")
    for r in summary:
        cells = [r.category, r.split, str(r.n), f"{r.median_abs_error:.1%}",
                 f"{r.p90_abs_error:.1%}", f"{r.median_signed_error:+.1%}"]
        if ranged:
            cells.append("-" if r.coverage is None else
                         f"{round(r.coverage * r.n_ranged)}/{r.n_ranged} ({r.coverage:.0%})")
        s.add_row(*cells)
    console.print(s)
    if ranged:
        console.print("[dim]Inside range: measurements within the estimate's low..high; the "
                      "holdout rows show how honest the ranges are (make calibrate sets them "
                      "from the calibration rows only).[/dim]")
    _print_groups(extra.get("by_engine_arch") or extra.get("by_engine"), what, summary)
    if "ranges" in extra:
        from whichgpu.cli.ranges_view import print_ranges

        print_ranges(extra["ranges"], what)
    if "cross_validation" in extra:
        _print_cross_validation(extra["cross_validation"], summary)
    if "verdicts" in extra:
        _print_verdicts(extra["verdicts"])


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def _print_groups(groups, what: str, summary) -> None:
    from rich.table import Table

    if not groups:
        return
    speed = what == "speed"
    t = Table(title=f"{what} validation: by category, engine"
                    + (" and architecture" if speed else "") + " (all splits; holdout apart)",
              title_justify="left", pad_edge=False)
    cols = ["Category", "Engine"] + (["Architecture"] if speed else []) + [
        "Rows", "Median", "P90", "Signed", "Holdout", "Dates"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("Category", "Engine", "Architecture",
                                                    "Dates") else "right")
    for g in groups:
        hold = (f"{_pct(g['holdout_median_abs_error'])} ({g['n_holdout']})"
                if g["n_holdout"] else "-")
        dates = g["first_date"] if g["first_date"] == g["last_date"] else \
            f"{g['first_date']}..{g['last_date']}"
        t.add_row(*g["key"], str(g["n"]), _pct(g["median_abs_error"]),
                  _pct(g["p90_abs_error"]), f"{g['median_signed_error']:+.1%}", hold, dates)
    console.print(t)


def _print_cross_validation(cv: dict, summary) -> None:
    from rich.table import Table

    hold = {s.category: s for s in summary if s.split == "holdout"}
    t = Table(title="speed validation: holdout and leave-one-out cross-validation (median "
                    "absolute error, rows)", title_justify="left", pad_edge=False)
    for col in ("Category", "Holdout", "Leave one GPU out", "Leave one source out"):
        t.add_column(col, justify="left" if col == "Category" else "right")
    cats = sorted({s["category"] for by in cv.values() for s in by})
    for cat in cats:
        h = hold.get(cat)
        cells = [f"{h.median_abs_error:.1%} ({h.n})" if h else "-"]
        for by, unit in (("gpu", "GPUs"), ("source", "sources")):
            s = next((x for x in cv.get(by, []) if x["category"] == cat), None)
            kept = f"; {s['kept_fit']} kept" if s and s.get("kept_fit") else ""
            inside = (f"; {s['inside']}/{s['n_ranged']} inside" if s and s.get("n_ranged")
                      else "")
            cells.append(f"{s['median_abs_error']:.1%} ({s['n']}, {s['groups']} {unit}{kept}"
                         f"{inside})" if s else "-")
        t.add_row(cat, *cells)
    console.print(t)
    console.print("[dim]Leave one out: the fitted constants refitted without that GPU's (or "
                  "source's) calibration rows, then its rows predicted: the error on a card or "
                  "publisher the fit has not seen. Kept: rows left out of the figure because a "
                  "constant they need cannot be refitted without them (too few other rows), so "
                  "it keeps the value fitted on them. Inside: of those rows, the ones measured "
                  "within the stated range around their left-out estimate.[/dim]")


def _print_verdicts(verdicts: dict) -> None:
    counts = verdicts["counts"]
    console.print("Fit verdict on the measured card (each run happened, so it fits): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for row in verdicts["rows"]:
        if row["verdict"] != "fits":
            console.print(f"[dim]  {row['id']}: {row['verdict']} ({row['detail']})[/dim]")
