"""``whichgpu bench`` (measure the local GPU), ``bench model`` and ``whichgpu compare`` (S30)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, err_console, show

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

bench_app = typer.Typer(
    help="Measure this machine's GPUs against their datasheets and save a calibration profile.",
    invoke_without_command=True)

def register(app: typer.Typer) -> None:
    if not bench_app.registered_commands:  # once per process (see prices_cmds.register)
        bind(bench_app, req.Bench, bench, callback=True)
        bind(bench_app, req.BenchModel, bench_model)
    app.add_typer(bench_app, name="bench")
    bind(app, req.Compare, compare)


class RichReporter:
    """A progress bar on stderr: one step per measurement."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.started = 0

    def start(self, total: int) -> None:
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=err_console, transient=True)
        self.progress.start()
        self.task = self.progress.add_task("starting", total=total)

    def step(self, description: str) -> None:
        if self.progress is None or self.task is None:  # both set by start()
            return
        if self.started:
            self.progress.advance(self.task)
        self.started += 1
        self.progress.update(self.task, description=f"measuring {description}")

    def done(self) -> None:
        if self.progress is None or self.task is None:  # both set by start()
            return
        self.progress.update(self.task, completed=self.progress.tasks[0].total)
        self.progress.stop()


# ------------------------------------------------------------------ whichgpu bench

def bench(q: req.Bench, ctx: typer.Context) -> None:
    from whichgpu.answers.bench import bench as answer

    result = answer(q, RichReporter(not q.as_json))
    show(result, q.as_json, lambda a: _print_bench(a.result, a.saved, a.device_type))


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    v = value / (1e12 if unit == "FLOP/s" else 1e9)
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


_COLUMNS = (("matmul_bf16", "BF16"), ("matmul_fp16", "FP16"), ("matmul_tf32", "TF32"),
            ("matmul_fp8", "FP8"), ("matmul_fp32", "FP32"), ("memory_bandwidth", "Memory"),
            ("h2d", "Host>GPU"), ("d2h", "GPU>Host"))


def _print_bench(result, saved, device_type: str) -> None:
    """One row per GPU (and one per datasheet): TFLOPS, then GB/s, each with its ratio."""
    from rich.table import Table

    from whichgpu.catalog.gpus import default_catalog

    catalog = default_catalog()
    names = {v.name for g in result.gpus for v in g.versus}
    cols = [(k, label) for k, label in _COLUMNS if k in names]
    t = Table(title="Measured (ratio to the datasheet): TFLOPS dense, then GB/s",
              title_justify="left", pad_edge=False)
    t.add_column("GPU", overflow="fold")
    for _, label in cols:
        t.add_column(label, justify="right")
    sheets: dict[str, dict[str, tuple]] = {}
    for g in result.gpus:
        versus = {v.name: v for v in g.versus}
        cells = []
        for k, _ in cols:
            v = versus.get(k)
            if v is None:
                cells.append("-")
                continue
            ratio = f" ({v.ratio:.0%})" if v.ratio is not None else ""
            cells.append(_fmt(v.measured, v.unit) + ratio)
            if g.info.catalog_id:
                sheets.setdefault(g.info.catalog_id, {})[k] = (v.datasheet, v.unit, v.source)
        label = ("CPU" if device_type != "cuda" else
                 f"{g.info.index}: {g.info.catalog_id or g.info.name}")
        t.add_row(label, *cells)
    for gid, sheet in sheets.items():
        t.add_row(f"[dim]datasheet {gid}[/dim]",
                  *[f"[dim]{_fmt(sheet[k][0], sheet[k][1])}[/dim]" if k in sheet else "-"
                    for k, _ in cols])
    console.print(t)
    for g in result.gpus:
        info = g.info
        if device_type == "cuda":
            bits = [f"{info.name}"]
            if info.power_limit_w:
                bits.append(f"power limit {info.power_limit_w:.0f} W")
            if info.max_sm_clock_mhz:
                bits.append(f"max SM {info.max_sm_clock_mhz} MHz")
            if info.max_memory_clock_mhz:
                bits.append(f"max memory {info.max_memory_clock_mhz} MHz")
            console.print(f"[dim]GPU{info.index}: {', '.join(bits)}[/dim]")
        for n in g.notes:
            console.print(f"[yellow]note:[/yellow] GPU{info.index}: {n}")
    sources = sorted({src for sheet in sheets.values() for (_, _, src) in sheet.values() if src})
    for src in sources:
        console.print(f"[dim]datasheet source {src}: {catalog.source_url(src)}[/dim]")
    if result.topology.pairs:
        _print_topology(result)
    if device_type == "cpu":
        console.print("[dim]Measured on the CPU: a check of the harness, not a calibration; "
                      "nothing saved.[/dim]")
        return
    if saved:
        from whichgpu.bench.profile import load_profile
        from whichgpu.estimate.speed.hardware import (
            REFERENCE_BANDWIDTH_FRACTION,
            REFERENCE_MATMUL_FRACTION,
        )

        profile = load_profile(saved)
        console.print(f"Saved the calibration profile to {saved}.")
        for gid in sorted({g.info.catalog_id for g in result.gpus if g.info.catalog_id}):
            cs, bs = profile.scales_for(gid, REFERENCE_MATMUL_FRACTION,
                                        REFERENCE_BANDWIDTH_FRACTION)
            console.print(f"  {gid}: the speed model will scale compute by {cs:.2f} and memory "
                          f"bandwidth by {bs:.2f} (typical benchmarks reach "
                          f"{REFERENCE_MATMUL_FRACTION:.0%} / {REFERENCE_BANDWIDTH_FRACTION:.0%}"
                          " of the datasheet)")
        console.print("Use it: whichgpu speed MODEL --gpu ID --calibration "
                      + ("default" if saved.name == "calibration.json" else str(saved)))


