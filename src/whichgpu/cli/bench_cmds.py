"""``whichgpu bench`` (measure the local GPU), ``bench model`` and ``whichgpu compare`` (S30)."""

from __future__ import annotations

import typer

from whichgpu.cli import workload_opts as o
from whichgpu.cli.common import console, emit_json, err_console, note

bench_app = typer.Typer(
    help="Measure this machine's GPUs against their datasheets and save a calibration profile.",
    invoke_without_command=True)

Device = typer.Option("cuda", "--device", help="cuda, or cpu to check the harness on the CPU "
                                                "(CPU numbers calibrate nothing).")
Calibration = typer.Option(None, "--calibration", help="A calibration profile (a JSON file "
                                                       "from 'whichgpu bench', or 'default').")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
    app.command("compare")(compare)


class RichReporter:
    """A progress bar on stderr: one step per measurement."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.progress = None
        self.task = None
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
        if self.progress is None:
            return
        if self.started:
            self.progress.advance(self.task)
        self.started += 1
        self.progress.update(self.task, description=f"measuring {description}")

    def done(self) -> None:
        if self.progress is None:
            return
        self.progress.update(self.task, completed=self.progress.tasks[0].total)
        self.progress.stop()


# ------------------------------------------------------------------ whichgpu bench

@bench_app.callback(invoke_without_command=True)
def bench(
    ctx: typer.Context,
    output: str | None = typer.Option(
        None, "--output", "-o", help="Save the profile here (default: the data directory, "
                                     "which --calibration default reads)."),
    no_save: bool = typer.Option(False, "--no-save", help="Measure and print only."),
    quick: bool = typer.Option(False, "--quick", help="Smaller sizes, fewer repetitions."),
    gpus: str | None = typer.Option(None, "--gpus", help="GPU indices to measure, e.g. 0,1 "
                                                        "(default: all)."),
    as_id: str | None = typer.Option(None, "--as", help="The catalog id of the card, when "
                                                         "its name does not map to one."),
    precisions: str | None = typer.Option(None, "--precision", help="Only these matmul "
                                                                    "precisions: bf16,fp8 ..."),
    no_p2p: bool = typer.Option(False, "--no-p2p", help="Skip peer-to-peer copies."),
    device: str = Device,
    as_json: o.Json = False,
) -> None:
    """Measure each GPU (matmul per precision, memory, host and peer bandwidth), print it beside
    the datasheet, and save a calibration profile for 'speed --calibration'."""
    if ctx.invoked_subcommand is not None:
        return
    from whichgpu.bench import needs
    from whichgpu.bench.detect import GpuInfo
    from whichgpu.bench.run import QUICK, Options, run_bench
    from whichgpu.bench.topology import Topology, read_topology

    opts = QUICK if quick else Options()
    if precisions:
        from dataclasses import replace

        opts = replace(opts, precisions=tuple(p.strip() for p in precisions.split(",")))
    if no_p2p:
        from dataclasses import replace

        opts = replace(opts, p2p=False)
    if device == "cpu":
        torch = needs.import_torch()
        found = [GpuInfo(index=0, name="CPU", source="cpu", catalog_note="the CPU")]
        topo = Topology((0,), source="cpu")
        device_type = "cpu"
    elif device == "cuda":
        torch, found = needs.require_cuda()
        found = _select(found, gpus, as_id)
        topo = read_topology(max(g.index for g in found) + 1)
        keep = {g.index for g in found}
        from dataclasses import replace

        topo = replace(topo, gpus=tuple(i for i in topo.gpus if i in keep),
                       pairs=tuple(p for p in topo.pairs if p.a in keep and p.b in keep))
        device_type = "cuda"
    else:
        from whichgpu.errors import InputError

        raise InputError(f"--device must be cuda or cpu, got {device!r}")
    result = run_bench(torch, found, topo, options=opts, reporter=RichReporter(not as_json),
                       device_type=device_type)
    saved = _save(result, output, no_save or device_type == "cpu")
    if as_json:
        data = result.to_json()
        data["saved_to"] = str(saved) if saved else None
        emit_json(data)
        return
    _print_bench(result, saved, device_type)


def _select(found, gpus: str | None, as_id: str | None):
    from dataclasses import replace

    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.errors import InputError

    if gpus:
        try:
            wanted = {int(x) for x in gpus.split(",") if x.strip()}
        except ValueError:
            raise InputError(f"--gpus takes indices such as 0,1, got {gpus!r}") from None
        missing = wanted - {g.index for g in found}
        if missing:
            raise InputError(f"no GPU {', '.join(map(str, sorted(missing)))} here; this "
                             f"machine has {', '.join(str(g.index) for g in found)}")
        found = [g for g in found if g.index in wanted]
    if as_id:
        gid = resolve_gpu(as_id, strict=True).gpu.id
        found = [replace(g, catalog_id=gid, catalog_note=f"--as {as_id}") for g in found]
    return found


def _save(result, output: str | None, skip: bool):
    from whichgpu.bench.profile import save_profile

    if skip:
        return None
    profile = result.to_profile()
    if not profile["gpus"]:
        note("no measured GPU maps to a catalog card, so no profile was saved; name it with "
             "--as ID")
        return None
    return save_profile(profile, output)


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

@bench_app.command("model")
def bench_model(
    model: o.ModelArg,
    batch: o.Batch = 1,
    prompt_tokens: o.PromptTokens = "512",
    output_tokens: o.OutputTokens = "128",
    train: bool = typer.Option(False, "--train", help="Also time one training step (AdamW, "
                                                      "bf16 autocast)."),
    context: str = typer.Option("1024", "--context", help="Sequence length of the training "
                                                          "step."),
    dtype: str = typer.Option("bf16", "--dtype", help="Weights for prefill/decode: bf16, fp16 "
                                                      "or fp32."),
    repeat: int = typer.Option(3, "--repeat", help="Timed repetitions (the median counts)."),
    gpu: str | None = typer.Option(None, "--gpu", help="Catalog id to estimate for (default: "
                                                       "the card detected)."),
    calibration: str | None = Calibration,
    append: str | None = typer.Option(
        None, "--append", help="Append the results to this folder's speed.csv and memory.csv "
                               "(e.g. validation), with their conditions."),
    device: str = Device,
    as_json: o.Json = False,
) -> None:
    """Build MODEL from its config with random weights (no download), time prefill, decode and
    optionally a training step, and set the numbers beside whichgpu's estimates."""
    from whichgpu.bench import needs
    from whichgpu.bench.model_bench import Settings, append_rows, run_model_bench
    from whichgpu.bench.profile import profile_from_option
    from whichgpu.bench.run import conditions
    from whichgpu.catalog.gpus import resolve_gpu
    from whichgpu.errors import InputError
    from whichgpu.models import resolve_model
    from whichgpu.units import parse_count

    settings = Settings(batch=batch, prompt_tokens=parse_count(prompt_tokens, binary=True),
                        output_tokens=parse_count(output_tokens, binary=True), train=train,
                        train_seq=parse_count(context, binary=True), dtype=dtype, repeat=repeat)
    spec = resolve_model(model)
    from whichgpu.bench.model_bench import check_buildable

    check_buildable(spec)
    profile = profile_from_option(calibration)
    if device == "cpu":
        torch = needs.import_torch("whichgpu bench model")
        found, dev, gpu_id = [], "cpu", None
        if gpu:
            note("--gpu is ignored on the CPU: CPU numbers are not compared with a GPU estimate")
        if append:
            raise InputError("--append records GPU measurements; a CPU run is not one")
    elif device == "cuda":
        torch, found = needs.require_cuda("whichgpu bench model")
        found = sorted(found, key=lambda g: 10**6 if g.cuda_index is None else g.cuda_index)
        dev = f"cuda:{found[0].cuda_index or 0}"
        gpu_id = resolve_gpu(gpu).gpu.id if gpu else found[0].catalog_id
        if gpu_id is None:
            raise InputError(f"{found[0].name} is not in the catalog ({found[0].catalog_note});"
                             " name the card with --gpu ID to compare with its estimate")
        from whichgpu.bench.model_bench import check_fits

        check_fits(torch, dev, spec, settings)
    else:
        raise InputError(f"--device must be cuda or cpu, got {device!r}")
    cond = conditions(torch, found[:1])
    if found:
        cond["gpu_name"] = found[0].name
        if found[0].power_limit_w:
            cond["power_limit_w"] = found[0].power_limit_w
    result = run_model_bench(torch, spec, settings, device=dev, gpu_id=gpu_id, profile=profile,
                             reporter=RichReporter(not as_json), conditions=cond)
    written = append_rows(append, result.rows) if append else []
    if as_json:
        data = result.to_json()
        data["appended"] = written
        emit_json(data)
        return
    _print_model_bench(result, profile)
    if append:
        console.print(f"Appended {len(written)} row(s) to {append}/speed.csv and memory.csv"
                      + (f": {', '.join(written)}" if written else " (all were there already)"))


