"""Tables for the serving answers: ``recommend --requests-per-s`` and ``speed
--max-throughput``."""

from __future__ import annotations

from whichgpu.cli.common import console


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def print_rate_recommendation(rec, top: int) -> None:
    """Per GPU the cheapest replicas x TP that meet the targets, then why and exclusions."""
    from rich.markup import escape
    from rich.table import Table

    from whichgpu.units import format_money

    job = rec.job
    w = job.workload
    shown = rec.options[:top] if top else rec.options
    title = escape(f"{w.model.name} - serving {job.describe()} of {w.prompt_tokens:,} prompt "
                   f"+ {w.output_tokens:,} output tokens, {w.quant_name}, "
                   f"{w.engine_name} (ranked by {rec.ranking})")
    if not shown:
        console.print(f"[bold]{title}[/bold]")
        return
    t = Table(title=title, title_justify="left", pad_edge=False)
    good = all("requests_per_unit_cost" in o.serving.get("goodput", {}) for o in shown)
    for col in ("#", "GPU", "Replicas", "TTFT ms", "TPOT ms", "Load", "Price/h", "1M out") + (
            ("Met", f"Good/{shown[0].price_per_hour.currency}") if good else ()):
        t.add_column(col, justify="left" if col in ("GPU", "Replicas") else "right")
    for i, o in enumerate(shown, start=1):
        s = o.serving
        mark = ("=" if o.near_tie else "") + ("*" if o.pareto else "")
        # issue 28: ranked on goodput, its share of requests meeting every target and its
        # good requests per unit of cost (advise/goodput.py)
        extra = ((f"{s['goodput']['share_meeting_targets']:.1%}",
                  f"{s['goodput']['requests_per_unit_cost']:,.0f}") if good else ())
        t.add_row(f"{i}{mark}", escape(o.gpu.id), f"{s['replicas']} x {s['tp']}",
                  _pair(s["ttft_s"]), _pair(s["tpot_s"]), f"{s['utilisation']:.0%}",
                  format_money(o.price_per_hour),
                  format_money(_money(s["cost_per_million_tokens"]["output"])), *extra)
    console.print(t)
    if good:
        console.print("[dim]Met: simulated requests meeting every target; Good/"
                      f"{shown[0].price_per_hour.currency}: those requests per unit of cost "
                      "(the ranking key).[/dim]")
    console.print("[dim]Replicas: replicas x GPUs each (tensor parallel); TTFT and TPOT: "
                  "means under Poisson arrivals, slow end of the range in brackets; Load: each "
                  "replica's share of its max throughput; 1M out: cost per million output "
                  "tokens; * on the cost/latency Pareto front.[/dim]")


def _pair(r: dict) -> str:
    """Typical and slow end in milliseconds: '141 (412)'."""
    return f"{r['typical'] * 1e3:,.0f} [dim]({r['high'] * 1e3:,.0f})[/dim]"


def _money(data):
    from whichgpu.units import Money

    return Money(data["amount"], data["currency"])


def print_max_throughput(data: dict) -> None:
    """``speed --max-throughput``: the best batch, what bounds it, the rate as a range."""
    from rich.table import Table

    r = data["throughput_tokens_per_s"]
    t = Table(title=f"Max throughput on {data['where']} - {data['engine']['engine']} "
                    f"{data['engine']['generation']}, {data['prompt_tokens']:,} + "
                    f"{data['output_tokens']:,} tokens", title_justify="left", pad_edge=False)
    for col in ("Measure", "Low", "Typical", "High"):
        t.add_column(col, justify="left" if col == "Measure" else "right")
    t.add_row("output tokens/s", f"{r['low']:,.0f}", f"{r['typical']:,.0f}", f"{r['high']:,.0f}")
    q = data["requests_per_s"]
    t.add_row("requests/s", f"{q['low']:,.3g}", f"{q['typical']:,.3g}", f"{q['high']:,.3g}")
    for name in ("ttft_s", "tpot_s"):
        v = data[name]
        t.add_row(name.replace("_s", ""), _ms(v["low"]), _ms(v["typical"]), _ms(v["high"]))
    console.print(t)
    cap = data["kv_capacity"]
    console.print(f"At {data['batch']:,} sequences decoding together, bounded by "
                  f"[bold]{data['bound']}[/bold] (the KV cache holds {cap['sequences']:,} "
                  f"sequences of {cap['resident_tokens']:,} tokens; max_num_seqs "
                  f"{data['engine']['max_num_seqs']:,}; step {data['step_bound']}-bound).")
    console.print(f"[dim]- {cap['formula']}[/dim]")
    for a in data["assumptions"]:
        console.print(f"[dim]- {a}[/dim]")


