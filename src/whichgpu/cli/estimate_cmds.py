"""``whichgpu memory`` (the VRAM selector), ``whichgpu speed`` and ``whichgpu validate``."""

from __future__ import annotations

import typer

from whichgpu.cli import workload_opts as o
from whichgpu.cli.common import console, emit_json, note

validate_app = typer.Typer(help="Check the estimates against published measurements.",
                           no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("memory")(memory)
    app.command("speed")(speed)
    app.add_typer(validate_app, name="validate")


def memory(
    model: o.OptionalModelArg = None, task: o.Task = "inference", quant: o.Quant = None,
    kv_dtype: o.KvDtype = "f16", context: o.Context = None, batch: o.Batch = 1,
    engine: o.Engine = None, optimizer: o.Optimizer = "adamw",
    gradient_checkpointing: o.Checkpointing = None, master_weights: o.MasterWeights = None,
    fused_loss: o.FusedLoss = False, flash_attention: o.FlashAttention = True,
    lora_rank: o.LoraRank = 16, lora_targets: o.LoraTargets = "all-linear",
    gpus: o.Gpus = 1, tp: o.Tp = None, pp: o.Pp = 1, zero: o.Zero = None,
    resolution: o.Resolution = None, frames: o.Frames = None, cfg: o.Cfg = None,
    offload: o.Offload = "none", vae_tiling: o.VaeTiling = False, params: o.Params = None,
    allow_long_context: o.AllowLongContext = False,
    gpu: str | None = typer.Option(None, "--gpu", help="Ask whether it fits this GPU."),
    as_json: o.Json = False,
) -> None:
    """Peak memory per GPU as named terms, the GPUs that hold it, and what would make it fit."""
    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.estimate.memory.report import memory_report

    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        master_weights=master_weights, fused_loss=fused_loss, flash_attention=flash_attention,
        lora_rank=lora_rank, lora_targets=lora_targets, gpus=gpus, tp=tp, pp=pp, zero=zero,
        resolution=resolution, frames=frames, cfg=cfg, offload=offload, vae_tiling=vae_tiling,
        params=params, allow_long_context=allow_long_context)
    target = None
    if gpu:
        res = resolve_gpu(gpu)
        if res.note:
            note(res.note)
        target = res.gpu
    report = memory_report(w, target)
    if as_json:
        emit_json(report.to_json())
        return
    _print_memory(report)


def _print_memory(report) -> None:
    from rich.table import Table

    from whichgpu.units import GB, GiB, format_bytes, format_bytes_both

    e = report.estimate
    title = (f"{report.model_name} - {e.task}, {e.quant}, engine {e.engine}"
             + (f", per GPU of {e.gpus}" if e.gpus > 1 else ""))
    t = Table(title=title, title_justify="left", pad_edge=False)
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
    console.print(f"[dim]Rule of thumb (S15): {report.rule.formula}; this estimate: "
                  f"{format_bytes(e.total_bytes)}; {report.rule.explanation}.[/dim]")
    for w in e.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
    for a in e.assumptions:
        console.print(f"[dim]- {a}[/dim]")
    if report.target is not None:
        f = report.target
        where = f.gpu.id if f.count == 1 else f"{f.count} x {f.gpu.id}"
        verdict = "[green]fits[/green]" if f.fits else "[red]does not fit[/red]"
        console.print(f"On {where}: {verdict}, headroom "
                      f"{format_bytes_both(f.headroom_bytes)} of "
                      f"{format_bytes(f.gpu.usable_memory_bytes)} usable.")
    cap = report.capacity
    if cap:
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
    else:
        console.print("[red]No catalog GPU holds it, even 8 of them.[/red]")
    if report.changes:
        console.print("[bold]What would make it fit[/bold]")
        for c in report.changes[:8]:
            on = ", ".join(c.fits_on) if c.fits_on else "still too big"
            console.print(f"  - {c.description}: {format_bytes(c.total_bytes)} -> {on}")