def _print_topology(result) -> None:
    """Pairs grouped by how they are linked, with the median measured one-way copy bandwidth
    beside the datasheet's one-way link bandwidth."""
    import statistics

    from rich.table import Table

    from whichgpu.bench.run import link_datasheet

    topo = result.topology
    ids = {g.info.index: g.info.catalog_id for g in result.gpus}
    groups: dict[tuple, list] = {}
    for p in topo.pairs:
        groups.setdefault((p.link, p.p2p or "-", p.kind), []).append(p)
    t = Table(title=f"Links between GPUs ({topo.source}); weakest: {topo.kind}",
              title_justify="left", pad_edge=False)
    for col in ("Link", "P2P", "Model kind", "Pairs", "GB/s", "Datasheet", "Meaning"):
        t.add_column(col, justify="right" if col in ("GB/s", "Datasheet") else "left",
                     overflow="fold")
    for (link, p2p, kind), pairs in sorted(groups.items()):
        bws = [p.p2p_bytes_per_s for p in pairs if p.p2p_bytes_per_s]
        shown = ", ".join(f"{p.a}-{p.b}" for p in pairs[:3]) + (" ..." if len(pairs) > 3
                                                                 else "")
        sheet, _ = link_datasheet(ids.get(pairs[0].a), kind)
        t.add_row(link, p2p, kind, f"{len(pairs)}: {shown}",
                  _fmt(statistics.median(bws), "bytes/s") if bws else "-",
                  _fmt(sheet, "bytes/s"), pairs[0].meaning)
    console.print(t)


# ------------------------------------------------------------------ whichgpu bench model

def bench_model(q: req.BenchModel) -> None:
    from whichgpu.answers.bench import bench_model as answer

    result = answer(q, RichReporter(not q.as_json))
    show(result, q.as_json, _print_model_bench_answer)


def _print_model_bench_answer(answer) -> None:
    _print_model_bench(answer.result, answer.profile)
    if answer.append:
        written = answer.appended
        console.print(f"Appended {len(written)} row(s) to {answer.append}/speed.csv and "
                      "memory.csv" + (f": {', '.join(written)}" if written else
                                      " (all were there already)"))


def _print_model_bench(result, profile) -> None:
    from rich.table import Table
    from rich.text import Text

    s = result.settings
    where = result.gpu_id or result.device
    t = Table(title=Text(f"{result.spec.name} on {where}: batch {s.batch}, prompt "
                         f"{s.prompt_tokens}, output {s.output_tokens}"
                         + (f", training {s.train_seq} tokens" if s.train else "")),
              title_justify="left", pad_edge=False)
    cols = ["Measure", "Measured", "Estimate (low-high)", "Error"]
    if profile is not None:
        cols += ["Calibrated", "Error"]
    for c in cols:
        t.add_column(c, justify="left" if c == "Measure" else "right")
    for ln in result.lines:
        scale = 1e9 if ln.unit == "bytes" else 1
        unit = " GB" if ln.unit == "bytes" else ""
        row = [ln.name, f"{ln.measured / scale:,.2f}{unit}" if ln.measured else "-",
               _range(ln.estimate, scale, unit), _error(ln, ln.estimate)]
        if profile is not None:
            row += [_range(ln.calibrated, scale, unit), _error(ln, ln.calibrated)]
        t.add_row(*row)
    console.print(t)
    console.print(f"[dim]Built {result.params_built:,} parameters with random weights "
                  f"({result.spec.params.total:,} in the model's config). Error = estimate / "
                  "measured - 1.[/dim]")
    if result.gpu_id is None:
        console.print("[dim]Measured on the CPU: no GPU estimate to compare with.[/dim]")
    for ln in result.lines:
        if ln.note:
            console.print(f"[dim]- {ln.name}: {ln.note}[/dim]")


