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
    engine: o.Engine = None, optimizer: o.Optimizer = None,
    gradient_checkpointing: o.Checkpointing = None, master_weights: o.MasterWeights = None,
    fused_loss: o.FusedLoss = False, flash_attention: o.FlashAttention = True,
    lora_rank: o.LoraRank = None, lora_targets: o.LoraTargets = None,
    gpus: o.Gpus = 1, tp: o.Tp = None, pp: o.Pp = 1, zero: o.Zero = None,
    resolution: o.Resolution = None, frames: o.Frames = None, cfg: o.Cfg = None,
    offload: o.Offload = "none", vae_tiling: o.VaeTiling = False, params: o.Params = None,
    allow_long_context: o.AllowLongContext = False, framework: o.Framework = None,
    activation_offloading: o.ActivationOffloading = None, loss: o.Loss = None,
    fp8_training: o.Fp8Training = False,
    gpu: str | None = typer.Option(
        None, "--gpu", help="Ask whether it fits this GPU: a catalog id, or your card's "
                            "memory such as 12GB."),
    gpu_spec: o.GpuSpec = None,
    gpu_layers: o.GpuLayers = None, n_cpu_moe: o.NCpuMoe = None, cpu_moe: o.CpuMoe = False,
    override_tensor: o.OverrideTensor = None, host_ram: o.HostRam = None,
    host_memory: o.HostMemory = None, host_bandwidth: o.HostBandwidth = None,
    ubatch: o.Ubatch = None, mmap: o.Mmap = True,
    as_json: o.Json = False,
) -> None:
    """Peak memory per GPU as named terms, the GPUs that hold it, and what would make it fit."""
    from whichgpu.estimate.memory.report import memory_report

    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        master_weights=master_weights, fused_loss=fused_loss, flash_attention=flash_attention,
        lora_rank=lora_rank, lora_targets=lora_targets, gpus=gpus, tp=tp, pp=pp, zero=zero,
        resolution=resolution, frames=frames, cfg=cfg, offload=offload, vae_tiling=vae_tiling,
        params=params, allow_long_context=allow_long_context, framework=framework,
        activation_offloading=activation_offloading, loss=loss, fp8_training=fp8_training,
        gpu_layers=gpu_layers, n_cpu_moe=n_cpu_moe, cpu_moe=cpu_moe,
        override_tensor=override_tensor, host_ram=host_ram, host_memory=host_memory,
        host_bandwidth=host_bandwidth, ubatch=ubatch, mmap=mmap)
    target = None
    res = o.resolve_card(gpu, gpu_spec)
    if res is not None:
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

    from whichgpu.listing import join_some, more_line
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