def speed(
    model: o.OptionalModelArg = None,
    gpu: str = typer.Option(..., "--gpu", help="Catalog GPU id, e.g. h100 or rtx-4090."),
    count: int = typer.Option(1, "--count", help="How many of that GPU."),
    task: o.Task = "inference", quant: o.Quant = None, kv_dtype: o.KvDtype = "f16",
    context: o.Context = None, batch: o.Batch = 1, engine: o.Engine = None,
    prompt_tokens: o.PromptTokens = None, output_tokens: o.OutputTokens = None,
    optimizer: o.Optimizer = "adamw", gradient_checkpointing: o.Checkpointing = None,
    lora_rank: o.LoraRank = 16, lora_targets: o.LoraTargets = "all-linear",
    tp: o.Tp = None, pp: o.Pp = 1, zero: o.Zero = None, resolution: o.Resolution = None,
    frames: o.Frames = None,
    steps: int | None = typer.Option(
        None, "--steps", help="Diffusion: denoising steps. Training: optimizer steps to time."),
    cfg: o.Cfg = None,
    offload: o.Offload = "none", params: o.Params = None,
    framework: str | None = typer.Option(
        None, "--framework",
        help="Training framework: pytorch (default), torchtitan, llm-foundry, torchtune, "
             "megatron, transformers, axolotl or unsloth."),
    compile_: bool = typer.Option(
        False, "--compile", help="torch.compile (training) / CUDA graphs (diffusion)."),
    train_tokens: str | None = typer.Option(
        None, "--train-tokens", help="Training: tokens to train on (e.g. 1B); gives total time."),
    calibration: str | None = typer.Option(
        None, "--calibration",
        help="A calibration profile from 'whichgpu bench' (a JSON file, or 'default')."),
    max_throughput: bool = typer.Option(
        False, "--max-throughput",
        help="Serving (vLLM, SGLang, TensorRT-LLM): output tokens/s at the largest batch "
             "that fits, the batch and what bounds it."),
    as_json: o.Json = False,
) -> None:
    """Tokens/s, images/min or training throughput as low/typical/high, and what bounds it."""
    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.estimate.build import speed_answer
    from whichgpu.estimate.workload import TRAINING_TASKS

    res = resolve_gpu(gpu)
    if res.note:
        note(res.note)
    training = task in TRAINING_TASKS
    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        lora_rank=lora_rank, lora_targets=lora_targets, gpus=count, tp=tp, pp=pp, zero=zero,
        resolution=resolution, frames=frames, steps=None if training else steps, cfg=cfg,
        offload=offload, params=params)
    profile = _load_profile(calibration)
    if w.model.approximate:
        note(f"{w.model.name} is an approximation from a bare size, not a real model: name "
             "the model for exact figures")
    if max_throughput:
        from whichgpu.cli.serving_view import print_max_throughput
        from whichgpu.estimate.speed.serving_answers import max_throughput_answer

        data = max_throughput_answer(w, res.gpu, count, profile=profile)
        if as_json:
            emit_json(data)
        else:
            print_max_throughput(data)
        return
    answer = speed_answer(w, res.gpu, count, profile=profile, framework=framework,
                          compile=compile_, steps=steps if training else None,
                          train_tokens=train_tokens)
    if as_json:
        emit_json(answer.to_json())
        return
    if answer.estimate is None:
        console.print(f"[red]{answer.not_fit}[/red]: no speed is given for a job that does not "
                      "fit. 'whichgpu memory' shows what would make it fit.")
        return
    est = answer.estimate
    _print_speed(est, w)


def _load_profile(path: str | None):
    """No flag: datasheet figures. 'default': the profile 'whichgpu bench' saved. Else a file."""
    from whichgpu.bench.profile import profile_from_option

    return profile_from_option(path)


def _print_speed(est, w) -> None:
    from rich.table import Table

    from whichgpu.units import format_duration

    where = est.gpu if est.count == 1 else f"{est.count} x {est.gpu}"
    t = Table(title=f"{w.model.name} on {where} - {est.task}, {est.precision} compute, "
                    f"{est.bound}-bound, confidence {est.confidence}",
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


@validate_app.command("memory")
def validate_memory(
    file: str | None = typer.Option(None, "--file", help="A CSV in validation/memory.csv's "
                                                         "schema (default: the shipped set)."),
    split: str = typer.Option("all", "--split", help="calibration, holdout or all."),
    as_json: o.Json = False,
) -> None:
    """Each memory measurement against the estimate, and the error by category."""
    from pathlib import Path

    from whichgpu.estimate import validation_memory

    _report(validation_memory.run(Path(file) if file else None), split, as_json, "memory")


@validate_app.command("speed")
def validate_speed(
    file: str | None = typer.Option(None, "--file", help="A CSV in validation/speed.csv's "
                                                         "schema (default: the shipped set)."),
    split: str = typer.Option("all", "--split", help="calibration, holdout or all."),
    as_json: o.Json = False,
) -> None:
    """Each speed measurement against the estimate, and the error by category."""
    from pathlib import Path

    from whichgpu.estimate import validation_speed

    _report(validation_speed.run(Path(file) if file else None), split, as_json, "speed")


@validate_app.command("serving")
def validate_serving(
    file: str | None = typer.Option(None, "--file", help="A CSV in validation/serving.csv's "
                                                         "schema (default: the shipped set)."),
    split: str = typer.Option("all", "--split", help="calibration, holdout or all."),
    loso: bool = typer.Option(True, "--loso/--no-loso",
                              help="Leave one calibration source out: refit without it and "
                                   "report its error (about 20 s)."),
    as_json: o.Json = False,
) -> None:
    """Each serving measurement against the model, by engine and GPU, holdout apart."""
    from pathlib import Path

    from whichgpu.cli.serving_view import print_validation
    from whichgpu.estimate import validation_serving

    report = validation_serving.report(Path(file) if file else None, split, loso)
    if as_json:
        emit_json(report)
        return
    print_validation(report)


def _report(outcomes, split: str, as_json: bool, what: str) -> None:
    from rich.table import Table

    from whichgpu.errors import InputError
    from whichgpu.estimate.validation import summarize

    if split not in ("all", "calibration", "holdout"):
        raise InputError("--split must be calibration, holdout or all")
    rows = [x for x in outcomes if split == "all" or x.split == split]
    summary = [s for s in summarize(rows) if split == "all" or s.split == split]
    if as_json:
        emit_json({"what": what, "rows": [x.to_json() for x in rows],
                   "summary": [s.to_json() for s in summary]})
        return
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