def _range(r, scale: float, unit: str) -> str:
    if r is None:
        return "-"
    if r.low == r.high:
        return f"{r.typical / scale:,.2f}{unit}"
    return f"{r.typical / scale:,.1f} ({r.low / scale:,.1f}-{r.high / scale:,.1f}){unit}"


def _error(line, r) -> str:
    e = line.error(r)
    return "-" if e is None else f"{e:+.0%}"


# ------------------------------------------------------------------ whichgpu compare

def compare(q: req.Compare) -> None:
    from whichgpu.answers.bench import compare as answer

    result = answer(q, lambda argv, gpu: _time_here(argv, gpu, q.as_json))
    show(result, q.as_json, lambda a: _print_compare(a.result))


def _time_here(argv: list[str], gpu: str | None, as_json: bool):
    """Run the command on this machine's GPU and return it as one measured pair."""
    from whichgpu.bench.compare import Measured, time_command
    from whichgpu.bench.detect import BenchUnavailable, detect_gpus
    from whichgpu.catalog.gpus import get_gpu, resolve_gpu
    from whichgpu.errors import InputError
    from whichgpu.units import format_duration

    try:
        found = detect_gpus()
    except BenchUnavailable as exc:
        raise BenchUnavailable(f"compare -- COMMAND times the job on this machine's GPU, and "
                               f"{exc}. Minutes seen elsewhere work anywhere: --measured "
                               "h100=12m a100=21m") from None
    kinds = {g.catalog_id for g in found}
    if not gpu and len(kinds) > 1:
        raise InputError(f"this machine has different cards ({', '.join(g.name for g in found)})"
                         ": say which one the job runs on with --gpu ID")
    gid = resolve_gpu(gpu).gpu.id if gpu else found[0].catalog_id
    if gid is None:
        raise InputError(f"{found[0].name} is not in the catalog ({found[0].catalog_note}); "
                         "name it with --gpu ID")
    err_console.print(f"Timing {' '.join(argv)} on {found[0].name} ({gid}) ...")
    seconds = time_command(argv, to_stderr=as_json)
    err_console.print(f"It took {format_duration(seconds)}.")
    return [Measured(get_gpu(gid), seconds, f"{gid}={seconds:.1f}s (timed here)")]


def _print_compare(result) -> None:
    from rich.table import Table

    from whichgpu.units import format_money

    cheaper = result.cheaper
    where = result.prices or "the market prices"
    t = Table(title=f"The same job on each card (costs in {result.currency}, offers from "
                    f"{where})", title_justify="left", pad_edge=False)
    for col in ("Card", "Minutes", "How", "Billed min", "Cost/run", "Offer"):
        t.add_column(col, justify="right" if col in ("Minutes", "Billed min", "Cost/run")
                     else "left", overflow="fold")
    for r in result.rows:
        kind = "measured" if r.measured else "projected"
        name = f"[bold]{r.gpu.id}[/bold]" if r.measured else r.gpu.id
        if cheaper is not None and r is cheaper:
            kind = "measured, [green]cheaper[/green]"
        minutes = "-" if r.minutes is None else f"{r.minutes:,.1f}"
        billed = f"{r.run.billed_s / 60:,.0f}" if r.run else "-"
        cost = format_money(r.cost) if r.cost else "-"
        offer = (f"{r.run.offer.provider} {format_money(r.run.offer.price_per_hour)}/h"
                 if r.run else ("no offer" if r.seconds is not None else r.reason or ""))
        t.add_row(name, minutes, kind, billed, cost, offer)
    console.print(t)
    rules = sorted({f"{r.run.offer.provider}: billed {r.run.offer.billing.describe()}"
                    for r in result.rows if r.run})
    for rule in rules:
        console.print(f"[dim]- {rule}[/dim]")
    for a in result.assumptions:
        console.print(f"[dim]- {a}[/dim]")