def speed(
    model: o.OptionalModelArg = None,
    gpu: str | None = typer.Option(
        None, "--gpu", help="Catalog GPU id, e.g. h100 or rtx-4090 (or --gpu-spec for your "
                            "own card)."),
    gpu_spec: o.GpuSpec = None,
    count: int = typer.Option(1, "--count", help="How many of that GPU (any number the "
                                                 "layout allows, e.g. 3)."),
    task: o.Task = "inference", quant: o.Quant = None, kv_dtype: o.KvDtype = "f16",
    context: o.Context = None, batch: o.Batch = 1, engine: o.Engine = None,
    prompt_tokens: o.PromptTokens = None, output_tokens: o.OutputTokens = None,
    optimizer: o.Optimizer = None, gradient_checkpointing: o.Checkpointing = None,
    lora_rank: o.LoraRank = None, lora_targets: o.LoraTargets = None,
    tp: o.Tp = None, pp: o.Pp = 1, zero: o.Zero = None, resolution: o.Resolution = None,
    frames: o.Frames = None,
    steps: int | None = typer.Option(
        None, "--steps", help="Diffusion: denoising steps. Training: optimizer steps to time."),
    cfg: o.Cfg = None,
    offload: o.Offload = "none", vae_tiling: o.VaeTiling = False, params: o.Params = None,
    framework: o.Framework = None, activation_offloading: o.ActivationOffloading = None,
    loss: o.Loss = None, fp8_training: o.Fp8Training = False,
    compile_: bool = typer.Option(
        False, "--compile", help="torch.compile (training); diffusion: torch.compile with "
                                 "CUDA graphs or TensorRT, and FP8 kernels where the card "
                                 "has FP8 (ComfyUI: its --fast mode)."),
    train_tokens: str | None = typer.Option(
        None, "--train-tokens", help="Training: tokens to train on (e.g. 1B); gives total time."),
    calibration: str | None = typer.Option(
        None, "--calibration",
        help="A calibration profile from 'whichgpu bench' (a JSON file, or 'default')."),
    gpu_layers: o.GpuLayers = None, n_cpu_moe: o.NCpuMoe = None, cpu_moe: o.CpuMoe = False,
    override_tensor: o.OverrideTensor = None, host_ram: o.HostRam = None,
    host_memory: o.HostMemory = None, host_bandwidth: o.HostBandwidth = None,
    engine_version: o.EngineVersion = None, ubatch: o.Ubatch = None, mmap: o.Mmap = True,
    max_throughput: bool = typer.Option(
        False, "--max-throughput",
        help="Serving (vLLM, SGLang, TensorRT-LLM): output tokens/s at the largest batch "
             "that fits, the batch and what bounds it."),
    as_json: o.Json = False,
) -> None:
    """Tokens/s, images/min or training throughput as low/typical/high, and what bounds it."""
    from whichgpu.errors import InputError
    from whichgpu.estimate.build import speed_answer
    from whichgpu.estimate.workload import TRAINING_TASKS

    res = o.resolve_card(gpu, gpu_spec)
    if res is None:
        raise InputError("speed needs a GPU: --gpu ID (e.g. --gpu rtx-4090) or --gpu-spec "
                         "memory=...,bandwidth=...,fp16=...")
    if res.note:
        note(res.note)
    training = task in TRAINING_TASKS
    w = o.build_workload(
        model, task=task, quant=quant, kv_dtype=kv_dtype, context=context, batch=batch,
        engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        optimizer=optimizer, gradient_checkpointing=gradient_checkpointing,
        lora_rank=lora_rank, lora_targets=lora_targets, gpus=count, tp=tp, pp=pp, zero=zero,
        resolution=resolution, frames=frames, steps=None if training else steps, cfg=cfg,
        offload=offload, vae_tiling=vae_tiling, params=params, framework=framework,
        activation_offloading=activation_offloading, loss=loss, fp8_training=fp8_training,
        gpu_layers=gpu_layers, n_cpu_moe=n_cpu_moe, cpu_moe=cpu_moe,
        override_tensor=override_tensor, host_ram=host_ram, host_memory=host_memory,
        host_bandwidth=host_bandwidth, engine_version=engine_version, ubatch=ubatch, mmap=mmap)
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
    answer = speed_answer(w, res.gpu, count, profile=profile, framework=w.framework,
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
    """Each memory measurement against the estimate, and the error by category and engine,
    and the fit verdict on each measured card (a run that happened fits)."""
    from pathlib import Path

    from whichgpu.estimate import validation_memory
    from whichgpu.estimate.validation import default_path, read_rows
    from whichgpu.estimate.validation_report import group_errors

    path = Path(file) if file else default_path("memory")
    outcomes = validation_memory.run(path)
    by_id = {r["id"]: r for r in read_rows(path)}
    chosen = [x for x in outcomes if split == "all" or x.split == split]
    extra = {"by_engine": [g.to_json() for g in group_errors(
        chosen, by_id, lambda r: (r.get("category", ""), (r.get("engine") or "-").strip()))],
        "verdicts": validation_memory.verdicts([by_id[x.id] for x in chosen])}
    _report(outcomes, split, as_json, "memory", extra)


@validate_app.command("speed")
def validate_speed(
    file: str | None = typer.Option(None, "--file", help="A CSV in validation/speed.csv's "
                                                         "schema (default: the shipped set)."),
    split: str = typer.Option("all", "--split", help="calibration, holdout or all."),
    cross_validation: bool = typer.Option(
        True, "--cross-validation/--no-cross-validation",
        help="Also refit without each GPU and each source and predict their rows (needs "
             "scripts/calibrate.py from the source checkout; a few seconds)."),
    as_json: o.Json = False,
) -> None:
    """Each speed measurement against the estimate, and the error by category, by engine and
    architecture, and leaving each GPU and each source out of the fit."""
    from pathlib import Path

    from whichgpu.estimate import validation_speed
    from whichgpu.estimate.validation import default_path, read_rows

    path = Path(file) if file else default_path("speed")
    outcomes = validation_speed.run(path)
    rows = read_rows(path)
    extra = _speed_tables(outcomes, rows, split, cross_validation)
    _report(outcomes, split, as_json, "speed", extra)


def _speed_tables(outcomes, rows, split: str, cross_validation: bool) -> dict:
    """The per engine/architecture table and the leave-one-out summaries (JSON-ready)."""
    from whichgpu.estimate import validation_cv
    from whichgpu.estimate.validation_report import engine_arch_key, group_errors

    by_id = {r["id"]: r for r in rows}
    chosen = [x for x in outcomes if split == "all" or x.split == split]
    extra = {"by_engine_arch": [g.to_json() for g in group_errors(chosen, by_id,
                                                                  engine_arch_key)]}
    if cross_validation:
        extra["cross_validation"] = {
            by: [s.to_json() for s in validation_cv.summarize(
                validation_cv.leave_one_out(rows, by))] for by in ("gpu", "source")}
    return extra


@validate_app.command("fits")
def validate_fits(
    file: str | None = typer.Option(None, "--file", help="A CSV in validation/fits.csv's "
                                                         "schema (default: the shipped set)."),
    as_json: o.Json = False,
) -> None:
    """Set-ups people run: the memory model's verdict on each (never 'does not fit')."""
    from collections import Counter
    from pathlib import Path

    from rich.table import Table

    from whichgpu.estimate import validation_fits

    outcomes = validation_fits.run(Path(file) if file else None)
    counts = Counter(x.verdict for x in outcomes)
    if as_json:
        emit_json({"what": "fits", "rows": [x.to_json() for x in outcomes],
                   "summary": dict(counts)})
        return
    t = Table(title="fits validation: set-ups people run", title_justify="left",
              pad_edge=False)
    for col in ("Row", "Verdict", "Why"):
        t.add_column(col, overflow="fold")
    for x in outcomes:
        color = {"does not fit": "red", "borderline": "yellow", "not modelled": "dim"}.get(
            x.verdict, "green")
        t.add_row(x.id, f"[{color}]{x.verdict}[/{color}]", x.detail)
    console.print(t)
    console.print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


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


def _report(outcomes, split: str, as_json: bool, what: str, extra: dict | None = None) -> None:
    from rich.table import Table

    from whichgpu.errors import InputError
    from whichgpu.estimate.validation import summarize

    if split not in ("all", "calibration", "holdout"):
        raise InputError("--split must be calibration, holdout or all")
    rows = [x for x in outcomes if split == "all" or x.split == split]
    summary = [s for s in summarize(rows) if split == "all" or s.split == split]
    extra = extra or {}
    if as_json:
        emit_json({"what": what, "rows": [x.to_json() for x in rows],
                   "summary": [s.to_json() for s in summary], **extra})
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
    _print_groups(extra.get("by_engine_arch") or extra.get("by_engine"), what, summary)
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
            cells.append(f"{s['median_abs_error']:.1%} ({s['n']}, {s['groups']} {unit})"
                         if s else "-")
        t.add_row(cat, *cells)
    console.print(t)
    console.print("[dim]Leave one out: the fitted constants refitted without that GPU's (or "
                  "source's) calibration rows, then its rows predicted: the error on a card or "
                  "publisher the fit has not seen.[/dim]")


def _print_verdicts(verdicts: dict) -> None:
    counts = verdicts["counts"]
    console.print("Fit verdict on the measured card (each run happened, so it fits): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for row in verdicts["rows"]:
        if row["verdict"] != "fits":
            console.print(f"[dim]  {row['id']}: {row['verdict']} ({row['detail']})[/dim]")