def _print_model_bench(result, profile) -> None:
    from rich.table import Table

    s = result.settings
    where = result.gpu_id or result.device
    t = Table(title=f"{result.spec.name} on {where}: batch {s.batch}, prompt {s.prompt_tokens}, "
                    f"output {s.output_tokens}" + (f", training {s.train_seq} tokens"
                                                    if s.train else ""),
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

def compare(
    args: list[str] | None = typer.Argument(
        None, metavar="[CARD=DURATION ...] | -- COMMAND",
        help="More CARD=DURATION pairs after --measured, or the command to time after --."),
    measured: list[str] | None = typer.Option(
        None, "--measured", help="Minutes you saw on a card: h100=12m a100=21m (durations "
                                 "like 12m, 1h5m, 90s)."),
    prices: str = typer.Option("article-000", "--prices", help="Offer set or offer file."),
    currency: str | None = typer.Option(None, "--currency", help="Show costs in this "
                                                                 "currency."),
    rate: list[str] | None = typer.Option(None, "--rate", help="Exchange rate override, e.g. "
                                                               "EURUSD=1.08."),
    spot: bool = typer.Option(False, "--spot", help="Spot offers (on-demand by default)."),
    count: int = typer.Option(1, "--count", help="GPUs the job uses on each card."),
    model: str | None = typer.Option(None, "--model", help="The job's model: project the "
                                                           "other cards with the speed model."),
    task: o.Task = "inference", quant: o.Quant = None, batch: o.Batch = 1,
    context: o.Context = None, prompt_tokens: o.PromptTokens = None,
    output_tokens: o.OutputTokens = None, engine: o.Engine = None,
    bound: str = typer.Option("auto", "--bound", help="Without --model: compute (dense BF16 "
                                                      "peak), memory (bandwidth) or auto (fit "
                                                      "both on two measured cards)."),
    gpu: str | None = typer.Option(None, "--gpu", help="With -- COMMAND: the catalog id of "
                                                       "this machine's card, if not detected."),
    no_project: bool = typer.Option(False, "--no-project", help="Only the measured cards."),
    priced_only: bool = typer.Option(False, "--priced-only", help="Only cards with an offer "
                                                                  "in --prices."),
    calibration: str | None = Calibration,
    as_json: o.Json = False,
) -> None:
    """S30: compare the same short job on cards by its minutes and cost per run (billing
    rules included), and project the other cards from the measured one."""
    from whichgpu.bench.compare import compare as run_compare
    from whichgpu.bench.compare import looks_like_pair, parse_measured
    from whichgpu.bench.profile import profile_from_option
    from whichgpu.catalog.offers import get_offers
    from whichgpu.cost.currency import rates_from

    args = list(args or [])
    if measured and args and not all(looks_like_pair(a) for a in args):
        from whichgpu.errors import InputError

        raise InputError("give either --measured CARD=DURATION pairs or a command after --, "
                         "not both")
    if measured or (args and all(looks_like_pair(a) for a in args)):
        pairs = parse_measured([*(measured or []), *args])
    else:
        pairs = _time_here(args, gpu, as_json)
    workload = None
    if model:
        workload = o.build_workload(model, task=task, quant=quant, batch=batch,
                                    context=context, prompt_tokens=prompt_tokens,
                                    output_tokens=output_tokens, engine=engine, gpus=count)
    for p in pairs:
        if p.note:
            note(p.note)
    result = run_compare(pairs, get_offers(prices), prices=prices, currency=currency,
                         rates=rates_from(rate or []), count=count, spot=spot,
                         workload=workload, bound=bound, project=not no_project,
                         profile=profile_from_option(calibration))
    if priced_only:
        result.rows = [r for r in result.rows if r.measured or r.cost is not None]
    if as_json:
        emit_json(result.to_json())
        return
    _print_compare(result)


def _time_here(argv: list[str], gpu: str | None, as_json: bool):
    """Run the command on this machine's GPU and return it as one measured pair."""
    from whichgpu.bench.compare import Measured, time_command
    from whichgpu.bench.detect import BenchUnavailable, detect_gpus
    from whichgpu.catalog.gpus import get_gpu, resolve_gpu
    from whichgpu.errors import InputError
    from whichgpu.units import format_duration

    if not argv:
        raise InputError("give --measured CARD=DURATION pairs (h100=12m a100=21m) or a command "
                         "to time after -- (whichgpu compare -- python train.py)")
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
    t = Table(title=f"The same job on each card (costs in {result.currency}, offers from "
                    f"{result.prices})", title_justify="left", pad_edge=False)
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