def print_traffic(data: dict) -> None:
    """``speed --requests-per-s``: throughput and latency percentiles of a simulated run."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(f"{data['model']} on {data['where']} - {data['engine']['engine']} "
                           f"at {data['requests_per_s_asked']:g} requests/s"),
              title_justify="left", pad_edge=False)
    for col in ("Latency", "Mean", "p50", "p90", "p95", "p99"):
        t.add_column(col, justify="left" if col == "Latency" else "right")
    for name, label in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"), ("itl_s", "ITL"),
                        ("e2e_s", "end to end")):
        v = data[name]
        t.add_row(label, *(_ms(v[k]) for k in ("mean", "p50", "p90", "p95", "p99")))
    console.print(t)
    load = data.get("utilisation")
    console.print(f"Served {data['requests_per_s']:,.3g} requests/s, "
                  f"{data['output_tokens_per_s']:,.0f} output tokens/s; "
                  f"{data['decode_batch']:,.1f} sequences decoding on average"
                  + (f"; {load:.0%} of the {data['max_requests_per_s']:,.3g} requests/s the "
                     "replica serves at most" if load is not None else "") + ".")
    for n in data["notes"]:
        console.print(f"[yellow]{escape(n)}[/yellow]")
    for a in data["assumptions"]:
        console.print(f"[dim]- {escape(a)}[/dim]")


def print_validation(report: dict) -> None:
    """``validate serving``: each row, then the medians by family, engine, GPU and source."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="serving validation: each row", title_justify="left", pad_edge=False)
    for col in ("Row", "Split", "Measured", "Estimate", "Error"):
        t.add_column(col, justify="left" if col in ("Row", "Split") else "right",
                     overflow="fold")
    for r in report["rows"]:
        err = "-" if r["error"] is None else f"{r['error']:+.0%}"
        est = "-" if r["predicted"] is None else f"{r['predicted']:,.4g}"
        t.add_row(escape(r["id"]), r["split"][:5], f"{r['measured']:,.4g}", est, err)
    console.print(t)
    for r in report["rows"]:
        if r["predicted"] is None:
            console.print(f"[dim]{escape(r['id'])}: {escape(r['note'])}[/dim]")
    for key, title, cols in (("by_family", "by metric family", ("family",)),
                             ("by_engine", "by engine", ("engine", "family")),
                             ("by_gpu", "by GPU", ("gpu", "family")),
                             ("by_source", "by source", ("source", "family"))):
        s = Table(title=f"serving validation: median absolute error {title}",
                  title_justify="left", pad_edge=False)
        for col in ("Split", *[c.title() for c in cols], "Rows", "Median", "Inside range"):
            s.add_column(col, justify="right" if col in ("Rows", "Median", "Inside range")
                         else "left")
        for c in report[key]:
            med = "-" if c["median_abs_error"] is None else f"{c['median_abs_error']:.1%}"
            s.add_row(c["split"], *[str(c[k]) for k in cols], str(c["n"]), med,
                      f"{c['inside_range']}/{c['n']}")
        console.print(s)
    if "ranges" in report:
        from whichgpu.cli.ranges_view import print_ranges

        print_ranges(report["ranges"], "serving")
    loso = report.get("leave_one_source_out")
    if loso:
        s = Table(title="serving validation: leave one calibration source out (refitted "
                        "without it)", title_justify="left", pad_edge=False)
        for col in ("Source or family", "Rows", "Median"):
            s.add_column(col, justify="left" if col.startswith("Source") else "right")
        for c in loso["by_source"] + loso["by_family"]:
            s.add_row(c["name"], str(c["n"]), f"{c['median_abs_error']:.1%}")
        console.print(s)
    parts = []
    for name, label in (("max_throughput", "max-throughput tables"), ("ttft", "TTFT"),
                        ("tpot", "TPOT")):
        c = report["holdout_targets"][name]
        med = "-" if c["median_abs_error"] is None else f"{c['median_abs_error']:.1%}"
        verdict = "met" if c["met"] else "missed"
        parts.append(f"{label} {med} on {c['n']} rows (target {c['target']:.0%}: {verdict})")
    console.print("Holdout (sources " + ", ".join(report["split_rule"]) + "): "
                  + "; ".join(parts) + ".")
    balanced = [f"{m} {c['inside']}/{c['n']}, {c['balanced']:.0%} balanced over "
                f"{len(c['by_source'])} source(s)"
                for m, c in report.get("ranges_holdout_by_source", {}).items()
                if c.get("balanced") is not None]
    if balanced:  # issue 30: one source's table can carry the pooled share
        console.print("Holdout inside the range: " + "; ".join(balanced) + ".")
    console.print("[dim]Rows are split by source (validation/serving_split.toml), decided "
                  "before any fit; make calibrate-serving fits only the calibration sources "
                  "and prints leave-one-source-out errors.[/dim]")
